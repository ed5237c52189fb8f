#ifndef ACCORD_STORE_SECRETS_H
#define ACCORD_STORE_SECRETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/store.h"

/* Secret rows (schema/002_secrets.sql).  The store keeps metadata and the sealed envelope
 * only; sealing and opening happen in crypto/ (called by api/secrets.c).  Team rules are
 * in resource_access under SECRET_RESOURCE. */

#define SECRET_RESOURCE "SECRET"

enum secret_type { SECRET_TYPE_KEY_PAIR = 1, SECRET_TYPE_USERNAME_PASSWORD, SECRET_TYPE_DATA };

/* "KEY_PAIR", "USERNAME_PASSWORD", "DATA". */
const char *secret_type_name(enum secret_type t);
/* Case-insensitive; false when unknown. */
bool secret_type_parse(const char *s, size_t len, enum secret_type *out);

struct secret {
	char id[UUID_STR_LEN];
	char org_id[UUID_STR_LEN];
	char org_name[129];
	char name[129];
	enum secret_type type;
	bool password_protected; /* encrypted_by PASSWORD (else SERVER_KEY) */
	char store_type[32];
	bool is_public;		     /* visibility PUBLIC (else PRIVATE) */
	char owner_id[UUID_STR_LEN]; /* "" when none */
	char owner_name[129];
	size_t n_projects; /* projects it is restricted to (secret_projects); 0: not restricted */
	int64_t created_at;
	int64_t updated_at; /* 0 until the data changes */
};

/* A project a secret is restricted to (schema/019_secret_projects.sql). */
struct secret_project {
	char id[UUID_STR_LEN];
	char name[129];
};

/* At most this many projects per secret (a longer list is refused by the API). */
#define SECRET_PROJECTS_MAX 256

/* Inserts s with its envelope and its n projects (ids of projects of s's org, checked by
 * the caller), in one transaction.  A taken (org, name) is ERR_CONFLICT
 * "Secret already exists: <name>". */
int store_secret_insert(struct store_conn *c, const struct secret *s, const struct secret_project *projects, size_t n,
			const void *env, size_t env_len, struct err *e) WUR;

/* The projects of a secret sorted by name: new array in *out (caller frees; NULL when none). */
int store_secret_projects(struct store_conn *c, const char *secret_id, struct secret_project **out, size_t *n,
			  struct err *e) WUR;

/* For messages: "project 'a'" or "projects 'a', 'b'" (cut to cap) naming s's projects;
 * "other projects" when they cannot be read. */
void store_secret_projects_text(struct store_conn *c, const struct secret *s, char *buf, size_t cap);

/* Whether a process of project_id ("" or NULL: none) may use s: s is restricted to no
 * project, or project_id is one of its projects. */
int store_secret_project_allowed(struct store_conn *c, const struct secret *s, const char *project_id, bool *ok,
				 struct err *e) WUR;

/* By org id and name; ERR_NOT_FOUND "Secret not found: <name>". */
int store_secret_find(struct store_conn *c, const char *org_id, const char *name, struct secret *s, struct err *e) WUR;

/* By id; ERR_NOT_FOUND "Secret not found: <id>". */
int store_secret_get(struct store_conn *c, const char *id, struct secret *s, struct err *e) WUR;

/* The sealed envelope of a secret: new buffer (caller frees). */
int store_secret_envelope(struct store_conn *c, const char *id, unsigned char **env, size_t *env_len,
			  struct err *e) WUR;
/* The envelope of s (by id), read together with the name and org it is sealed for: a
 * secret renamed or moved since s was read is ERR_CONFLICT (its envelope is now sealed for
 * the new name, so decrypting it with s's would fail as if the password were wrong), a
 * deleted one ERR_NOT_FOUND.  New buffer (caller frees). */
int store_secret_envelope_of(struct store_conn *c, const struct secret *s, unsigned char **env, size_t *env_len,
			     struct err *e) WUR;

/* Writes every metadata field of s (org, name, type, encrypted_by, visibility, owner,
 * updated_at), when set_projects its projects (replaced by the n given; n 0 removes the
 * restriction) and, when env is not NULL, the envelope; clear_rules also removes the
 * secret's team rules (after a move to another organization).  One transaction.  A taken
 * (org, name) is ERR_CONFLICT; a missing row ERR_NOT_FOUND. */
int store_secret_update(struct store_conn *c, const struct secret *s, bool set_projects,
			const struct secret_project *projects, size_t n, const void *env, size_t env_len,
			bool clear_rules, struct err *e) WUR;

/* Deletes the secret and its team rules (one transaction).  ERR_NOT_FOUND when absent. */
int store_secret_delete(struct store_conn *c, const char *id, struct err *e) WUR;

/* A page of the org's secrets sorted by name.  filter (NULL or "" for all) keeps names
 * containing it, ASCII case-insensitively.  Unless see_all, only secrets the user may read
 * are listed: PUBLIC ones, the user's own, and those a team of the user has a rule on.
 * New array in *out (caller frees). */
int store_secret_list(struct store_conn *c, const char *org_id, const char *user_id, bool see_all, const char *filter,
		      size_t limit, size_t offset, struct secret **out, size_t *n, struct err *e) WUR;

/* Calls fn for every server-key envelope (for master-key rotation).  fn may change the
 * envelope in place (same length) and sets *changed; changed envelopes are written back.
 * All in one transaction: either every envelope is rewritten or none.  fn returning < 0
 * aborts.  *n_changed counts rewritten rows. */
typedef int (*store_secret_envelope_fn)(void *ctx, unsigned char *env, size_t env_len, bool *changed, struct err *e);
int store_secret_rewrite_envelopes(struct store_conn *c, store_secret_envelope_fn fn, void *ctx, size_t *n_changed,
				   struct err *e) WUR;

#endif
