#ifndef ACCORD_QUEUE_TASK_SECRET_H
#define ACCORD_QUEUE_TASK_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "auth/principal.h"
#include "base/err.h"
#include "queue/tasks/server_tasks.h"
#include "store/orgs.h"
#include "store/secrets.h"

/* Secrets of the store used by server tasks (crypto, concordSecrets) as the process's
 * initiator, with the rules of the API (api/secrets*.c, docs/api.md "Secrets"). */

/* The initiator of tc's process as a principal acting from that process (its session:
 * rbac sees the process's project).  ERR_FORBIDDEN when the process has none or it is
 * disabled. */
int task_initiator(struct task_call *tc, struct principal *who, struct err *e) WUR;

/* The organization named org (NULL: the process's own) with the initiator's membership
 * checked (ERR_FORBIDDEN), as creating a secret through the API needs. */
int task_secret_org(struct task_call *tc, const struct principal *who, const char *org, struct org *o,
		    struct err *e) WUR;

/* The secret name of org (NULL: the process's own) that the process may use at level:
 * the initiator's access (auth/rbac.c, as the API) and, with use, the project restriction
 * (a process of one of the secret's projects only).  ERR_NOT_FOUND, ERR_FORBIDDEN. */
int task_secret_find(struct task_call *tc, const char *org, const char *name, enum access_level level, bool use,
		     struct secret *s, struct err *e) WUR;

/* Decrypts s with its store password (NULL for none; Concord's messages when missing,
 * unexpected or wrong) and marks the password sensitive.  *pt is released with
 * payload_free. */
int task_secret_open(struct task_call *tc, const struct secret *s, const char *password, unsigned char **pt,
		     size_t *pt_len, struct err *e) WUR;

/* Projects of o named by projects (NULL, a name or a list of names; ids when by_id), each
 * READER-checked for who, without repeats: new array in *ps (caller frees; it may be
 * non-NULL on failure too).  ERR_INVALID "Project not found: x". */
int task_secret_projects(struct task_call *tc, const struct principal *who, const struct org *o, json_t *projects,
			 bool by_id, struct secret_project **ps, size_t *n, struct err *e) WUR;

/* A new secret.  Every pointer is borrowed. */
struct task_secret_new {
	const char *org;	    /* NULL: the process's organization */
	const char *name;	    /* checked as the API checks it */
	const char *store_password; /* NULL: sealed with the server's key, unless generate_password */
	bool generate_password;
	const char *visibility; /* "PUBLIC" (NULL) or "PRIVATE" */
	json_t *projects;	/* NULL, one project name, or a list of names, of the organization */
	enum secret_type type;
	const unsigned char *pt; /* the value in Concord's layout (crypto/payload.h) */
	size_t pt_len;
};

/* Creates n as the initiator: a member of the organization, READER of each project; the
 * store password checked against the policy.  *password is the store password used (the
 * generated or the given one; new string, wiped and freed by the caller with
 * task_secret_password_free) or NULL; *id the new secret's id.  ERR_CONFLICT for a taken
 * name, ERR_INVALID for bad input.  Nothing is stored on failure. */
int task_secret_create(struct task_call *tc, const struct task_secret_new *n, char id[UUID_STR_LEN], char **password,
		       struct err *e) WUR;
void task_secret_password_free(char *password);

#endif
