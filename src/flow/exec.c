#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/limits.h"
#include "base/oom.h"
#include "base/str.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"
#include "flow/yaml_dump.h"

static json_t *eval(struct vm *vm, struct thread *t, const struct tval *tv, json_t *extra)
{
	struct scope sc;
	struct err e;
	json_t *v;
	scope_init(&sc, vm, t);
	sc.extra = extra;
	v = scope_eval(&sc, tv, &e);
	scope_cleanup(&sc);
	if (!v)
		vm_raise(vm, t, NULL, e.msg, NULL);
	return v;
}

static char *eval_text(struct vm *vm, struct thread *t, const struct tval *tv)
{
	json_t *v = eval(vm, t, tv, NULL);
	char *s;
	if (!v)
		return NULL;
	if (!(s = task_text(v)))
		oom_note(); /* the VM fails the step (vm.c check_memory) */
	json_decref(v);
	return s;
}

static void push_list(struct thread *t, const struct step *s, const struct steps *l, bool root)
{
	struct frame *f = vm_push(t, FR_LIST, root, s);
	f->list = l;
	f->end = l->n;
}

/* Applies a step's `out` (name or map evaluated with `result`) to the value. */
void exec_apply_out(struct vm *vm, struct thread *t, const struct step *s, json_t *result)
{
	json_t *extra, *m;
	const char *k;
	json_t *v;
	if (s->out.kind == OUT_NAME) {
		scope_set(t, s->out.names[0], json_incref(result));
		return;
	}
	if (s->out.kind != OUT_MAP)
		return;
	extra = json_pack("{s:O}", "result", result);
	m = eval(vm, t, s->out.map, extra);
	json_decref(extra);
	if (!m)
		return;
	json_object_foreach(m, k, v) scope_set(t, k, json_incref(v));
	json_decref(m);
}

static void exec_log(struct vm *vm, struct thread *t, const struct step *s, bool yaml)
{
	json_t *v = eval(vm, t, s->arg, NULL), *in;
	char *text, *corr;
	if (!v)
		return;
	in = json_pack("{s:O}", "msg", v);
	if (yaml)
		json_object_set_new(in, "format", json_string("yaml"));
	corr = events_task_pre(vm, t, "log", NULL, in);
	text = yaml ? yaml_dump_text(v) : task_text(v);
	if (text)
		vm_log(vm, FLOW_INFO, "%s%s", yaml ? "\n" : "", text);
	else
		oom_note(); /* a log line lost: the VM fails the step (vm.c check_memory) */
	events_task_post(vm, t, "log", NULL, corr, 0, NULL, NULL);
	free(corr);
	free(text);
	json_decref(in);
	json_decref(v);
}

static void exec_throw(struct vm *vm, struct thread *t, const struct step *s)
{
	json_t *v = eval(vm, t, s->arg, NULL);
	if (!v)
		return;
	if (json_is_object(v) && json_object_get(v, "@id") && json_is_string(json_object_get(v, "message")))
		vm_raise(vm, t, s, json_string_value(json_object_get(v, "message")), json_object_get(v, "payload"));
	else if (json_is_string(v))
		vm_raise(vm, t, s, json_string_value(v), NULL);
	else
		vm_raise(vm, t, s, "Process Error", v);
	json_decref(v);
}

static void exec_expr(struct vm *vm, struct thread *t, const struct step *s)
{
	json_t *v = eval(vm, t, s->arg, NULL);
	if (!v)
		return;
	exec_apply_out(vm, t, s, v);
	json_decref(v);
}

static void exec_set(struct vm *vm, struct thread *t, const struct step *s)
{
	struct scope sc;
	struct err e;
	scope_init(&sc, vm, t);
	if (scope_set_vars(&sc, s->arg, &e) < 0)
		vm_raise(vm, t, s, e.msg, NULL);
	scope_cleanup(&sc);
	events_step(vm, t, s, "Set variables");
}

static void exec_if(struct vm *vm, struct thread *t, const struct step *s)
{
	struct scope sc;
	struct err e;
	bool yes = false;
	int rc;
	scope_init(&sc, vm, t);
	rc = scope_eval_bool(&sc, s->arg, &yes, &e);
	scope_cleanup(&sc);
	events_step_about(vm, t, s, "Check: ", s->arg->text);
	if (rc < 0) {
		vm_raise(vm, t, s, e.msg, NULL);
		return;
	}
	if (yes)
		push_list(t, s, s->body, false);
	else if (s->alt)
		push_list(t, s, s->alt, false);
}

static void exec_switch(struct vm *vm, struct thread *t, const struct step *s)
{
	char *v = eval_text(vm, t, s->arg);
	events_step_about(vm, t, s, "Switch: ", s->arg->text);
	if (!v)
		return;
	for (size_t i = 0; i < s->n_cases; i++) {
		char *label = eval_text(vm, t, s->cases[i].label);
		bool match = label && strcmp(label, v) == 0;
		free(label);
		if (t->error)
			break;
		if (match) {
			push_list(t, s, s->cases[i].body, false);
			free(v);
			return;
		}
	}
	if (!t->error && s->alt)
		push_list(t, s, s->alt, false);
	free(v);
}

static size_t call_depth(struct thread *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += t->frames[i].kind == FR_FLOW;
	return n;
}

/* The step's `in` with the retry's `in` merged over it when this is a retry attempt. */
json_t *exec_eval_in(struct vm *vm, struct thread *t, const struct step *s)
{
	const struct tval *in = s->in ? s->in : s->kind == STEP_TASK ? s->arg : NULL;
	struct frame *top = vm_top(t);
	json_t *v = in ? eval(vm, t, in, NULL) : json_object();
	struct err e;
	if (!v)
		return NULL;
	if (!json_is_object(v)) {
		json_decref(v);
		vm_raise(vm, t, s, "'in' must evaluate to a map", NULL);
		return NULL;
	}
	if (s->retry && s->retry->in && top && top->kind == FR_RETRY && top->step == s && top->pc > 0) {
		json_t *r = eval(vm, t, s->retry->in, NULL);
		if (!r || value_merge(v, r, &e) < 0) {
			json_decref(r);
			json_decref(v);
			return NULL;
		}
		json_decref(r);
	}
	return v;
}

static void exec_call(struct vm *vm, struct thread *t, const struct step *s)
{
	char *name = eval_text(vm, t, s->arg), desc[1024];
	const struct flow_def *fd;
	json_t *in;
	struct frame *f;
	if (!name)
		return;
	events_step_about(vm, t, s, "Flow call: ", name);
	fd = model_flow(vm->m, name);
	if (!fd) {
		str_fmt_cut(desc, sizeof desc, "Flow not found: %s", name);
		free(name);
		vm_raise(vm, t, s, desc, NULL);
		return;
	}
	free(name);
	if (call_depth(t) >= limits.flow_call_depth) {
		vm_fatal(vm, t, "Too many nested flow calls (limit flow_call_depth = %zu)", limits.flow_call_depth);
		return;
	}
	if (!(in = exec_eval_in(vm, t, s)))
		return;
	f = vm_push(t, FR_FLOW, true, s);
	json_decref(f->locals);
	f->locals = in;
	f->list = fd->body;
	f->end = fd->body->n;
	f->data = json_pack("{s:s}", "flow", fd->name);
}

static size_t live_threads(struct vm *vm)
{
	size_t n = 0;
	for (size_t i = 0; i < vm->n_threads; i++)
		n += vm->threads[i]->state != TH_DONE && vm->threads[i]->state != TH_FAILED;
	return n;
}

static void exec_parallel(struct vm *vm, struct thread *t, const struct step *s)
{
	struct frame *f;
	json_t *children = json_object();
	events_step(vm, t, s, "Parallel block");
	if (live_threads(vm) + s->body->n > limits.flow_threads) {
		json_decref(children);
		vm_fatal(vm, t, "Too many threads (limit flow_threads = %zu)", limits.flow_threads);
		return;
	}
	for (size_t i = 0; i < s->body->n; i++) {
		struct thread *c = vm_thread_new(vm, t->id);
		struct frame *cf = vm_push(c, FR_LIST, true, s);
		char id[32];
		json_decref(cf->locals);
		cf->locals = scope_all(t);
		cf->list = s->body;
		cf->pc = i;
		cf->end = i + 1;
		if (str_fmt(id, sizeof id, "%d", c->id)) /* always fits */
			abort();
		json_object_set_new(children, id, json_integer((json_int_t)i));
	}
	f = vm_push(t, FR_PARALLEL, false, s);
	f->data = json_pack("{s:o, s:[], s:{}}", "children", children, "errors", "finals");
	t->state = TH_WAIT;
}

static void exec_checkpoint(struct vm *vm, struct thread *t, const struct step *s)
{
	char *name = eval_text(vm, t, s->arg), desc[1024];
	json_t *state, *threads, *th;
	struct err e;
	size_t i;
	if (!name)
		return;
	str_fmt_cut(desc, sizeof desc, "Checkpoint: %s", name);
	events_step(vm, t, s, desc);
	state = vm_save(vm);
	threads = json_object_get(state, "threads");
	json_array_foreach(threads, i, th) if (json_integer_value(json_object_get(th, "id")) == t->id)
	{
		json_object_set_new(th, "state", json_string("suspended"));
		json_object_set_new(th, "event", json_string(name));
	}
	json_object_set_new(state, "checkpoint", json_string(name));
	if (vm->h->ops->checkpoint && vm->h->ops->checkpoint(vm->h->ctx, name, state, &e) < 0)
		vm_raise(vm, t, s, e.msg, NULL);
	else
		vm_log(vm, FLOW_INFO, "Checkpoint '%s' created", name);
	json_decref(state);
	free(name);
}

static void exec_suspend(struct vm *vm, struct thread *t, const struct step *s)
{
	char *name = eval_text(vm, t, s->arg);
	if (!name)
		return;
	events_step(vm, t, s, "Suspend");
	free(t->event);
	t->event = name;
	t->state = TH_SUSPENDED;
}

static void exec_return(struct vm *vm, struct thread *t, const struct step *s)
{
	events_step(vm, t, s, "Return");
	while (t->n > 0) {
		struct frame *f = vm_top(t);
		if (t->n == 1 || f->kind == FR_FLOW || f->kind == FR_ITER || (f->kind == FR_TRY && f->phase >= 1)) {
			vm_pop_done(vm, t);
			return;
		}
		vm_frame_cleanup(f);
		t->n--;
	}
}

static json_t *task_result(struct thread *t, int rc, json_t *out, const char *msg)
{
	json_t *r = json_is_object(out) ? json_copy(out) : json_object();
	if (out && !json_is_object(out) && !json_is_null(out))
		json_object_set(r, "result", out);
	json_object_set_new(r, "ok", json_boolean(rc == 0 && !(json_is_false(json_object_get(out, "ok")))));
	if (rc < 0)
		json_object_set_new(r, "error", json_string(msg));
	json_object_set_new(r, "threadId", json_integer(t->id));
	return r;
}

/* may_suspend: a step (not a script's call) whose thread a server task may suspend. */
static int run_task(struct vm *vm, struct thread *t, const struct task_def *d, struct task_ctx *c, json_t *in,
		    bool may_suspend, json_t **out, struct err *e)
{
	if (!d->no_files && flow_host_files(vm->h, e) < 0)
		return -1;
	if (d->server)
		return vm->h->ops->server_task(vm->h->ctx, d->name, NULL, in, out,
					       may_suspend ? &c->suspend_event : NULL, e);
	if (!d->execute)
		return err_set(e, ERR_INVALID,
			       "Task '%s' cannot be called as a step; call its methods: ${%s.method(...)}", d->name,
			       d->name);
	(void)t;
	return d->execute(c, in, out, e);
}

/* The step's result: its `out`, and its error raised (or ignored). */
static void task_outcome(struct vm *vm, struct thread *t, const struct step *s, int rc, json_t *out, struct err *e,
			 json_t *payload)
{
	json_t *result = task_result(t, rc, out, e->msg);

	exec_apply_out(vm, t, s, result);
	json_decref(result);
	if (rc < 0 && !t->error) {
		if (s->ignore_errors)
			vm_log(vm, FLOW_WARN, "Error ignored: %s", e->msg);
		else
			vm_raise(vm, t, s, e->msg, payload);
	}
}

/* The end of a task step: events, out, errors, suspension.  Takes in, out and corr.  A
 * server task that suspends the thread answers with the payload it wants back when the
 * thread resumes (exec_task_reenter), not with the step's result; a task of the flow
 * engine that suspends (sleep) has its result now. */
static void task_step_end(struct vm *vm, struct thread *t, const struct step *s, struct task_ctx *c, int rc,
			  json_t *in, json_t *out, char *corr, int64_t start, struct err *e)
{
	const struct task_def *d = task_find(s->task);

	events_task_post(vm, t, s->task, NULL, corr, (dt_mono_ns() - start) / 1000000, rc < 0 ? e->msg : NULL, out);
	if (rc == 0 && c->suspend_event && !t->error && d && d->server) {
		json_decref(t->reentry);
		t->reentry = json_pack("{s:I, s:O}", "step", (json_int_t)s->id, "payload", out ? out : json_null());
	} else {
		task_outcome(vm, t, s, rc, out, e, c->payload);
	}
	if (c->suspend_event && !t->error) {
		free(t->event);
		t->event = c->suspend_event;
		c->suspend_event = NULL;
		t->state = TH_SUSPENDED;
	}
	free(c->suspend_event);
	json_decref(c->payload);
	json_decref(out);
	json_decref(in);
	free(corr);
}

void exec_task_reenter(struct vm *vm, struct thread *t)
{
	json_t *re = t->reentry, *args, *out = NULL;
	const struct step *s = vm->m->steps[json_integer_value(json_object_get(re, "step"))];
	struct err e = {0};
	int rc;

	t->reentry = NULL;
	vm->cur = s;
	vm->cur_t = t;
	args = json_pack("[O]", json_object_get(re, "payload"));
	rc = args ? vm->h->ops->server_task(vm->h->ctx, s->task, "resume", args, &out, NULL, &e)
		  : err_set(&e, ERR_INTERNAL, "out of memory");
	task_outcome(vm, t, s, rc, out, &e, NULL);
	json_decref(out);
	json_decref(args);
	json_decref(re);
}

/* Another branch that could run while this one waits (parallel, parallel loops). */
static bool others_runnable(const struct vm *vm, const struct thread *t)
{
	for (size_t i = 0; i < vm->n_threads; i++)
		if (vm->threads[i] != t && vm->threads[i]->state == TH_RUN)
			return true;
	return false;
}

/* A job the task handed over (task.h): on a thread of its own when another branch can
 * run meanwhile (true: the step ends later, in exec_task_resume), else inline. */
static bool job_in_background(struct vm *vm, struct thread *t, const struct step *s, struct task_ctx *c, json_t *in,
			      char *corr, int64_t start)
{
	struct task_wait *w;

	if (c->payload || c->suspend_event || !others_runnable(vm, t) || !(w = calloc(1, sizeof *w)))
		return false;
	*w = (struct task_wait){.s = s, .job = c->job, .in = in, .corr = corr, .start_ns = start};
	if (vm_job_start(vm, t, w))
		return true;
	free(w);
	return false;
}

int exec_task_inline(struct vm *vm, struct thread *t, const char *task, json_t *in, json_t **out, struct err *e)
{
	const struct task_def *d = task_find(task);
	struct task_ctx c = {.vm = vm, .t = t, .h = vm->h, .task = task};
	json_t *o = NULL;
	int64_t start = dt_mono_ns();
	char *corr;
	int rc;

	*out = NULL;
	if (!d)
		return err_set(e, ERR_NOT_FOUND, "Task not found: '%s'", task);
	if (task_policy_check(vm, task, NULL, in, NULL, e) < 0)
		return -1;
	corr = events_task_pre(vm, t, task, NULL, in);
	rc = run_task(vm, t, d, &c, in, false, &o, e);
	if (rc == 0 && c.job) {
		c.job->run(c.job);
		rc = c.job->finish(c.job, &c, &o, e);
		c.job->free(c.job);
	}
	if (rc == 0 && c.suspend_event)
		rc = err_set(e, ERR_INVALID, "Task '%s' cannot suspend the process when called from a script", task);
	events_task_post(vm, t, task, NULL, corr, (dt_mono_ns() - start) / 1000000, rc < 0 ? e->msg : NULL, o);
	if (rc == 0)
		*out = task_result(t, 0, o, NULL);
	free(corr);
	free(c.suspend_event);
	json_decref(c.payload);
	json_decref(o);
	return rc;
}

void exec_task_step(struct vm *vm, struct thread *t, const struct step *s)
{
	const struct task_def *d = task_find(s->task);
	struct task_ctx c = {.vm = vm, .t = t, .h = vm->h, .task = s->task};
	json_t *in, *out = NULL;
	struct err e = {0};
	int64_t start;
	char *corr;
	int rc;
	if (!d) {
		char msg[512];
		str_fmt_cut(msg, sizeof msg, "Task not found: '%s'", s->task);
		vm_raise(vm, t, s, msg, NULL);
		return;
	}
	if (task_dry_run_check(vm, t, s, s->task, &e) < 0) {
		vm_raise(vm, t, s, e.msg, NULL);
		return;
	}
	if (!(in = exec_eval_in(vm, t, s)))
		return;
	if (task_policy_check(vm, s->task, NULL, in, NULL, &e) < 0) {
		vm_raise(vm, t, s, e.msg, NULL);
		json_decref(in);
		return;
	}
	corr = events_task_pre(vm, t, s->task, NULL, in);
	start = dt_mono_ns();
	rc = run_task(vm, t, d, &c, in, true, &out, &e);
	if (rc == 0 && c.job) {
		if (job_in_background(vm, t, s, &c, in, corr, start))
			return;
		c.job->run(c.job);
		rc = c.job->finish(c.job, &c, &out, &e);
		c.job->free(c.job);
	}
	task_step_end(vm, t, s, &c, rc, in, out, corr, start, &e);
}

void exec_task_resume(struct vm *vm, struct thread *t)
{
	struct task_wait *w = t->wait;
	const struct step *s = w->s;
	struct task_ctx c = {.vm = vm, .t = t, .h = vm->h, .task = s->task};
	json_t *in = w->in, *out = NULL;
	char *corr = w->corr;
	struct err e = {0};
	int rc;

	t->wait = NULL;
	vm->cur = s;
	vm->cur_t = t;
	rc = w->job->finish(w->job, &c, &out, &e);
	w->in = NULL;
	w->corr = NULL;
	task_step_end(vm, t, s, &c, rc, in, out, corr, w->start_ns, &e);
	vm_job_release(w);
}

/* The step's `name:` (a log segment name in Concord) is an expression evaluated on every
 * execution; one that fails to evaluate fails the step at its position. */
static bool eval_name(struct vm *vm, struct thread *t, const struct step *s)
{
	json_t *v;
	if (!s->name || s->name->kind == TV_LIT)
		return true;
	v = eval(vm, t, s->name, NULL);
	json_decref(v);
	return v != NULL;
}

void exec_core(struct vm *vm, struct thread *t, const struct step *s)
{
	vm->cur = s;
	if (!eval_name(vm, t, s))
		return;
	switch (s->kind) {
	case STEP_TASK:
		exec_task_step(vm, t, s);
		break;
	case STEP_LOG:
	case STEP_LOG_YAML:
		exec_log(vm, t, s, s->kind == STEP_LOG_YAML);
		break;
	case STEP_THROW:
		exec_throw(vm, t, s);
		break;
	case STEP_EXPR:
		exec_expr(vm, t, s);
		break;
	case STEP_SET:
		exec_set(vm, t, s);
		break;
	case STEP_IF:
		exec_if(vm, t, s);
		break;
	case STEP_SWITCH:
		exec_switch(vm, t, s);
		break;
	case STEP_CALL:
		exec_call(vm, t, s);
		break;
	case STEP_BLOCK:
		push_list(t, s, s->body, false);
		break;
	case STEP_PARALLEL:
		exec_parallel(vm, t, s);
		break;
	case STEP_CHECKPOINT:
		exec_checkpoint(vm, t, s);
		break;
	case STEP_SUSPEND:
		exec_suspend(vm, t, s);
		break;
	case STEP_FORM:
		forms_call(vm, t, s);
		break;
	case STEP_RETURN:
		exec_return(vm, t, s);
		break;
	case STEP_SCRIPT:
		script_step(vm, t, s);
		break;
	case STEP_EXIT:
		events_step(vm, t, s, "Exit");
		vm->exiting = true;
		break;
	}
}

void exec_layer(struct vm *vm, struct thread *t, const struct step *s, enum layer from)
{
	if (from <= LAYER_LOOP && s->loop) {
		vm_push(t, FR_LOOP, false, s);
		return;
	}
	if (from <= LAYER_RETRY && s->retry) {
		vm_push(t, FR_RETRY, false, s);
		return;
	}
	exec_core(vm, t, s);
}

void exec_step(struct vm *vm, struct thread *t, const struct step *s)
{
	vm->cur = s;
	if (++vm->steps > limits.flow_steps) {
		vm_fatal(vm, t, "Too many steps (limit flow_steps = %llu)", (unsigned long long)limits.flow_steps);
		return;
	}
	if (s->error)
		vm_push(t, FR_TRY, false, s);
	else
		exec_layer(vm, t, s, LAYER_LOOP);
}
