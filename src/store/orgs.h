#ifndef ACCORD_STORE_ORGS_H
#define ACCORD_STORE_ORGS_H

#include <stdint.h>

#include "base/uuid.h"
#include "store/store.h"

/* Organizations, teams and projects: the containers every other resource lives in. */

struct org {
	char id[UUID_STR_LEN];
	char name[129];
	char visibility[16];	     /* PUBLIC or PRIVATE */
	char owner_id[UUID_STR_LEN]; /* "" when none */
	int64_t created_at;
};

struct team {
	char id[UUID_STR_LEN];
	char org_id[UUID_STR_LEN];
	char name[129];
	char description[1025];
};

struct project {
	char id[UUID_STR_LEN];
	char org_id[UUID_STR_LEN];
	char name[129];
	char description[1025];
	char visibility[16];	   /* PUBLIC or PRIVATE */
	char raw_payload_mode[32]; /* DISABLED, OWNERS, TEAM_MEMBERS, ORG_MEMBERS, EVERYONE */
	char owner_id[UUID_STR_LEN];
	int64_t created_at;
};

/* Lookups fail with ERR_NOT_FOUND naming the missing thing ("Organization not found: x"). */
int store_org_get(struct store_conn *c, const char *id, struct org *o, struct err *e) WUR;
int store_org_find(struct store_conn *c, const char *name, struct org *o, struct err *e) WUR;
int store_team_get(struct store_conn *c, const char *id, struct team *t, struct err *e) WUR;
int store_team_find(struct store_conn *c, const char *org_id, const char *name, struct team *t, struct err *e) WUR;
int store_project_get(struct store_conn *c, const char *id, struct project *p, struct err *e) WUR;
int store_project_find(struct store_conn *c, const char *org_id, const char *name, struct project *p,
		       struct err *e) WUR;

#endif
