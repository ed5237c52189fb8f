#ifndef ACCORD_AUTH_PRINCIPAL_H
#define ACCORD_AUTH_PRINCIPAL_H

#include <stdbool.h>
#include <string.h>

#include "auth/scope.h"
#include "base/uuid.h"
#include "store/console_sessions.h"
#include "store/users.h"

/* AUTH_SESSION: a process's session token; AUTH_CONSOLE: a console session cookie; AUTH_OIDC: a
 * bearer token of the OpenID provider (auth/oidc.h). */
enum auth_method { AUTH_NONE = 0, AUTH_BASIC, AUTH_APIKEY, AUTH_SESSION, AUTH_CONSOLE, AUTH_OIDC };

/* Who is making a request: the user row as read at authentication time, and how they
 * proved it. */
struct principal {
	struct user user;
	enum auth_method method;
	char apikey_id[UUID_STR_LEN];	    /* when method is AUTH_APIKEY */
	char session_process[UUID_STR_LEN]; /* when method is AUTH_SESSION: the process whose token it is */
	char session_project[UUID_STR_LEN]; /* when method is AUTH_SESSION: that process's project ("": none) */
	char csrf_token[CONSOLE_CSRF_MAX];  /* when method is AUTH_CONSOLE: the session's CSRF token */
	/* When method is AUTH_APIKEY: the key's scopes (none: the user's full rights) and rate
	 * limit (rate_count 0: none); need is what the request's route asks of the scopes, set by
	 * the dispatcher (api/route_scopes.c), and the access checks (rbac.c, api/process_access.c)
	 * hold the org/project they look at against it. */
	struct scope_set scopes;
	struct scope_need need;
	int64_t rate_count, rate_window_ms;
	/* The permissions of the user's roles (store/roles.h enum permission bits), and the
	 * built-in roles held through LDAP groups added to user.roles: rbac_grants_load. */
	unsigned perms;
};

static inline bool principal_is_admin(const struct principal *p)
{
	return (p->user.roles & ROLE_ADMIN) != 0;
}

/* Whether a caller acts within project_id (NULL or "": no project).  Every user does; a
 * system user (store/users.h: the cron user, one identity for the trigger processes of every
 * project) only from the session of a process of that very project: it stands for that
 * project's triggers, never for another's. */
static inline bool principal_acts_in(const struct principal *p, const char *project_id)
{
	if (!user_id_is_system(p->user.id))
		return true;
	return p->method == AUTH_SESSION && p->session_project[0] && project_id &&
	       strcmp(p->session_project, project_id) == 0;
}

/* Whether user_id, acting from a process of from_project (NULL: not from a process), counts
 * as the initiator of a process started by initiator_id in project_id: the same user, and
 * for a system user the same project too.  The one "same initiator" rule of the API
 * (api/process_access.c, the process list) and of the concord task. */
static inline bool initiator_reaches(const char *user_id, const char *from_project, const char *initiator_id,
				     const char *project_id)
{
	if (!user_id[0] || strcmp(user_id, initiator_id) != 0)
		return false;
	if (!user_id_is_system(user_id))
		return true;
	return from_project && from_project[0] && project_id && strcmp(from_project, project_id) == 0;
}

static inline bool principal_initiated(const struct principal *p, const char *initiator_id, const char *project_id)
{
	return initiator_reaches(p->user.id, p->method == AUTH_SESSION ? p->session_project : NULL, initiator_id,
				 project_id);
}

#endif
