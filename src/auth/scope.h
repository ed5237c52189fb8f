#ifndef ACCORD_AUTH_SCOPE_H
#define ACCORD_AUTH_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/uuid.h"

/* The scopes of an API key (docs/security.md "Scoped API keys"): what the key may be used
 * for, as resource:action, optionally narrowed to an organization or a project:
 *   process:start   secret:read   inventory:*   process:read@Default/myproject
 * A key without scopes has its user's full rights; a key with scopes has at most its user's
 * rights (every access check still runs) and only for what one of its scopes names.
 *
 * Vocabulary: the resources below × read, write, start (processes only) and * (any). */
enum scope_resource {
	SCOPE_ORG,
	SCOPE_TEAM,
	SCOPE_PROJECT,
	SCOPE_REPOSITORY,
	SCOPE_SECRET,
	SCOPE_INVENTORY,
	SCOPE_JSONSTORE,
	SCOPE_PROCESS,
	SCOPE_TRIGGER,
	SCOPE_USER,
	SCOPE_APIKEY,
	SCOPE_AUDIT,
	SCOPE_RES__COUNT
};
enum scope_action { SCOPE_READ, SCOPE_WRITE, SCOPE_START, SCOPE_ANY, SCOPE_ACT__COUNT };

/* How far a resource may be narrowed: not at all, to an org, or to an org's project. */
enum scope_reach { SCOPE_REACH_NONE, SCOPE_REACH_ORG, SCOPE_REACH_PROJECT };

#define SCOPE_MAX 16	   /* scopes per key */
#define SCOPE_TEXT_MAX 300 /* "resource:action@org/project" */

struct scope {
	enum scope_resource resource;
	enum scope_action action;
	char org_id[UUID_STR_LEN];     /* "": not narrowed */
	char project_id[UUID_STR_LEN]; /* "": not narrowed to a project */
	char text[SCOPE_TEXT_MAX];     /* as given, for answers and messages */
};

struct scope_set {
	size_t n; /* 0: no scopes, the user's full rights */
	struct scope s[SCOPE_MAX];
};

/* What a request needs (api/route_scopes.c): resource and action (never SCOPE_ANY). */
struct scope_need {
	bool set; /* false: nothing asked (an unscoped key, a public route) */
	enum scope_resource resource;
	enum scope_action action;
};

/* Where an access check looks: an org as a whole (ORG_VIEW: only to see it, which a
 * narrowing to one of its projects allows too), or a project of an org. */
enum scope_at { SCOPE_AT_ORG_VIEW, SCOPE_AT_ORG, SCOPE_AT_PROJECT };

/* Parses the text of one scope: its resource and action into *out (ids left empty, text
 * copied), the names it is narrowed to into org and project ("" when absent; slices of
 * text, NUL-terminated copies of at most cap bytes).  ERR_INVALID with a message naming
 * the scope and what is wrong (unknown resource or action, start on another resource than
 * process, a narrowing the resource does not take). */
int scope_parse(const char *text, struct scope *out, char *org, char *project, size_t cap, struct err *e) WUR;

/* The scope set as stored (new string, caller frees; NULL for an empty set or out of
 * memory) and back.  scope_set_load: ERR_INTERNAL for a stored text that is not valid. */
char *scope_set_dump(const struct scope_set *set);
int scope_set_load(const char *stored, struct scope_set *out, struct err *e) WUR;

/* Whether scope `have` allows everything scope `want` does (creating a key from a scoped
 * key: the new key's scopes must each be covered by one of the caller's). */
bool scope_covers(const struct scope *have, const struct scope *want);

/* The first scope of set that allows need (ignoring narrowing); NULL when none. */
const struct scope *scope_find(const struct scope_set *set, const struct scope_need *need);

/* Whether the narrowing of the scopes that allow need lets the request reach org_id (and
 * project_id, for SCOPE_AT_PROJECT).  True for an empty set or an unset need.  On false,
 * e is ERR_FORBIDDEN naming the scope that does not reach (what = "project Default/p"). */
bool scope_reaches(const struct scope_set *set, const struct scope_need *need, enum scope_at at, const char *org_id,
		   const char *project_id, const char *what, struct err *e);

/* Whether every scope of set that allows need is narrowed: to an org or a project, or with
 * project_only to a project (a list across orgs, or of an org's projects, would show more
 * than the key reaches). */
bool scope_narrowed(const struct scope_set *set, const struct scope_need *need, bool project_only);

const char *scope_resource_name(enum scope_resource r);
const char *scope_action_name(enum scope_action a);

#endif
