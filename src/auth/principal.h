#ifndef ACCORD_AUTH_PRINCIPAL_H
#define ACCORD_AUTH_PRINCIPAL_H

#include <stdbool.h>

#include "base/uuid.h"
#include "store/console_sessions.h"
#include "store/users.h"

/* AUTH_SESSION: a process's session token; AUTH_CONSOLE: a console session cookie. */
enum auth_method { AUTH_NONE = 0, AUTH_BASIC, AUTH_APIKEY, AUTH_SESSION, AUTH_CONSOLE };

/* Who is making a request: the user row as read at authentication time, and how they
 * proved it. */
struct principal {
	struct user user;
	enum auth_method method;
	char apikey_id[UUID_STR_LEN];	    /* when method is AUTH_APIKEY */
	char session_process[UUID_STR_LEN]; /* when method is AUTH_SESSION: the process whose token it is */
	char csrf_token[CONSOLE_CSRF_MAX];  /* when method is AUTH_CONSOLE: the session's CSRF token */
};

static inline bool principal_is_admin(const struct principal *p)
{
	return (p->user.roles & ROLE_ADMIN) != 0;
}

#endif
