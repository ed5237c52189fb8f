#ifndef ACCORD_STORE_ORGS_H
#define ACCORD_STORE_ORGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/projects.h"
#include "store/store.h"
#include "store/teams.h"

/* Organizations: the containers every other resource lives in.  Teams and projects have
 * their own headers (included here, so `store/orgs.h` gives all three). */

struct org {
	char id[UUID_STR_LEN];
	char name[129];
	char visibility[16];	     /* PUBLIC or PRIVATE */
	char owner_id[UUID_STR_LEN]; /* "" when none */
	char owner_username[129];    /* "" when none */
	int64_t created_at;
};

/* Lookups fail with ERR_NOT_FOUND naming the missing thing ("Organization not found: x"). */
int store_org_get(struct store_conn *c, const char *id, struct org *o, struct err *e) WUR;
int store_org_find(struct store_conn *c, const char *name, struct org *o, struct err *e) WUR;
/* For a join in another store file: reads an org from the columns id, name, visibility,
 * owner_id, the owner's username and created_at of st, in this order from column col. */
void store_org_read(struct store_stmt *st, int col, struct org *o);

/* The org's meta and cfg JSON texts: new strings (caller frees), NULL when unset. */
int store_org_meta_cfg(struct store_conn *c, const char *id, char **meta, char **cfg, struct err *e) WUR;

struct org_query {
	const char *user_id;  /* NULL: every org; else only orgs this user owns or is in a team of */
	bool include_public;  /* with user_id: PUBLIC orgs as well */
	const char *name_has; /* NULL or a case-insensitive substring of the name */
	size_t limit, offset;
};
/* Orgs sorted by name: new array (caller frees) of *n entries. */
int store_org_list(struct store_conn *c, const struct org_query *q, struct org **out, size_t *n, struct err *e) WUR;

/* Insert (o->id and o->created_at filled by the caller) and update of name, visibility
 * and owner (owner_id "" clears it).  meta and cfg are JSON texts; on update NULL keeps
 * the stored value.  A taken name is ERR_CONFLICT "Organization already exists: x". */
int store_org_insert(struct store_conn *c, const struct org *o, const char *meta, const char *cfg, struct err *e) WUR;
int store_org_update(struct store_conn *c, const struct org *o, const char *meta, const char *cfg, struct err *e) WUR;
/* Deletes the org with its teams, memberships, projects and the access rules of its
 * projects (other tables cascade from orgs).  Several statements: call it inside a
 * transaction.  ERR_NOT_FOUND when there is no such org. */
int store_org_delete(struct store_conn *c, const char *id, struct err *e) WUR;

/* A LIKE pattern ("%<s>%", lower-cased, with % _ \ escaped) for a name filter into out
 * (cap >= 2 * strlen(s) + 3); shared by the list functions of orgs, teams and projects. */
void store_like_pattern(const char *s, char *out, size_t cap);

#endif
