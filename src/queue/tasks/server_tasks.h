#ifndef ACCORD_QUEUE_SERVER_TASKS_H
#define ACCORD_QUEUE_SERVER_TASKS_H

#include <stdbool.h>

#include <jansson.h>

#include "auth/principal.h"
#include "base/err.h"
#include "queue/internal.h"
#include "store/store.h"

/* The server half of the tasks a flow calls through its runner's host (DESIGN.md §2):
 * the runner sends {"type":"task", id, task, method?, args}; its supervisor finds the
 * task here and answers {"type":"task_result", id, out | error, suspend?, sensitive?}.
 * Every handler checks the rights of the process's initiator itself (the process acts as
 * its initiator, within its own org/project). One file per task: server_task_<name>.c. */

struct docker_job;

struct task_call {
	/* In (BORROWED). */
	struct running *r;	/* the calling process (r->p: org, project, initiator, id) */
	struct store_conn *c;	/* the supervisor's connection */
	const char *workdir;	/* the process's working directory (absolute) */
	const char *task;	/* "kv", "crypto", "concord", … */
	const char *method;	/* NULL for a `task:` step (args is then the `in` object) */
	json_t *args;		/* the `in` object, or the array of method arguments */
	bool suspendable;	/* the calling thread may suspend (not a script's call) */
	/* Out (owned by the call; the supervisor sends and releases them). */
	json_t *out;		/* the result (NULL: null) */
	char *suspend;		/* malloc'd: the calling thread suspends waiting for this event;
				 * out is then what the task's method "resume" gets back when
				 * the thread resumes (flow/host.h) */
	json_t *sensitive;	/* array of strings the runner masks as ****** in the log */
	struct docker_job *job; /* the answer comes when this ends: the supervisor drives it
				 * (queue/tasks/docker_job.h) and answers with its result */
	json_t *wait;		/* the answer comes later: the supervisor keeps serving its runner
				 * and re-checks with children_wait_check (queue/end/children.h) when a
				 * process ends and every second, then answers with its result */
};

typedef int (*server_task_fn)(struct task_call *tc, struct err *e);

/* Adds a string the runner must mask (sensitive values: decrypted secrets). */
void task_call_sensitive(struct task_call *tc, const char *value);

/* The sensitive values the process received so far (the sealed list of the store), as a
 * new JSON array (NULL when none or on error, which is logged): the start frame of a
 * resumed runner carries them so it keeps masking them. */
json_t *task_sensitive_load(struct store_conn *c, struct running *r);
/* Adds strings (a JSON array: a task's sensitive values, or the {"type":"sensitive"}
 * frame of a runner whose flow marked values with sensitive()) to that sealed list. */
void task_sensitive_add(struct store_conn *c, struct running *r, json_t *values);

/* A request to this server's own API (queue_cfg.self_url) as the calling process's
 * initiator, with the process's session token (as Concord's tasks call their server):
 * method and path ("/api/v1/…", its segments escaped), body a JSON object or NULL.  0 with
 * *status and *answer (NEW, NULL when not JSON) set; ERR_UNAVAILABLE when the API cannot
 * be reached.  Blocks up to two minutes (queue/tasks/api_client.h). */
int task_call_api(struct task_call *tc, const char *method, const char *path, json_t *body, long *status,
		  json_t **answer, struct err *e) WUR;

/* The calling process's initiator (or, after a form with runAs.keep, who submitted it)
 * acting from it, as its session token would authenticate (method AUTH_SESSION,
 * session_process and session_project set, scopes those of the process: task_scopes_load). */
int task_call_principal(struct task_call *tc, struct principal *who, struct err *e) WUR;

/* The scopes the calling process is held to (store/process_scopes.h: the API key's it was
 * started with; none for a process started otherwise). */
int task_scopes_load(struct task_call *tc, struct scope_set *out, struct err *e) WUR;

/* Holds who to its scopes for resource:action, as the API's route table holds a request
 * (docs/security.md "Scoped API keys"): 0 when it has none or one allows it (who->need then
 * set, so that the access checks apply their narrowing), else ERR_FORBIDDEN naming the
 * scope missing. */
int task_scope_need(struct principal *who, enum scope_resource r, enum scope_action a, struct err *e) WUR;

/* The id of the user the calling process acts for: who submitted a form with runAs.keep
 * (into buf), else its initiator (BORROWED from tc); "" when it has none. */
const char *task_call_user_id(struct task_call *tc, char buf[UUID_STR_LEN]);

/* Whether the calling process runs in dry-run mode (its _main.json, queue/start_frame.c). */
bool task_call_dry_run(struct task_call *tc);

/* Runs tc->task: 0 with the out fields set, or < 0 with e set to the message the flow
 * sees (ERR_UNAVAILABLE "Task 'x' is not available on this server" for an unknown one). */
int server_task_run(struct task_call *tc, struct err *e) WUR;

/* The handlers (server_task_<name>.c). */
int server_task_kv(struct task_call *tc, struct err *e);
int server_task_crypto(struct task_call *tc, struct err *e);
int server_task_concord_secrets(struct task_call *tc, struct err *e);
/* crypto's `task:` form (`action: create`): server_task_crypto_create.c. */
int server_task_crypto_action(struct task_call *tc, struct err *e);
int server_task_concord(struct task_call *tc, struct err *e);
/* concord's methods (tc->method set): server_task_concord_methods.c. */
int server_task_concord_method(struct task_call *tc, struct err *e);
/* Process ids given as one string or a list (what names the field in a message): NEW
 * array, or NULL with e set. */
json_t *server_task_concord_ids(json_t *v, const char *what, struct err *e);
/* 0 when the calling process may act on every one of ids (its kin: one with the same
 * initiator, or a child of it), else ERR_INVALID / ERR_FORBIDDEN. */
int server_task_concord_check(struct task_call *tc, json_t *ids, struct err *e) WUR;
/* Suspends the calling process until every process of ids ended (queue/end/children.c
 * resumes it): server_task_concord.c. */
int server_task_concord_suspend(struct task_call *tc, json_t *ids, struct err *e) WUR;
int server_task_jsonstore(struct task_call *tc, struct err *e);
/* lock and unlock: server_task_lock.c. */
int server_task_lock(struct task_call *tc, struct err *e);
int server_task_unlock(struct task_call *tc, struct err *e);
/* docker: sets tc->job (server_task_docker.c). */
int server_task_docker(struct task_call *tc, struct err *e);
int server_task_inventory(struct task_call *tc, struct err *e);
int server_task_project(struct task_call *tc, struct err *e);
int server_task_repository_refresh(struct task_call *tc, struct err *e);
/* concord's createApiKey (or_update false) and createOrUpdateApiKey actions:
 * server_task_concord_apikey.c. */
int server_task_concord_apikey(struct task_call *tc, bool or_update, struct err *e);
/* concord's `attachments` (a list, or NULL/null: none): the files of the calling process's
 * working directory they name, copied into dir (the child's staged payload folder):
 * server_task_concord_attach.c.  ERR_INVALID names the bad entry. */
int server_task_concord_attach(struct task_call *tc, json_t *list, const char *dir, struct err *e) WUR;
/* concord's `baseUrl`: starts a process on that server (Accord or Concord) with POST
 * /api/v1/process authenticated by api_key: zip (NULL: none) as the archive, request as the
 * "request" part, parts (an object of strings: org, project, repo, …) as text parts.  0 with
 * id set, or ERR_INVALID (a bad URL) / ERR_UNAVAILABLE (unreachable, or its refusal with its
 * status and message); api_key is never in a message.  Blocks up to two minutes:
 * server_task_concord_remote.c. */
int server_task_concord_remote(const char *base_url, const char *api_key, const void *zip, size_t zip_len,
			       json_t *request, json_t *parts, char id[UUID_STR_LEN], struct err *e) WUR;

#endif
