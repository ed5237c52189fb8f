#ifndef ACCORD_STORE_REPOSITORIES_H
#define ACCORD_STORE_REPOSITORIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/store.h"

/* Repositories of a project (schema/011_repositories.sql, issue 13).  The clone itself is
 * on disk (repo/repo.h); the row keeps the configuration and when it was last fetched. */

struct repository {
	char id[UUID_STR_LEN];
	char project_id[UUID_STR_LEN];
	char project_name[129];
	char org_id[UUID_STR_LEN];
	char org_name[129];
	char name[129];
	char url[2049];
	char branch[256];	      /* "" when unset */
	char commit_id[41];	      /* "" when unset (hex, full length) */
	char path[1025];	      /* "" when unset: the repository's root */
	char secret_id[UUID_STR_LEN]; /* "" when none */
	char secret_name[129];	      /* "" when none */
	bool disabled;
	bool triggers_disabled;
	int64_t created_at;
	int64_t fetched_at;	    /* 0: never fetched */
	char fetched_commit[41];    /* "" when never fetched */
};

/* By id, or by project id and name: ERR_NOT_FOUND "Repository not found: <x>". */
int store_repository_get(struct store_conn *c, const char *id, struct repository *r, struct err *e) WUR;
int store_repository_find(struct store_conn *c, const char *project_id, const char *name, struct repository *r,
			  struct err *e) WUR;
/* Every repository of a project sorted by name (NULL project_id: every repository of the
 * store, for the trigger scheduler at start-up): new array (caller frees) of *n entries. */
int store_repository_list(struct store_conn *c, const char *project_id, struct repository **out, size_t *n,
			  struct err *e) WUR;

/* Insert (id and created_at filled by the caller) and update of every configuration field
 * (name, url, branch, commit_id, path, secret_id, disabled, triggers_disabled).  A name
 * taken in the project is ERR_CONFLICT "Repository already exists: <name>". */
int store_repository_insert(struct store_conn *c, const struct repository *r, struct err *e) WUR;
int store_repository_update(struct store_conn *c, const struct repository *r, struct err *e) WUR;
/* Deletes the repository and its triggers.  ERR_NOT_FOUND when absent. */
int store_repository_delete(struct store_conn *c, const char *id, struct err *e) WUR;

/* The repository's meta (a JSON object text): new string (caller frees), NULL when unset;
 * and its replacement (NULL clears it). */
int store_repository_meta(struct store_conn *c, const char *id, char **meta, struct err *e) WUR;
int store_repository_set_meta(struct store_conn *c, const char *id, const char *meta, struct err *e) WUR;

/* Records a successful fetch: fetched_at and the configured ref's commit.  A repository not
 * stored yet (a create fetches before it stores) is no error: nothing changes. */
int store_repository_fetched(struct store_conn *c, const char *id, int64_t at, const char *commit, struct err *e) WUR;

#endif
