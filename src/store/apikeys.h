#ifndef ACCORD_STORE_APIKEYS_H
#define ACCORD_STORE_APIKEYS_H

#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/store.h"
#include "store/users.h"

#define APIKEY_HASH_LEN 32 /* SHA-256 of the decoded key bytes */
#define APIKEY_SCOPES_MAX 4096

struct apikey {
	char id[UUID_STR_LEN];
	char user_id[UUID_STR_LEN];
	char name[129];
	int64_t expired_at; /* 0: never expires */
	int64_t created_at;
	/* The key's scopes as stored (JSON written by auth/scope.c); "": a key with its user's
	 * full rights.  Never longer than APIKEY_SCOPES_MAX - 1. */
	char scopes[APIKEY_SCOPES_MAX];
	int64_t rate_count; /* requests per rate_window_ms; 0: no limit */
	int64_t rate_window_ms;
};

/* A duplicate name for the user, or a colliding key value, is ERR_CONFLICT. */
int store_apikey_insert(struct store_conn *c, const struct apikey *k, const uint8_t hash[APIKEY_HASH_LEN],
			struct err *e) WUR;
/* Replaces the key value (hash) of key id: the old value stops working at once.
 * ERR_NOT_FOUND when absent, ERR_CONFLICT when the value is another key's. */
int store_apikey_set_hash(struct store_conn *c, const char *id, const uint8_t hash[APIKEY_HASH_LEN], struct err *e) WUR;
/* ERR_NOT_FOUND "API key not found: <id>". */
int store_apikey_get(struct store_conn *c, const char *id, struct apikey *k, struct err *e) WUR;
int store_apikey_delete(struct store_conn *c, const char *id, struct err *e) WUR;
/* The user's keys sorted by name: new array (caller frees) of *n entries. */
int store_apikey_list(struct store_conn *c, const char *user_id, struct apikey **out, size_t *n, struct err *e) WUR;
/* The key with this hash that has not expired at now_ms; ERR_NOT_FOUND otherwise. */
int store_apikey_find_hash(struct store_conn *c, const uint8_t hash[APIKEY_HASH_LEN], int64_t now_ms, struct apikey *k,
			   struct err *e) WUR;

/* Authentication in one query: the unexpired key with this hash and its user. */
int store_apikey_find_user(struct store_conn *c, const uint8_t hash[APIKEY_HASH_LEN], int64_t now_ms, struct apikey *k,
			   struct user *u, struct err *e) WUR;

#endif
