/* `script:` steps: the flow's side of the script protocol (docs/flows.md, "Scripts").  The
 * host keeps one helper process per engine (runner/script_host.h); a step sends its helper
 * one "run" message with the script and the variables, then serves what the script asks
 * for (log lines, variable writes, task calls) until the helper answers "done" or "error".
 * Messages are JSON objects, one per line, over a UNIX stream socket. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/limits.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

/* One message may carry every variable of the process: the same cap as a task's output. */
#define SCRIPT_MSG_MAX (64u << 20)
#define SCRIPT_FILE_MAX (8u << 20)

/* Language names and file extensions (Concord accepts both in either place). */
static const struct {
	const char *name, *engine;
} languages[] = {
    {"js", "js"},	      {"javascript", "js"},	{"ecmascript", "js"}, {"graal.js", "js"},
    {"nashorn", "js"},	      {"mjs", "js"},		{"python", "python"}, {"py", "python"},
    {"jython", "python"},     {"python3", "python"},	{"groovy", "groovy"}, {"gvy", "groovy"},
    {"gy", "groovy"},	      {"gsh", "groovy"},	{"ruby", "ruby"},     {"rb", "ruby"},
    {"jruby", "ruby"},
};

struct script_run {
	struct vm *vm;
	struct thread *t;
	const struct step *s;
	const char *engine;
	int fd;
	struct buf in; /* bytes read from the helper, not yet a whole line */
	json_t *result;
};

static const char *engine_of(const char *lang)
{
	for (size_t i = 0; lang && i < sizeof languages / sizeof languages[0]; i++)
		if (cstr_ieq(languages[i].name, lang))
			return languages[i].engine;
	return NULL;
}

static const char *extension(const char *ref)
{
	const char *dot = strrchr(ref, '.'), *slash = strrchr(ref, '/');
	if (!dot || (slash && dot < slash) || !dot[1])
		return NULL;
	return dot + 1;
}

static int send_msg(int fd, json_t *msg, struct err *e)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	size_t len, off = 0;
	int rc = 0;

	json_decref(msg);
	if (!text)
		return err_set(e, ERR_INVALID, "a value cannot be sent to the script (not representable as JSON)");
	len = strlen(text);
	text[len] = '\n'; /* replaces the NUL: the line is sent as it is */
	while (off < len + 1) {
		ssize_t n = send(fd, text + off, len + 1 - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = err_set(e, ERR_UNAVAILABLE, "the script engine stopped (%s)", strerror(errno));
			break;
		}
		off += (size_t)n;
	}
	free(text);
	return rc;
}

/* The next message from the helper: NEW object, or NULL with e set. */
static json_t *read_msg(struct script_run *r, struct err *e)
{
	for (;;) {
		char *nl = r->in.len ? memchr(r->in.data, '\n', r->in.len) : NULL;
		char chunk[65536];
		ssize_t n;
		if (nl) {
			size_t line = (size_t)(nl - r->in.data);
			json_error_t je;
			json_t *v = json_loadb(r->in.data, line, 0, &je);
			if (!json_is_object(v)) {
				/* not the protocol: the engine's own complaint (a JVM out of memory) */
				json_decref(v);
				err_set(e, ERR_INTERNAL, "the script engine sent a malformed message: %.*s",
					(int)(r->in.len < 300 ? r->in.len : 300), r->in.data);
				return NULL;
			}
			memmove(r->in.data, nl + 1, r->in.len - line - 1);
			r->in.len -= line + 1;
			return v;
		}
		n = recv(r->fd, chunk, sizeof chunk, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err_set(e, ERR_UNAVAILABLE, "the script engine stopped%s%s", n < 0 ? ": " : "",
				n < 0 ? strerror(errno) : "");
			return NULL;
		}
		if (buf_append(&r->in, chunk, (size_t)n, e) < 0)
			return NULL;
	}
}

static enum flow_level level_of(const char *s)
{
	if (s && strcmp(s, "WARN") == 0)
		return FLOW_WARN;
	if (s && strcmp(s, "ERROR") == 0)
		return FLOW_ERROR;
	if (s && strcmp(s, "DEBUG") == 0)
		return FLOW_DEBUG;
	return FLOW_INFO;
}

/* execute(in), or call(in) of a task that has no method of that name (Concord's v1-style
 * `task.call(…)`): the task runs as a `task:` step would. */
static bool runs_as_step(const char *task, const char *method)
{
	const struct task_def *d;
	if (!method || strcmp(method, "execute") == 0)
		return true;
	if (strcmp(method, "call") != 0 || !(d = task_find(task)) || d->server)
		return false;
	for (const struct task_method *m = d->methods; m && m->name; m++)
		if (strcmp(m->name, "call") == 0)
			return false;
	return true;
}

/* tasks.get(name).execute(in) or .method(args…) from the script; the answer is sent back. */
static int serve_task(struct script_run *r, json_t *msg, struct err *e)
{
	const char *task = json_string_value(json_object_get(msg, "task"));
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *args = json_object_get(msg, "args"), *out = NULL, *in;
	struct err te = {0};
	int rc;

	if (!task || !json_is_array(args))
		return err_set(e, ERR_INTERNAL, "the script engine sent a malformed task call");
	if (runs_as_step(task, method)) {
		/* execute() and execute({…}): the input map, empty when not given */
		in = json_array_size(args) ? json_incref(json_array_get(args, 0)) : json_object();
		if (!json_is_object(in) || json_array_size(args) > 1)
			rc = err_set(&te, ERR_INVALID, "%s.%s() takes a map of input parameters", task,
				     method ? method : "execute");
		else
			rc = exec_task_inline(r->vm, r->t, task, in, &out, &te);
		json_decref(in);
	} else {
		rc = task_call_method(r->vm, r->t, task, method, args, &out, false, &te);
	}
	if (rc < 0)
		return send_msg(r->fd, json_pack("{s:s, s:b, s:s}", "op", "reply", "ok", 0, "error", te.msg), e);
	return send_msg(r->fd, json_pack("{s:s, s:b, s:o}", "op", "reply", "ok", 1, "value", out ? out : json_null()),
			e);
}

/* Serves messages until the script ends: 1 done (r->result set), 0 the script failed
 * (raised on the thread), < 0 the helper broke down (e set). */
static int serve(struct script_run *r, struct err *e)
{
	for (;;) {
		json_t *msg = read_msg(r, e);
		const char *op = json_string_value(json_object_get(msg, "op"));
		const char *name;
		int rc = 0;
		if (!msg)
			return -1;
		if (!op) {
			rc = err_set(e, ERR_INTERNAL, "the script engine sent a message without 'op'");
		} else if (strcmp(op, "log") == 0) {
			const char *text = json_string_value(json_object_get(msg, "msg"));
			vm_log(r->vm, level_of(json_string_value(json_object_get(msg, "level"))), "%s", text ? text : "");
		} else if (strcmp(op, "set") == 0 && (name = json_string_value(json_object_get(msg, "name")))) {
			json_t *v = json_object_get(msg, "value");
			scope_set(r->t, name, json_incref(v ? v : json_null()));
		} else if (strcmp(op, "task") == 0) {
			rc = serve_task(r, msg, e);
		} else if (strcmp(op, "done") == 0) {
			json_t *res = json_object_get(msg, "result");
			r->result = json_is_object(res) ? json_incref(res) : json_object();
			json_decref(msg);
			return 1;
		} else if (strcmp(op, "error") == 0) {
			const char *m = json_string_value(json_object_get(msg, "message"));
			vm_raise(r->vm, r->t, r->s, m ? m : "script error", NULL);
			json_decref(msg);
			return 0;
		} else {
			rc = err_set(e, ERR_INTERNAL, "the script engine sent an unknown message '%s'", op);
		}
		json_decref(msg);
		if (rc < 0)
			return -1;
	}
}

/* The script's text: the body, or the file named by ref beneath the working directory.
 * NEW string, or NULL with the error raised. */
static char *script_text(struct vm *vm, struct thread *t, const struct step *s, const char *ref)
{
	struct err e = {0};
	char msg[1024];
	size_t len;
	char *text;

	if (s->script_body) {
		if (!(text = strdup(s->script_body)))
			oom_note(); /* the VM fails the step (vm.c check_memory) */
		return text;
	}
	if (flow_host_files(vm->h, &e) == 0)
		text = path_read_beneath(vm->h->workdir, ref, SCRIPT_FILE_MAX, &len, &e);
	else
		text = NULL;
	if (text && memchr(text, '\0', len)) {
		free(text);
		text = NULL;
		err_set(&e, ERR_INVALID, "script file '%s' is not text", ref);
	}
	if (!text) {
		if (e.code == ERR_NOT_FOUND)
			str_fmt_cut(msg, sizeof msg, "Resource not found: %s", ref);
		else
			str_fmt_cut(msg, sizeof msg, "%s", e.msg);
		vm_raise(vm, t, s, msg, NULL);
	}
	return text;
}

/* The "run" message: the script, its name for messages, the variables (the flow's, the
 * step's `in` over them) and the execution facts the bindings answer. */
static json_t *run_msg(struct vm *vm, struct thread *t, const char *name, const char *text, json_t *in)
{
	json_t *vars = scope_all(t), *id = scope_get(t, "txId");

	json_object_update(vars, in);
	return json_pack("{s:s, s:s, s:s, s:o, s:O, s:s, s:b}", "op", "run", "name", name, "body", text, "vars", vars,
			 "instanceId", id ? id : json_null(), "workDir", vm->h->workdir ? vm->h->workdir : "",
			 "dryRun", vm->h->dry_run);
}

static void run_script(struct script_run *r, const char *name, const char *text, json_t *in)
{
	const struct flow_host *h = r->vm->h;
	struct err e = {0};
	char msg[1200];
	int rc;

	if (!h->ops->script_open) {
		vm_raise(r->vm, r->t, r->s, "script steps cannot run here (no script host)", NULL);
		return;
	}
	/* The script runs in the working directory and may read it. */
	if (flow_host_files(h, &e) < 0 || h->ops->script_open(h->ctx, r->engine, &r->fd, &e) < 0) {
		vm_raise(r->vm, r->t, r->s, e.msg, NULL);
		return;
	}
	buf_init(&r->in, SCRIPT_MSG_MAX);
	rc = send_msg(r->fd, run_msg(r->vm, r->t, name, text, in), &e);
	if (rc == 0)
		rc = serve(r, &e);
	buf_cleanup(&r->in);
	if (rc < 0) {
		h->ops->script_lost(h->ctx, r->engine);
		str_fmt_cut(msg, sizeof msg, "Script (%s): %s", r->engine, e.msg);
		vm_raise(r->vm, r->t, r->s, msg, NULL);
		return;
	}
	if (rc == 1)
		exec_apply_out(r->vm, r->t, r->s, r->result);
}

/* In dry-run mode a script step runs only when its meta says dryRunReady (Concord's
 * ScriptCall); otherwise the step fails with Concord's message.  false when raised. */
static bool dry_run_ready(struct vm *vm, struct thread *t, const struct step *s)
{
	struct err e = {0};
	bool ok;

	if (!vm->h->dry_run)
		return true;
	if (task_dry_run_step_ready(vm, t, s, &ok, &e) < 0) {
		vm_raise(vm, t, s, e.msg, NULL);
		return false;
	}
	if (!ok)
		vm_raise(vm, t, s, "Dry-run mode is not supported for this 'script' step", NULL);
	return ok;
}

void script_step(struct vm *vm, struct thread *t, const struct step *s)
{
	struct script_run r = {.vm = vm, .t = t, .s = s, .fd = -1};
	struct scope sc;
	struct err e = {0};
	char *ref = NULL, *text = NULL, msg[1024];
	const char *lang;
	json_t *v, *in = NULL;

	scope_init(&sc, vm, t);
	v = scope_eval(&sc, s->arg, &e);
	scope_cleanup(&sc);
	if (!v) {
		vm_raise(vm, t, s, e.msg, NULL);
		return;
	}
	ref = task_text(v);
	json_decref(v);
	if (!ref)
		return;
	lang = s->script_body ? ref : extension(ref);
	str_fmt_cut(msg, sizeof msg, "Script: %s", ref);
	events_step(vm, t, s, msg);
	if (!(r.engine = engine_of(lang))) {
		str_fmt_cut(msg, sizeof msg, "Script engine not found: %s", lang ? lang : "null");
		vm_raise(vm, t, s, msg, NULL);
	} else if (!dry_run_ready(vm, t, s)) {
		/* raised: Concord's rule, a script may touch anything unless it says it is safe */
	} else if ((text = script_text(vm, t, s, ref)) && (in = exec_eval_in(vm, t, s))) {
		run_script(&r, s->script_body ? "script" : ref, text, in);
	}
	json_decref(r.result);
	json_decref(in);
	free(text);
	free(ref);
}
