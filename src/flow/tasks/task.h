#ifndef ACCORD_FLOW_TASKS_TASK_H
#define ACCORD_FLOW_TASKS_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/host.h"

/* One C interface for every task (DESIGN §7): `execute(ctx, in) → out` for `task:` steps,
 * plus named methods for `${task.method(args…)}`.  Tasks are registered in one table
 * (registry.c).  A task fails by returning < 0 with e set; ctx->payload may carry a value
 * for lastError.payload (the `throw` task).  Return EL_THROWN from a method to have the
 * message reach the flow unprefixed.  Outputs are NEW references. */

struct vm;
struct thread;

struct task_job;

struct task_ctx {
	struct vm *vm;
	struct thread *t;
	const struct flow_host *h;
	const char *task;
	json_t *payload;      /* set by a failing task: lastError.payload (owned by the ctx) */
	char *suspend_event;  /* set by a task that suspends the thread (malloc'd) */
	struct task_job *job; /* set by a task step that waits on I/O (below) */
};

/* A task step that waits on I/O (an HTTP call) may hand the wait over, so that the flow's
 * other parallel branches run meanwhile, as on Concord's worker threads: execute prepares
 * everything on the VM's thread, sets c->job and returns 0; the VM calls run on a thread
 * of its own — run touches only the job's own data: no VM, no host, no logs, no jansson
 * value anyone else holds — and then finish on the VM's thread for the step's output
 * (finish may log and fail like execute).  With no other branch to run, or no thread to
 * be had, the VM calls run inline.  free releases the job either way. */
struct task_job {
	void (*run)(struct task_job *j);
	int (*finish)(struct task_job *j, struct task_ctx *c, json_t **out, struct err *e);
	void (*free)(struct task_job *j);
};

typedef int (*task_execute_fn)(struct task_ctx *c, json_t *in, json_t **out, struct err *e);
typedef int (*task_method_fn)(struct task_ctx *c, json_t *args, json_t **out, struct err *e);

struct task_method {
	const char *name;
	task_method_fn fn;
	int min_args, max_args;
};

struct task_def {
	const char *name;
	task_execute_fn execute;	   /* NULL: the task has only methods */
	const struct task_method *methods; /* terminated by {NULL} */
	bool server;			   /* implemented by the host (server_task) */
	/* Never reads or writes the working directory: called without the host writing its
	 * files first (flow/host.h files).  Every other task gets them. */
	bool no_files;
};

const struct task_def *task_find(const char *name);

/* Calls a task method with pre/post events; used by the EL env.  may_suspend: the call
 * comes from a step's expression (not a script), so a server method may suspend the thread
 * (concord.suspendForCompletion): the thread then waits for that event once the step
 * ends and goes on with the next step when it resumes. */
int task_call_method(struct vm *vm, struct thread *t, const char *task, const char *method, json_t *args, json_t **out,
		     bool may_suspend, struct err *e) WUR;

/* Dry-run mode (flow/host.h dry_run): 0 when task may run — the mode is off, the task is
 * dry-run ready, or the step s (NULL: none) has meta.dryRunReady true (a value or an
 * expression) — else < 0 with Concord's "Dry-run mode is not supported for '<task>' task
 * (yet)". */
struct step;
/* Whether step s says meta.dryRunReady: true, "true" or an expression giving one of them
 * (for steps other than tasks too: a `script` step runs in dry-run mode only with it, else
 * fails with Concord's "Dry-run mode is not supported for this 'script' step"). */
int task_dry_run_step_ready(struct vm *vm, struct thread *t, const struct step *s, bool *ready, struct err *e) WUR;
int task_dry_run_check(struct vm *vm, struct thread *t, const struct step *s, const char *task, struct err *e) WUR;

/* The task rules of the process's policy (vm->h->policy) for a call of task's method (NULL:
 * a step, "execute") with in (a step's input object) or args (a method's arguments): a
 * denied call is ERR_FORBIDDEN with the rule's message naming the policy; a warned one logs
 * a warning and passes. */
int task_policy_check(struct vm *vm, const char *task, const char *method, const json_t *in, const json_t *args,
		      struct err *e) WUR;

/* Argument helpers: a string argument (BORROWED), an integer, any value. */
int task_arg_str(json_t *args, size_t i, const char *what, const char **out, struct err *e) WUR;
int task_arg_int(json_t *args, size_t i, const char *what, long long *out, struct err *e) WUR;
/* An optional string entry key of the map in: *out BORROWED, NULL when absent or null;
 * ERR_INVALID "'key' must be a string, got <class>" for another type. */
int task_opt_str(json_t *in, const char *key, const char **out, struct err *e) WUR;
/* A boolean option of in: absent or null gives def; else EL's coercion to Boolean (true,
 * false, a string "true"/"false"), or < 0 with e set naming key. */
int task_opt_bool(json_t *in, const char *key, bool def, bool *out, struct err *e) WUR;
/* An integer option of in: absent or null gives def; else EL's coercion to Long, or < 0
 * with e set naming key.  The caller checks the range. */
int task_opt_long(json_t *in, const char *key, int64_t def, int64_t *out, struct err *e) WUR;
/* The text of any value as Java prints it (strings as they are); NEW string. */
char *task_text(const json_t *v);

/* A `sleep` with `suspend: true` waits for an event named "sleep-<ms>-<uuid>": 1 with the
 * wake-up time (ms since the epoch) when event is one, else 0. */
int task_sleep_wake_at(const char *event, int64_t *at);

/* The task tables, one per file under tasks/. */
extern const struct task_def task_log, task_throw, task_sleep, task_resource, task_datetime, task_base64, task_files,
    task_env, task_vars, task_misc, task_http, task_smtp, task_slack, task_slack_channel, task_ansible, task_git, task_github,
    task_ldap;

#endif
