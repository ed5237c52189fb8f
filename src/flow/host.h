#ifndef ACCORD_FLOW_HOST_H
#define ACCORD_FLOW_HOST_H

#include <stdbool.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/tool.h"

/* What the flow engine needs from whoever runs it.  `accord run` implements it locally
 * (cli/run.c); `accord runner` will implement it over IPC to its supervisor.  Callbacks are
 * called from the VM's one OS thread (parallel branches are interleaved VM threads). */

enum flow_level { FLOW_DEBUG, FLOW_INFO, FLOW_WARN, FLOW_ERROR };

struct flow_host_ops {
	/* One log message (may contain newlines); the host adds time stamp and level. */
	void (*log)(void *ctx, enum flow_level level, const char *msg);
	/* One ELEMENT event's data (BORROWED); the host adds eventType and eventDate. */
	void (*event)(void *ctx, json_t *data);
	/* A task that needs the server (concord, crypto, kv, jsonStore, lock, …): method NULL
	 * for `task:` steps (then args is the `in` map), else the method name and an array of
	 * arguments.  *out is NEW.  suspend is NULL where the thread cannot suspend (a script's
	 * call); for a step the server may set *suspend (malloc'd) to an event name the
	 * thread then waits for (the concord task's `suspend: true`): *out is then not the
	 * step's result but a payload kept with the thread's state, and when the thread
	 * resumes the same task is called with method "resume" and [payload], whose answer
	 * is the step's result (Concord's re-entrant tasks).  A method called from a step's
	 * expression may suspend too (concord.suspendForCompletion): *out is then its result
	 * and the thread goes on with the next step when it resumes.  Fails (e.g. "not available when
	 * running locally") with e set. */
	int (*server_task)(void *ctx, const char *task, const char *method, json_t *args, json_t **out, char **suspend,
			   struct err *e);
	/* A checkpoint: state is the VM state (BORROWED) that resumes right after the
	 * checkpoint step.  Returns 0 or < 0 (the step fails). */
	int (*checkpoint)(void *ctx, const char *name, json_t *state, struct err *e);
	/* Sensitive values (sensitive(x) in the flow, base64 of a sensitive value, …): with
	 * add, value is printed as ****** from now on (wherever it occurs in a log line or an
	 * event) and true is returned; without, whether value is one the host masks (it may
	 * know more, e.g. secrets a server task returned).  May be NULL. */
	bool (*sensitive)(void *ctx, const char *value, bool add);
	/* The helper process of a script engine ("js", "python", "groovy", "ruby"), started on
	 * first use and kept for the process (runner/script_host.h): *fd is its end of the
	 * script protocol (docs/flows.md "Scripts"), BORROWED until script_lost or the end of
	 * the process.  Fails with e set when the engine is not installed (the message names
	 * the Debian package) or cannot start.  May be NULL: scripts cannot run. */
	int (*script_open)(void *ctx, const char *engine, int *fd, struct err *e);
	/* The engine's helper broke the protocol or died: it is killed, and started afresh
	 * by the next script_open. */
	void (*script_lost)(void *ctx, const char *engine);
	/* Runs an external program for a task (flow/tool.h, runner/tool.h): in the working
	 * directory, inside the flow's confinement, in a process group of its own; its output
	 * (stdout and stderr) logged line by line at INFO with sensitive values masked, its
	 * events (t->event_type) recorded with sensitive values masked; killed at its timeout
	 * and when the process is stopped.  0 with *r set once it ended,
	 * whatever its exit status; < 0 with e set when it could not run.  May be NULL:
	 * programs cannot run here. */
	int (*tool_run)(void *ctx, const struct flow_tool *t, struct flow_tool_result *r, struct err *e);
	/* Records an event of a task's type (ANSIBLE, ANSIBLE_PLAYBOOK_INFO, …) that its program
	 * could not send while it ran (a container's: no event channel), data (BORROWED) masked
	 * as the log.  The server keeps only the types it knows.  May be NULL. */
	void (*tool_event)(void *ctx, const char *type, json_t *data);
	/* Writes the working directory's files (a runner started with them in memory) unless
	 * that was done; called before anything may read or write there: every task but those
	 * that never touch files (task_def.no_files), scripts, form messages.  May be NULL:
	 * the folder always holds them. */
	int (*files)(void *ctx, struct err *e);
};

struct flow_host {
	const struct flow_host_ops *ops;
	void *ctx;
	const char *workdir; /* absolute process working directory */
	bool debug;	     /* DEBUG log lines are printed */
	/* Dry-run mode (a start with dryRun=true, `accord run --dry-run`): isDryRun() is true,
	 * tasks that are not dry-run ready fail, the http task skips non-GET requests
	 * (flow/tasks/dryrun.c). */
	bool dry_run;
	/* Server-side defaults of tasks (flow/tasks/defaults.h), BORROWED; NULL: none. */
	json_t *task_defaults;
	/* The process's policy rules that apply while it runs (task, ansible), BORROWED:
	 * {"policy": name, "rules": {…}}; NULL: none (flow/tasks/policy_check.h). */
	json_t *policy;
};

/* The working directory's files before a step may use them (ops->files). */
static inline int flow_host_files(const struct flow_host *h, struct err *e)
{
	return h && h->ops && h->ops->files ? h->ops->files(h->ctx, e) : 0;
}

#endif
