#ifndef ACCORD_STORE_PROJECTS_H
#define ACCORD_STORE_PROJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/store.h"

/* Projects of an organization.  Their team access rules live in resource_access
 * (store/access.h) with resource type "PROJECT". */

struct project {
	char id[UUID_STR_LEN];
	char org_id[UUID_STR_LEN];
	char org_name[129];
	char name[129];
	char description[1025];
	char visibility[16];	     /* PUBLIC or PRIVATE */
	char raw_payload_mode[32];   /* DISABLED, OWNERS, TEAM_MEMBERS, ORG_MEMBERS, EVERYONE */
	char out_variables_mode[32]; /* who may name out variables at start: the same modes */
	char owner_id[UUID_STR_LEN]; /* "" when none */
	char owner_username[129];    /* "" when none */
	int64_t created_at;
};

/* Lookups fail with ERR_NOT_FOUND "Project not found: <x>". */
int store_project_get(struct store_conn *c, const char *id, struct project *p, struct err *e) WUR;
int store_project_find(struct store_conn *c, const char *org_id, const char *name, struct project *p,
		       struct err *e) WUR;
/* The project's meta and cfg JSON texts: new strings (caller frees), NULL when unset. */
int store_project_meta_cfg(struct store_conn *c, const char *id, char **meta, char **cfg, struct err *e) WUR;

/* Every project of the org whose name contains name_has (case-insensitive; NULL: all),
 * sorted by name: new array (caller frees) of *n entries.  Callers filter by access. */
int store_project_list(struct store_conn *c, const char *org_id, const char *name_has, struct project **out, size_t *n,
		       struct err *e) WUR;

/* Insert (id, org_id and created_at filled by the caller) and update of name,
 * description, visibility, raw payload and out variables modes, owner and org (a move).  meta and cfg are JSON texts;
 * on update NULL keeps the stored value.  A name taken in the org is ERR_CONFLICT. */
int store_project_insert(struct store_conn *c, const struct project *p, const char *meta, const char *cfg,
			 struct err *e) WUR;
int store_project_update(struct store_conn *c, const struct project *p, const char *meta, const char *cfg,
			 struct err *e) WUR;
/* Replaces the project's cfg (JSON text; NULL clears it).  ERR_NOT_FOUND when there is no
 * such project. */
int store_project_cfg_set(struct store_conn *c, const char *id, const char *cfg, struct err *e) WUR;
/* Deletes the project and its access rules; its processes stay, without a project (several
 * statements: call it inside a transaction).  ERR_NOT_FOUND when there is no such project. */
int store_project_delete(struct store_conn *c, const char *id, struct err *e) WUR;

#endif
