#ifndef ACCORD_FLOW_TOOL_H
#define ACCORD_FLOW_TOOL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* A task that runs an external program (ansible-playbook, git, docker) describes the run
 * with these and hands it to its host (flow_host_ops.tool_run, implemented once by
 * runner/tool.c): no task spawns, times out, kills or writes secret files itself. */

/* A file the program needs that holds a secret (a private key, a vault password): written
 * before the start with mode 0600 at path (relative to the working directory, inside it;
 * a missing parent folder is created with mode 0700), removed afterwards whatever happens. */
struct flow_tool_file {
	const char *path;
	const char *data;
	size_t len;
};

struct flow_tool {
	const char *name;  /* for messages: "ansible" */
	const char *exe;   /* absolute path of the program */
	char *const *argv; /* argv[0] included, NULL-terminated */
	char *const *env;  /* NAME=value entries added to PATH (unless one is PATH), LANG, HOME, TMPDIR;
			    * NULL-terminated or NULL */
	const struct flow_tool_file *files;
	size_t n_files;
	const char *stdin_path; /* NULL: stdin is /dev/null; else one of files (its path), read as stdin */
	long long timeout_ms; /* 0: none; past it the program's process group is killed */
	/* Not NULL: the program gets fd 3, on which it writes events, one JSON object a line
	 * (a line over 1 MiB or not an object is dropped); each becomes a process event of
	 * this type while the program runs, or, written {"eventType": "<type>_<SUB>", "data":
	 * {…}}, an event of that subtype (the host may accept only the subtypes it knows). */
	const char *event_type;
	/* Not NULL (with event_type): a line {"request": {…}} on the event channel is a request
	 * of the program, answered by request(request_ctx, req) (a NEW object; NULL answers
	 * {"error": "…"}) written as one JSON line to fd 4 of the program, read by it. */
	json_t *(*request)(void *request_ctx, json_t *req);
	void *request_ctx;
	/* Not NULL: each line of the program's output goes to line(line_ctx, text) instead of
	 * the process log (a task that reads the program's answer, e.g. `git rev-parse`); the
	 * task logs what it wants of it, masked. */
	void (*line)(void *line_ctx, const char *text);
	/* Not NULL: stderr on a pipe of its own, each of its lines to err_line(line_ctx, text)
	 * (line or the log still get stdout's). */
	void (*err_line)(void *line_ctx, const char *text);
	void *line_ctx;
	/* Not NULL: called about every tick_ms (at least 100) while the program runs, from the
	 * wait loop (which waits meanwhile): work that must go on beside the program, e.g.
	 * renewing a credential it reads (ansible's Kerberos ticket).  It may run a short program
	 * of its own through the host's tool_run; a stop signal received then stops both. */
	void (*tick)(void *tick_ctx);
	void *tick_ctx;
	long long tick_ms;
};

struct flow_tool_result {
	int exit_code;	/* the program's exit status; 128 + signal when a signal ended it */
	int signal;	/* the signal that ended it, 0 when it exited */
	bool timed_out; /* killed because timeout_ms passed */
};

#endif
