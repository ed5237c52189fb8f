#ifndef ACCORD_RUNNER_TOOL_H
#define ACCORD_RUNNER_TOOL_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tool.h"

/* The one place where a task's external program runs (flow/tool.h), for `accord runner`
 * and `accord run` alike.
 *
 * The program is a child of the calling process, so it inherits its confinement (Landlock
 * domain, rlimits, no_new_privs).  It starts in workdir with stdin on /dev/null, stdout and
 * stderr on one pipe, a clean environment (PATH=/usr/bin:/bin, LANG=C.UTF-8, HOME and
 * TMPDIR the working directory, then t->env), and a process group of its own, so that a
 * timeout ends it and everything it started (SIGTERM, SIGKILL 5 s later), and so that
 * nothing of it outlives its end: when the program exits, what is left of its group gets
 * SIGKILL.  While it runs, SIGTERM, SIGINT and SIGHUP sent to the caller (a stop, a cancel,
 * the process timeout: the supervisor signals the runner's group) kill the program's group
 * and remove its secret files; then the caller dies of that signal as it would have.
 *
 * Secret files (t->files) are written 0600 first and removed at the end in every case;
 * out->line(ctx, text) gets each line of output (a line longer than 16 KiB arrives in
 * pieces; a trailing carriage return is dropped), to be masked and logged by the caller;
 * with t->event_type, out->event(ctx, type, data) each event object (BORROWED) the program
 * wrote on its fd 3.
 *
 * 0 with *r set once the program ended, whatever its exit status; < 0 with e set when it
 * could not be started (ERR_NOT_FOUND: t->exe is not there; the message names it) or a
 * file could not be written (nothing is left behind).  Not thread-safe (signal mask). */
struct tool_sink {
	void (*line)(void *ctx, const char *text);
	void (*event)(void *ctx, const char *type, json_t *data); /* may be NULL: events dropped */
	void *ctx;
};

int tool_run(const char *workdir, const struct flow_tool *t, const struct tool_sink *out, struct flow_tool_result *r,
	     struct err *e) WUR;

#endif
