#ifndef ACCORD_STORE_USERS_H
#define ACCORD_STORE_USERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/uuid.h"
#include "store/store.h"

#define ADMIN_USER_ID "230c5c9c-d9a7-11e6-bcfd-bb681c07b26c"
#define DEFAULT_ORG_ID "0fac1b18-d179-11e7-b3e7-d7df4543ed4f"
#define DEFAULT_TEAM_ID "0fac1b18-d179-11e7-b3e7-d7df4543ed4e"
/* The built-in initiator of cron-triggered processes (Concord's "cron" user, its id too). */
#define CRON_USER_ID "1f9ae527-e7ab-42c0-b0e5-0092f9285f22"

/* Global roles (Concord's names). */
enum user_role {
	ROLE_ADMIN = 1 << 0,	     /* concordAdmin */
	ROLE_SYSTEM_READER = 1 << 1, /* concordSystemReader */
	ROLE_SYSTEM_WRITER = 1 << 2, /* concordSystemWriter */
};

struct user {
	char id[UUID_STR_LEN];
	char username[129];
	char domain[129];
	char type[16]; /* LOCAL or LDAP */
	char display_name[257];
	char email[257];
	unsigned roles; /* enum user_role bits */
	bool disabled;
	bool has_password;
	int64_t created_at, updated_at;
};

/* Whether id is a system user: one identity shared by the processes of every project (the
 * cron user).  docs/security.md "Trigger processes" says what it may reach. */
static inline bool user_id_is_system(const char *id)
{
	return strcmp(id, CRON_USER_ID) == 0;
}

/* Role names <-> bits.  Unknown names are ERR_INVALID naming the role. */
int user_roles_parse(const char *const *names, size_t n, unsigned *out, struct err *e) WUR;
/* Writes the JSON array text of role names (e.g. ["concordAdmin"]) into out. */
void user_roles_format(unsigned roles, char *out, size_t cap);

/* The columns store_user_read expects, in order, for SELECTs of other modules that join
 * users (prefix them with an alias: USER_COLS_OF("u")). */
#define USER_COLS_OF(t)                                                                                                \
	t ".id, " t ".username, " t ".user_domain, " t ".user_type, " t ".display_name, " t ".email, " t ".roles, " t  \
	  ".disabled, " t ".password_hash IS NOT NULL, " t ".created_at, " t ".updated_at"
#define USER_COLS USER_COLS_OF("users")
#define USER_N_COLS 11
/* Reads a user from the USER_N_COLS columns of st's row starting at column first. */
void store_user_read(struct store_stmt *st, int first, struct user *u);

/* Lookups fail with ERR_NOT_FOUND "User not found: <x>". */
int store_user_get(struct store_conn *c, const char *id, struct user *u, struct err *e) WUR;
/* domain NULL matches any domain; several matches are ERR_CONFLICT asking for the domain.
 * Usernames compare case-insensitively. */
int store_user_find(struct store_conn *c, const char *username, const char *domain, struct user *u, struct err *e) WUR;
/* Password hash of a user (Argon2id string) into out; ERR_NOT_FOUND when none is set. */
int store_user_password_hash(struct store_conn *c, const char *id, char *out, size_t cap, struct err *e) WUR;

/* The users that are not disabled whose name, display name or email contains filter
 * (case-insensitive for ASCII; NULL: all), by name: a new array (caller frees) of *n. */
int store_user_list(struct store_conn *c, const char *filter, size_t offset, size_t limit, struct user **out, size_t *n,
		    struct err *e) WUR;

/* Insert (u->id filled by the caller), update of every field, delete.  Insert of a taken
 * name is ERR_CONFLICT.  password_hash NULL leaves it unchanged on update. */
int store_user_insert(struct store_conn *c, const struct user *u, const char *password_hash, struct err *e) WUR;
int store_user_update(struct store_conn *c, const struct user *u, const char *password_hash, struct err *e) WUR;
int store_user_delete(struct store_conn *c, const char *id, struct err *e) WUR;
/* store_user_insert and, as Concord adds every new user, a MEMBER of the Default org's team
 * `default` when that team still exists: one transaction. */
int store_user_insert_joining_default(struct store_conn *c, const struct user *u, const char *password_hash,
				      struct err *e) WUR;

/* Incremented on every change of any user in this process (for credential caches). */
uint64_t store_user_generation(void);

#endif
