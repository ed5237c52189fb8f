#ifndef ACCORD_STORE_PROCESSES_H
#define ACCORD_STORE_PROCESSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/uuid.h"
#include "store/store.h"

struct audit_entry;

/* Processes and their queue (DESIGN.md §2).  The processes table is the queue: a process
 * is ENQUEUED until a node claims it (a compare-and-set to STARTING).  Every status
 * change is one transaction that also writes a PROCESS_STATUS event (the status history
 * is read from those events).  Thread-safe in the sense of the store: each thread uses its
 * own connection. */

enum proc_status {
	PS_NEW,
	PS_PREPARING,
	PS_ENQUEUED,
	PS_WAITING,
	PS_STARTING,
	PS_RUNNING,
	PS_SUSPENDED,
	PS_RESUMING,
	PS_FINISHED,
	PS_FAILED,
	PS_CANCELLED,
	PS_TIMED_OUT,
	PS__COUNT
};
#define PS_BIT(s) (1u << (s))
#define PS_TERMINAL (PS_BIT(PS_FINISHED) | PS_BIT(PS_FAILED) | PS_BIT(PS_CANCELLED) | PS_BIT(PS_TIMED_OUT))
/* Statuses in which nothing of the process runs anywhere: stop cancels them at once. */
#define PS_SERVER_SIDE                                                                                                 \
	(PS_BIT(PS_NEW) | PS_BIT(PS_PREPARING) | PS_BIT(PS_ENQUEUED) | PS_BIT(PS_WAITING) | PS_BIT(PS_SUSPENDED))

/* "FINISHED" … ; proc_status_parse: -1 for an unknown name (exact, upper case). */
const char *proc_status_name(enum proc_status s);
int proc_status_parse(const char *name);

struct process {
	char instance_id[UUID_STR_LEN];
	char kind[24];
	char parent_instance_id[UUID_STR_LEN]; /* "" when none */
	char org_id[UUID_STR_LEN];
	char org_name[129];
	char project_id[UUID_STR_LEN]; /* "" when none */
	char project_name[129];
	char initiator_id[UUID_STR_LEN];
	char initiator[129];
	enum proc_status status;
	int64_t created_at, last_updated_at;
	int64_t last_run_at, start_at; /* 0 when unset */
	int64_t total_runtime_ms;
	int64_t timeout_s, suspend_timeout_s; /* 0 when unset */
	char entry_point[256];
	json_t *tags;	  /* array, owned (NULL: none) */
	json_t *meta;	  /* object, owned, never NULL after a read */
	json_t *handlers; /* array, owned (NULL: none) */
	/* Started from a repository (read only; a new process gets it from process_new.repo):
	 * {repoId, repoName, repoUrl, repoPath, commitId, commitMsg, commitAuthor} (string
	 * members, each optional), owned (NULL: not). */
	json_t *repo;
	/* Started by a trigger: {"trigger": {…}} (owned; NULL: not). */
	json_t *triggered_by;
	/* Set by store_process_claim for a process that resumes (woken from `sleep`,
	 * resumed through the API or a form, restored from a checkpoint): the event to resume
	 * with and the arguments to pass (NULL: none). */
	char resume_event[128];
	json_t *resume_args; /* object, owned */
	bool disabled;	     /* POST /api/v1/process/{id}/disable/true (store/process_ops.h) */
};

/* Releases the JSON members (the struct itself may be on the stack). */
void store_process_cleanup(struct process *p);

/* What a start request stores: the row (status is set to ENQUEUED by the call; times,
 * org/project names ignored), the payload archive, and the session token's hash. */
struct process_new {
	struct process p;
	const void *payload;
	size_t payload_len;
	const uint8_t *session_hash; /* 32 bytes */
	const char *exclusive_group; /* configuration.exclusive (NULL: none; process_timers.h) */
	const char *exclusive_mode;  /* "cancel", "cancelOld" or "wait" */
	/* Started from a repository: {repoId, repoName, repoUrl, repoPath, commitId,
	 * commitMsg, commitAuthor} (BORROWED, NULL: none); by a trigger: {"trigger": {…}}. */
	json_t *repo;
	json_t *triggered_by;
	/* The scopes it is held to (store/process_scopes.h): the starting key's as stored, ""
	 * for none, NULL for its parent's (none without a parent). */
	const char *scopes;
	/* The audit entry of the start (store/audit.h; BORROWED, NULL: none), recorded in the
	 * same transaction: an acknowledged start never lacks it. */
	const struct audit_entry *audit;
};

/* One transaction: the row as NEW then ENQUEUED (two PROCESS_STATUS events), its tags and
 * meta keys, its payload, its scopes, its audit entry.  ERR_CONFLICT for a taken id. */
int store_process_create(struct store_conn *c, const struct process_new *pn, struct err *e) WUR;

/* Reads one process (owned JSON members: store_process_cleanup).  ERR_NOT_FOUND
 * "Process instance not found: <id>". */
int store_process_get(struct store_conn *c, const char *id, struct process *p, struct err *e) WUR;

/* The process whose live session token hashes to hash (status not terminal), or
 * ERR_UNAUTH. */
int store_process_by_session(struct store_conn *c, const uint8_t hash[32], struct process *p, struct err *e) WUR;

/* Compare-and-set of the status in one transaction with its PROCESS_STATUS event:
 * succeeds (returns 0) only when the current status is in from_mask, else ERR_CONFLICT
 * naming the current status.  Keeps last_run_at and total_runtime_ms as Concord does.
 * Clears node_id when the new status is not STARTING/RUNNING.  *changed_at (may be NULL)
 * receives the time written. */
int store_process_transition(struct store_conn *c, const char *id, unsigned from_mask, enum proc_status to,
			     struct err *e) WUR;

/* Claims the oldest ENQUEUED process that is due (start_at unset or <= now) for node:
 * → STARTING with node_id set; failing that, a SUSPENDED one whose resume_at is due
 * (SUSPENDED → RESUMING → ENQUEUED → STARTING, out->resume_event set).  1 with *out
 * filled (owned members), 0 when none is due, < 0 on error. */
int store_process_claim(struct store_conn *c, const char *node, int64_t now, struct process *out, struct err *e) WUR;

/* The earliest start_at > now among ENQUEUED processes, or resume_at among SUSPENDED ones
 * (0 when none). */
int store_process_next_start(struct store_conn *c, int64_t now, int64_t *at, struct err *e) WUR;

/* The payload archive (new buffer, caller frees) of a process: the working directory it
 * stored when it suspended (or was restored or restarted), else the one it was started
 * with; none (ERR_NOT_FOUND) once it is final. */
int store_process_payload(struct store_conn *c, const char *id, void **data, size_t *len, struct err *e) WUR;
/* The same for a process that has just ended, before store_process_payload_drop: its
 * failure handlers start from a copy of it (queue/end/handlers.c). */
int store_process_payload_of_ended(struct store_conn *c, const char *id, void **data, size_t *len,
				   struct err *e) WUR;
/* Stores (or replaces) the payload: a suspended process's working directory. */
int store_process_payload_put(struct store_conn *c, const char *id, const void *data, size_t len, struct err *e) WUR;
/* Drops the payload of a process that is still in a final status (a restore that made it
 * ENQUEUED again in the meantime keeps the payload it stored). */
int store_process_payload_drop(struct store_conn *c, const char *id, struct err *e) WUR;

/* What a runner leaves when its process suspends (queue/supervise/supervisor.c). */
struct process_suspension {
	const void *payload; /* the working directory (tar) it resumes from */
	size_t payload_len;
	json_t *events; /* array of the event names its threads wait for (BORROWED) */
	json_t *forms;	/* object formName → form (name, eventName, fields, values, options) */
	int64_t wake_at;	 /* a thread sleeps: resumed by the server at wake_at … */
	const char *wake_event; /* … with this event (NULL: none) */
};

/* One transaction: STARTING/RUNNING → SUSPENDED with the payload, the awaited event names
 * (the events plus each form's name), the pending forms, the wake-up of a sleep, and a
 * PROCESS_WAIT event {"eventNames": [...], "forms": [...]} that names what resumes it.
 * Clears the resume event and arguments it was started with. */
int store_process_suspend(struct store_conn *c, const char *id, const struct process_suspension *s,
			  struct err *e) WUR;

/* Resumes a SUSPENDED process with `event` (one it waits for) and args (object, BORROWED,
 * may be NULL): one transaction SUSPENDED → RESUMING → ENQUEUED that stores the event
 * and arguments for the claim and clears startAt, the wake-up and the pending forms.
 * ERR_NOT_FOUND for an unknown process; ERR_CONFLICT "Process is not suspended, can't
 * resume" when it is not SUSPENDED (also when a concurrent resume won); ERR_INVALID
 * "Unexpected 'resume' events: [x]" when it does not wait for event. */
int store_process_resume(struct store_conn *c, const char *id, const char *event, json_t *args,
			 struct err *e) WUR;
/* store_process_resume that also makes user_id (NULL: unchanged) the user on whose behalf
 * the process runs from then on (a form's runAs.keep), in the same transaction. */
int store_process_resume_as(struct store_conn *c, const char *id, const char *event, json_t *args, const char *user_id,
			    struct err *e) WUR;
/* That user's id into out ("" when the process runs on behalf of its initiator). */
int store_process_current_user(struct store_conn *c, const char *id, char out[UUID_STR_LEN], struct err *e) WUR;

/* The arguments process id last resumed with (*args NEW object, or NULL when it has not
 * resumed since it last suspended). */
int store_process_resume_args(struct store_conn *c, const char *id, json_t **args, struct err *e) WUR;

/* Starts a process again from a stored snapshot (a checkpoint restore): when its status is
 * in from_mask, one transaction replaces its payload with payload (when not NULL), stores
 * event/args for the claim like store_process_resume, and moves it to ENQUEUED (through
 * RESUMING).  ERR_CONFLICT when the status is not in from_mask. */
int store_process_requeue(struct store_conn *c, const char *id, unsigned from_mask, const char *event, json_t *args,
			  const void *payload, size_t len, struct err *e) WUR;

/* The pending forms of a process (NEW object formName → form; empty when none), and the
 * event names it waits for (NEW array; empty when it is not SUSPENDED). */
int store_process_forms(struct store_conn *c, const char *id, json_t **forms, struct err *e) WUR;
int store_process_wait_events(struct store_conn *c, const char *id, json_t **events, struct err *e) WUR;
/* Replaces the stored definition of pending form `name` (form BORROWED); nothing when the
 * process no longer waits for it (a resume dropped its forms). */
int store_process_form_update(struct store_conn *c, const char *id, const char *name, json_t *form,
			      struct err *e) WUR;

/* Shallow-merges obj (BORROWED) into the stored meta (as Concord's `||`); a key whose value
 * is null is removed.  Keeps process_meta_keys in step. */
int store_process_meta_merge(struct store_conn *c, const char *id, json_t *obj, struct err *e) WUR;

/* Processes left STARTING or RUNNING by node (or by any node when node is NULL): ids in a
 * new array (caller frees) of *n entries. */
int store_process_orphans(struct store_conn *c, const char *node, char (**ids)[UUID_STR_LEN], size_t *n,
			  struct err *e) WUR;

/* Children ids (new JSON array) and status history (new JSON array of
 * {id, status, changeDate}). */
int store_process_children(struct store_conn *c, const char *id, json_t **out, struct err *e) WUR;
int store_process_history(struct store_conn *c, const char *id, json_t **out, struct err *e) WUR;

/* ---- list and count -------------------------------------------------------------- */

enum meta_op {
	META_CONTAINS,
	META_NOT_CONTAINS,
	META_EQ,
	META_NOT_EQ,
	META_STARTS_WITH,
	META_NOT_STARTS_WITH,
	META_ENDS_WITH,
	META_NOT_ENDS_WITH
};

#define PROCESS_FILTER_MAX_TAGS 16
#define PROCESS_FILTER_MAX_META 16

/* A list/count filter; every field is optional (NULL / 0 / -1). */
struct process_filter {
	const char *org_id;
	const char *project_id;
	int64_t after_created, before_created; /* 0: unset; strict > and < */
	int status;			       /* -1: any */
	const char *initiator_prefix;
	const char *parent_instance_id;
	const char *entry_point;     /* NULL: any */
	int64_t min_runtime_ms;      /* 0: any; else total_runtime_ms >= it */
	const char *tags[PROCESS_FILTER_MAX_TAGS];
	size_t n_tags;
	struct {
		const char *key, *value;
		enum meta_op op;
	} meta[PROCESS_FILTER_MAX_META];
	size_t n_meta;
	/* Visibility for a caller who is not admin / global reader: only processes they
	 * initiated (visible_user_id; NULL: none) — of project visible_user_project_id only, when
	 * set — or of the projects listed (a JSON array text of project ids). */
	bool restrict_to_visible;
	const char *visible_user_id;
	const char *visible_user_project_id;
	const char *visible_projects_json;
};

/* Newest first; *out is a new array of *n processes (each with owned members; free with
 * store_process_list_free).  Their meta lacks "out" (the out variables, up to
 * limits.out_bytes each): store_process_get reads them for one process. */
int store_process_list(struct store_conn *c, const struct process_filter *f, size_t limit, size_t offset,
		       struct process **out, size_t *n, struct err *e) WUR;
void store_process_list_free(struct process *list, size_t n);
int store_process_count(struct store_conn *c, const struct process_filter *f, int64_t *count, struct err *e) WUR;

#endif
