#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/datetime.h"
#include "base/limits.h"
#include "base/oom.h"
#include "base/str.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

struct vm *vm_new(const struct model *m, const struct flow_host *h)
{
	struct vm *vm = calloc(1, sizeof *vm);
	if (!vm)
		return NULL;
	vm->m = m;
	vm->h = h;
	vm->forms = json_object();
	vm->sensitive = json_array();
	vm->status = VM_RUNNING;
	return vm;
}

void vm_frame_cleanup(struct frame *f)
{
	json_decref(f->locals);
	json_decref(f->data);
	json_decref(f->spare);
	f->locals = f->data = f->spare = NULL;
	f->items = f->next = f->results = NULL;
}

void vm_thread_free(struct thread *t)
{
	if (!t)
		return;
	vm_job_release(t->wait); /* waits for the job's thread: it holds nothing of t's */
	for (size_t i = 0; i < t->n; i++)
		vm_frame_cleanup(&t->frames[i]);
	free(t->frames);
	free(t->event);
	json_decref(t->error);
	json_decref(t->final);
	json_decref(t->reentry);
	free(t);
}

void vm_free(struct vm *vm)
{
	if (!vm)
		return;
	for (size_t i = 0; i < vm->n_threads; i++)
		vm_thread_free(vm->threads[i]);
	free(vm->threads);
	json_decref(vm->forms);
	json_decref(vm->last_error);
	json_decref(vm->resume_args);
	json_decref(vm->sensitive);
	vm_jobs_free(vm);
	free(vm);
}

/* The thread and frame tables cannot do without the memory they ask for: the run stops
 * saying so (the log of a process, accord run's error output). */
_Noreturn static void table_no_memory(const char *what)
{
	fprintf(stderr, "Out of memory: the flow's %s could not grow, the process stops\n", what);
	abort();
}

struct thread *vm_thread_new(struct vm *vm, int parent)
{
	struct thread *t = calloc(1, sizeof *t);
	if (!t)
		table_no_memory("threads");
	if (vm->n_threads == vm->cap_threads) {
		size_t cap = vm->cap_threads ? vm->cap_threads * 2 : 8;
		struct thread **v = realloc(vm->threads, cap * sizeof *v);
		if (!v)
			table_no_memory("threads");
		vm->threads = v;
		vm->cap_threads = cap;
	}
	t->id = vm->next_thread_id++;
	t->parent = parent;
	t->state = TH_RUN;
	vm->threads[vm->n_threads++] = t;
	return t;
}

struct thread *vm_thread_get(struct vm *vm, int id)
{
	for (size_t i = 0; i < vm->n_threads; i++)
		if (vm->threads[i]->id == id)
			return vm->threads[i];
	return NULL;
}

void vm_thread_remove(struct vm *vm, int id)
{
	for (size_t i = 0; i < vm->n_threads; i++)
		if (vm->threads[i]->id == id) {
			vm_thread_free(vm->threads[i]);
			memmove(&vm->threads[i], &vm->threads[i + 1], (vm->n_threads - i - 1) * sizeof *vm->threads);
			vm->n_threads--;
			return;
		}
}

static struct frame *push(struct thread *t, enum frame_kind kind, bool root, const struct step *s, json_t *locals)
{
	struct frame *f;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct frame *v = realloc(t->frames, cap * sizeof *v);
		if (!v)
			table_no_memory("call stack");
		t->frames = v;
		t->cap = cap;
	}
	f = &t->frames[t->n++];
	*f = (struct frame){.kind = kind, .root = root, .step = s, .locals = locals};
	return f;
}

struct frame *vm_push(struct thread *t, enum frame_kind kind, bool root, const struct step *s)
{
	return push(t, kind, root, s, root ? json_object() : NULL);
}

struct frame *vm_push_root(struct thread *t, enum frame_kind kind, const struct step *s, json_t *locals)
{
	return push(t, kind, true, s, locals);
}

struct frame *vm_nearest_root(struct thread *t)
{
	for (size_t i = t->n; i > 0; i--)
		if (t->frames[i - 1].root)
			return &t->frames[i - 1];
	return NULL;
}

void vm_log(struct vm *vm, enum flow_level level, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg && vm->h->ops->log && (level != FLOW_DEBUG || vm->h->debug))
		vm->h->ops->log(vm->h->ctx, level, msg);
	free(msg);
}

void vm_call_stack(struct vm *vm, struct thread *t, struct buf *b)
{
	struct err e;
	/* One stack from the innermost flow out, through the threads that started this one
	 * (parallel branches and loop iterations). */
	for (size_t depth = 0; t && depth <= vm->n_threads; depth++) {
		for (size_t i = t->n; i > 0; i--) {
			const struct frame *f = &t->frames[i - 1];
			if (f->kind != FR_FLOW || !f->step)
				continue;
			if (buf_printf(b, &e, "\n(%s) @ line: %d, col: %d, thread: %d, flow: %s", f->step->file,
				       f->step->line, f->step->col, t->id,
				       json_string_value(json_object_get(f->data, "flow"))) < 0)
				return;
		}
		t = t->parent >= 0 ? vm_thread_get(vm, t->parent) : NULL;
	}
}

static json_t *error_new(struct vm *vm, struct thread *t, const struct step *s, const char *msg, json_t *payload)
{
	json_t *err = json_object();
	json_object_set_new(err, "@id", json_integer(++vm->next_error_id));
	json_object_set_new(err, "message", json_string(msg ? msg : ""));
	if (payload)
		json_object_set(err, "payload", payload);
	if (s) {
		json_t *loc = json_pack("{s:s, s:i, s:i, s:i}", "fileName", s->file, "line", s->line, "column", s->col,
					"thread", t->id);
		json_object_set_new(err, "@location", loc);
	}
	return err;
}

void vm_raise(struct vm *vm, struct thread *t, const struct step *s, const char *msg, json_t *payload)
{
	struct buf b;
	struct err e;
	s = s ? s : vm->cur;
	buf_init(&b, 0);
	if (s && buf_printf(&b, &e, "(%s): Error @ line: %d, col: %d. %s", s->file, s->line, s->col, msg) == 0)
		vm_log(vm, FLOW_ERROR, "%s", b.data);
	else
		vm_log(vm, FLOW_ERROR, "%s", msg);
	buf_reset(&b);
	json_decref(t->error);
	t->error = error_new(vm, t, s, msg, payload);
	if (buf_append_str(&b, "Call stack:", &e) == 0) {
		size_t len = b.len;
		vm_call_stack(vm, t, &b);
		if (b.len > len) {
			vm_log(vm, FLOW_ERROR, "%s", b.data);
			/* kept for the "Parallel execution errors" summary of a parent thread */
			json_object_set_new(t->error, "@callStack", json_string(b.data + len + 1));
		}
	}
	buf_cleanup(&b);
}

void vm_rethrow(struct vm *vm, struct thread *t, json_t *err)
{
	(void)vm;
	json_decref(t->error);
	t->error = json_deep_copy(err);
}

void vm_fatal(struct vm *vm, struct thread *t, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	str_vfmt_cut(msg, sizeof msg, fmt, ap);
	va_end(ap);
	vm_raise(vm, t, NULL, msg, NULL);
	t->fatal = true;
}

static void thread_end(struct vm *vm, struct thread *t, json_t *final)
{
	t->state = t->error || t->fatal ? TH_FAILED : TH_DONE;
	json_decref(t->final);
	t->final = final;
	if (t->parent >= 0)
		frame_child_done(vm, t);
}

static json_t *call_out_values(struct vm *vm, struct thread *t, struct frame *f)
{
	const struct out_spec *o = &f->step->out;
	json_t *res = json_object(), *v;
	struct scope sc;
	struct err e;
	if (o->kind == OUT_NAME || o->kind == OUT_LIST) {
		for (size_t i = 0; i < o->n; i++)
			if ((v = json_object_get(f->locals, o->names[i])))
				json_object_set(res, o->names[i], v);
		return res;
	}
	scope_init(&sc, vm, t);
	v = scope_eval(&sc, o->map, &e);
	if (v && o->kind == OUT_EXPR && json_is_object(v)) {
		/* out: "${outMap}": the map's values (written with \${…}) are evaluated now,
		 * in the called flow's scope. */
		struct el_env env;
		json_t *m = NULL;
		scope_env(&sc, &env);
		if (el_json_eval_value(v, 0, &env, &m, &e) < 0)
			m = NULL;
		json_decref(v);
		v = m;
	}
	scope_cleanup(&sc);
	if (!v) {
		json_decref(res);
		vm_raise(vm, t, f->step, e.msg, NULL);
		return NULL;
	}
	if (o->kind == OUT_EXPR && json_is_array(v)) {
		size_t i;
		json_t *name;
		json_array_foreach(v, i, name)
		{
			json_t *x = json_is_string(name) ? json_object_get(f->locals, json_string_value(name)) : NULL;
			if (x)
				json_object_set(res, json_string_value(name), x);
		}
		json_decref(v);
		return res;
	}
	if (!json_is_object(v)) {
		json_decref(res);
		json_decref(v);
		vm_raise(vm, t, f->step, "'out' must evaluate to a list of names or a map", NULL);
		return NULL;
	}
	json_decref(res);
	return v;
}

void vm_pop_done(struct vm *vm, struct thread *t)
{
	struct frame *f = vm_top(t);
	json_t *out = NULL, *locals;
	size_t index = f->pc;
	bool iter = f->kind == FR_ITER;
	if (f->kind == FR_FLOW && f->step && f->step->out.kind != OUT_NONE) {
		out = call_out_values(vm, t, f);
		if (!out)
			return;
	}
	locals = f->locals;
	f->locals = NULL;
	vm_frame_cleanup(f);
	t->n--;
	if (t->n == 0) {
		json_decref(out);
		thread_end(vm, t, locals);
		return;
	}
	if (out) {
		const char *k;
		json_t *v;
		json_object_foreach(out, k, v) scope_set(t, k, json_incref(v));
		json_decref(out);
	}
	if (iter && vm_top(t)->kind == FR_LOOP) {
		frame_collect_iter(vm, vm_top(t), locals, index);
		frame_iter_done(vm_top(t), locals);
		return;
	}
	json_decref(locals);
}

static void unwind(struct vm *vm, struct thread *t)
{
	json_t *bottom = NULL;
	while (t->n > 0) {
		struct frame *f = vm_top(t);
		if (!t->fatal && frame_catch(vm, t, f))
			return;
		if (t->n == 1) {
			bottom = f->locals; /* kept for out variables of a failed process */
			f->locals = NULL;
		}
		vm_frame_cleanup(f);
		t->n--;
	}
	thread_end(vm, t, bottom);
}

/* An allocation failed while the thread ran (oom_count moved since `before`): a value it
 * built may have lost elements without an error (jansson's setters only return -1), so
 * the step fails, and no error handler runs — it would need memory too. */
static void check_memory(struct vm *vm, struct thread *t, uint64_t before)
{
	if (!t || oom_count() == before || t->fatal || t->state == TH_FAILED)
		return;
	vm_fatal(vm, t,
		 "Out of memory: an allocation failed while running this step, so the process stops (on a server "
		 "the runner's memory is bounded by --limit-runner-memory-bytes)");
	if (t->state == TH_DONE) /* its last step: what it leaves may be incomplete */
		t->state = TH_FAILED;
}

static void thread_step(struct vm *vm, struct thread *t)
{
	struct frame *f;
	if (t->error || t->fatal) {
		unwind(vm, t);
		return;
	}
	f = vm_top(t);
	if (!f) {
		thread_end(vm, t, NULL);
		return;
	}
	if (f->kind == FR_LIST || f->kind == FR_FLOW) {
		if (f->pc < f->end)
			exec_step(vm, t, f->list->v[f->pc++]);
		else
			vm_pop_done(vm, t);
		return;
	}
	frame_run(vm, t, f);
}

static void nap_ns(int64_t ns)
{
	struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
	while (ns > 0 && nanosleep(&ts, &ts) < 0)
		;
}

void vm_sleep(struct vm *vm, struct thread *t, int64_t ms)
{
	size_t others = 0;
	if (ms <= 0)
		return;
	for (size_t i = 0; i < vm->n_threads; i++)
		others += vm->threads[i] != t && vm->threads[i]->state == TH_RUN;
	if (!t || !others) {
		nap_ns(ms * 1000000);
		return;
	}
	t->wake_ns = dt_mono_ns() + ms * 1000000;
}

/* Whether another thread's sleep, also over at `now`, ends before t's: due sleepers wake
 * in the order of their deadlines, not of their threads, so a loaded machine that wakes the
 * VM late still ends a 100 ms sleep before a 300 ms one begun at the same time. */
static bool earlier_due(const struct vm *vm, const struct thread *t, int64_t now)
{
	for (size_t i = 0; i < vm->n_threads; i++) {
		const struct thread *o = vm->threads[i];
		if (o != t && o->state == TH_RUN && !o->wait && o->wake_ns && o->wake_ns <= now &&
		    o->wake_ns < t->wake_ns)
			return true;
	}
	return false;
}

/* One pass over the runnable threads.  *next_wake: the earliest wake-up time of a
 * sleeping thread (0: none sleeps).  A thread whose task waits on a background job is
 * skipped until the job is done, then its step ends here. */
static bool run_round(struct vm *vm, int64_t *next_wake)
{
	bool progress = false;
	int64_t now = 0;
	*next_wake = 0;
	for (size_t i = 0; i < vm->n_threads && !vm->exiting; i++) {
		struct thread *t = vm->threads[i];
		int id = t->id;
		if (t->state != TH_RUN)
			continue;
		if (t->reentry) {
			exec_task_reenter(vm, t);
			progress = true;
			if (t->state != TH_RUN)
				continue;
		}
		if (t->wait) {
			uint64_t before = oom_count();
			int parent = t->parent;
			if (!vm_job_done(vm, t->wait))
				continue;
			exec_task_resume(vm, t);
			progress = true;
			if (i >= vm->n_threads || vm->threads[i]->id != id) {
				check_memory(vm, vm_thread_get(vm, parent), before);
				continue;
			}
			check_memory(vm, t, before);
		}
		if (t->wake_ns) {
			now = now ? now : dt_mono_ns();
			if (t->wake_ns > now || earlier_due(vm, t, now)) {
				if (!*next_wake || t->wake_ns < *next_wake)
					*next_wake = t->wake_ns;
				continue;
			}
			t->wake_ns = 0;
		}
		progress = true;
		vm->cur_t = t;
		for (int q = 0; q < 64 && t->state == TH_RUN && !vm->exiting; q++) {
			uint64_t before = oom_count();
			int parent = t->parent;
			thread_step(vm, t);
			if (i >= vm->n_threads || vm->threads[i]->id != id) {
				/* the thread was collected by its parent, which has its results */
				check_memory(vm, vm_thread_get(vm, parent), before);
				break;
			}
			check_memory(vm, t, before);
			if (t->wake_ns || t->wait)
				break; /* sleeps or waits on a job: the others run meanwhile */
		}
	}
	return progress;
}

enum vm_status vm_run(struct vm *vm)
{
	struct thread *main_t;
	int64_t wake;
	while (!vm->exiting) {
		if (run_round(vm, &wake))
			continue;
		if (vm_jobs_running(vm))
			vm_job_wait(vm, wake); /* every runnable thread waits on a job or sleeps */
		else if (wake)
			nap_ns(wake - dt_mono_ns()); /* every runnable thread sleeps */
		else
			break;
	}
	main_t = vm_thread_get(vm, 0);
	if (vm->exiting || !main_t || main_t->state == TH_DONE) {
		vm->status = VM_FINISHED;
	} else if (main_t->state == TH_FAILED) {
		vm->status = VM_FAILED;
		json_decref(vm->last_error);
		vm->last_error = json_deep_copy(main_t->error);
		json_object_del(vm->last_error, "@location");
		json_object_del(vm->last_error, "@callStack");
	} else {
		vm->status = VM_SUSPENDED;
	}
	return vm->status;
}

/* The request's (or `-a`) arguments are expressions too, evaluated once at the start with
 * the system variables and the other arguments (as given) visible.  NEW or NULL. */
static json_t *eval_args(struct vm *vm, struct thread *t, json_t *args, struct err *e)
{
	struct scope sc;
	struct el_env env;
	json_t *v = NULL;
	scope_init(&sc, vm, t);
	scope_env(&sc, &env);
	if (el_json_eval_value(args, 0, &env, &v, e) < 0)
		v = NULL;
	scope_cleanup(&sc);
	return v;
}

static int args_error(struct err *e)
{
	char msg[ERR_MSG_MAX];
	str_fmt_cut(msg, sizeof msg, "%s", e->msg);
	return err_set(e, e->code == ERR_LIMIT ? ERR_LIMIT : ERR_INVALID,
		       "Error while evaluating process arguments: %s", msg);
}

/* Literal `call:` targets the definition does not have, said once at the start: the loader
 * sees the whole definition, but a call that never runs (a branch not taken) is no error
 * in Concord, so it is a warning here and the failure stays where the step runs. */
static void warn_missing_calls(struct vm *vm)
{
	for (size_t i = 0; i < vm->m->n_steps; i++) {
		const struct step *s = vm->m->steps[i];
		const char *name;

		if (s->kind != STEP_CALL || !s->arg || s->arg->kind != TV_LIT || !json_is_string(s->arg->lit))
			continue;
		name = json_string_value(s->arg->lit);
		if (!model_flow(vm->m, name))
			vm_log(vm, FLOW_WARN,
			       "(%s) @ line: %d, col: %d: 'call: %s' names no flow of this definition: the process "
			       "fails if that step runs",
			       s->file, s->line, s->col, name);
	}
}

/* Under the definition's arguments: a key that both give as maps is the defaults' map with
 * the definition's merged over it, deeply (Concord's deepMerge); any other key stays as the
 * definition set it. */
static int under_defaults(json_t *locals, json_t *defaults, struct err *e)
{
	const char *k;
	json_t *d;

	json_object_foreach(defaults, k, d)
	{
		json_t *cur = json_object_get(locals, k), *copy;

		if (!json_is_object(d) || !json_is_object(cur))
			continue;
		if (!(copy = json_deep_copy(d)))
			return oom_fail(e);
		if (value_merge(copy, cur, e) < 0 || json_object_set_new(locals, k, copy)) {
			if (e->code == 0)
				oom_fail(e);
			return -1;
		}
	}
	return 0;
}

int vm_start(struct vm *vm, const char *entry, json_t *args, json_t *sysvars, struct err *e)
{
	return vm_start_defaults(vm, entry, NULL, args, sysvars, e);
}

static int start_vars(struct vm *vm, const char *entry, json_t *defaults, json_t *args, json_t *sysvars, struct err *e);

/* The variables of the start could have lost a value to a failed allocation unseen. */
int vm_start_defaults(struct vm *vm, const char *entry, json_t *defaults, json_t *args, json_t *sysvars,
		      struct err *e)
{
	uint64_t before = oom_count();
	int rc = start_vars(vm, entry, defaults, args, sysvars, e);

	if (rc == 0 && oom_count() != before)
		return err_set(e, ERR_INTERNAL,
			       "Out of memory: an allocation failed while the process's variables "
			       "were set up");
	return rc;
}

static int start_vars(struct vm *vm, const char *entry, json_t *defaults, json_t *args, json_t *sysvars, struct err *e)
{
	const struct flow_def *fd = model_flow(vm->m, entry);
	json_t *given = NULL, *dflt = NULL;
	struct thread *t;
	struct frame *f;
	struct scope sc;
	int rc = -1;
	if (!fd)
		return err_set(e, ERR_NOT_FOUND, "Flow '%s' not found", entry);
	warn_missing_calls(vm);
	t = vm_thread_new(vm, -1);
	f = vm_push(t, FR_FLOW, true, NULL);
	f->list = fd->body;
	f->end = fd->body->n;
	f->data = json_pack("{s:s}", "flow", fd->name);
	if (sysvars && value_merge(f->locals, sysvars, e) < 0)
		return -1;
	if (json_object_size(defaults)) {
		/* as given first, so that they may refer to each other */
		if (value_merge(f->locals, defaults, e) < 0)
			return -1;
		if (!(dflt = eval_args(vm, t, defaults, e)))
			return args_error(e);
		if (value_merge(f->locals, dflt, e) < 0)
			goto out;
	}
	if (args) {
		if (value_merge(f->locals, args, e) < 0 || (sysvars && value_merge(f->locals, sysvars, e) < 0))
			goto out;
		if (!(given = eval_args(vm, t, args, e))) {
			args_error(e);
			goto out;
		}
		if (value_merge(f->locals, given, e) < 0)
			goto out;
	}
	if (vm->m->arguments) {
		scope_init(&sc, vm, t);
		rc = scope_set_vars(&sc, vm->m->arguments, e);
		scope_cleanup(&sc);
		if (rc < 0) {
			args_error(e);
			goto out;
		}
		rc = -1;
		if (dflt && under_defaults(f->locals, dflt, e) < 0)
			goto out;
		if (given && value_merge(f->locals, given, e) < 0)
			goto out;
	}
	if (sysvars && value_merge(f->locals, sysvars, e) < 0)
		goto out;
	rc = 0;
out:
	json_decref(given);
	json_decref(dflt);
	return rc;
}

static void mark_text(struct vm *vm, const char *s)
{
	size_t i;
	json_t *x;
	if (!s || !*s)
		return;
	json_array_foreach(vm->sensitive, i, x) if (strcmp(json_string_value(x), s) == 0) return;
	json_array_append_new(vm->sensitive, json_string(s));
	if (vm->h->ops->sensitive)
		vm->h->ops->sensitive(vm->h->ctx, s, true);
}

void vm_mark_sensitive(struct vm *vm, const json_t *value)
{
	const char *k;
	json_t *x;
	size_t i;
	char *text;
	if (json_is_string(value)) {
		mark_text(vm, json_string_value(value));
	} else if (json_is_object(value)) {
		json_object_foreach((json_t *)value, k, x) vm_mark_sensitive(vm, x);
	} else if (json_is_array(value)) {
		json_array_foreach(value, i, x) vm_mark_sensitive(vm, x);
	} else if (value && !json_is_null(value) && (text = task_text(value))) {
		mark_text(vm, text);
		free(text);
	}
}

bool vm_is_sensitive(struct vm *vm, const char *value)
{
	size_t i;
	json_t *x;
	if (!value || !*value)
		return false;
	json_array_foreach(vm->sensitive, i, x) if (strcmp(json_string_value(x), value) == 0) return true;
	return vm->h->ops->sensitive && vm->h->ops->sensitive(vm->h->ctx, value, false);
}

void vm_set_sysvars(struct vm *vm, json_t *sysvars)
{
	const char *k;
	json_t *v;
	if (!json_is_object(sysvars))
		return;
	for (size_t i = 0; i < vm->n_threads; i++) {
		struct thread *t = vm->threads[i];
		for (size_t j = 0; j < t->n; j++) {
			json_t *l = t->frames[j].locals;
			bool bottom = t->id == 0 && j == 0;
			if (!json_is_object(l))
				continue;
			json_object_foreach(sysvars, k, v) if (bottom || json_object_get(l, k))
			    json_object_set(l, k, v);
		}
	}
}

json_t *vm_last_error(struct vm *vm)
{
	return vm->last_error;
}

json_t *vm_waiting_events(struct vm *vm)
{
	json_t *a = json_array();
	for (size_t i = 0; i < vm->n_threads; i++)
		if (vm->threads[i]->state == TH_SUSPENDED)
			json_array_append_new(a, json_string(vm->threads[i]->event));
	return a;
}

json_t *vm_pending_forms(struct vm *vm)
{
	return json_incref(vm->forms);
}

json_t *vm_out_vars(struct vm *vm, json_t *names)
{
	json_t *res = json_object(), *name;
	struct thread *t = vm_thread_get(vm, 0);
	size_t i;
	if (!t)
		return res;
	json_array_foreach(names, i, name)
	{
		struct scope sc;
		struct el_env env;
		struct err e;
		json_t *v = NULL;
		char *text = NULL;
		const char *n = json_string_value(name);
		if (!n || asprintf(&text, "${%s}", n) < 0)
			continue;
		scope_init(&sc, vm, t);
		sc.root_only = true;
		scope_env(&sc, &env);
		if (el_eval_template(text, strlen(text), &env, &v, &e) == 0 && v && !json_is_null(v))
			json_object_set(res, n, v);
		json_decref(v);
		scope_cleanup(&sc);
		free(text);
	}
	return res;
}

static void wake(struct thread *t, json_t *args)
{
	free(t->event);
	t->event = NULL;
	t->state = TH_RUN;
	for (size_t i = 0; args && i < t->n; i++) {
		const char *k;
		json_t *v;
		if (!t->frames[i].root)
			continue;
		json_object_foreach(args, k, v) json_object_set(t->frames[i].locals, k, v);
	}
}

int vm_resume(struct vm *vm, const char *name, json_t *args, struct err *e)
{
	json_t *form = json_object_get(vm->forms, name), *values = NULL, *wrapped;
	const char *event = name;
	bool found = false;
	if (form) {
		event = json_string_value(json_object_get(form, "eventName"));
		if (forms_submit(vm, name, args, &values, e) < 0)
			return -1;
		wrapped = json_pack("{s:o}", name, values);
	} else {
		wrapped = args ? json_incref(args) : NULL;
	}
	for (size_t i = 0; i < vm->n_threads; i++) {
		struct thread *t = vm->threads[i];
		if (t->state == TH_SUSPENDED && event && t->event && strcmp(t->event, event) == 0) {
			wake(t, wrapped);
			found = true;
		}
	}
	json_decref(wrapped);
	if (form && found)
		json_object_del(vm->forms, name);
	if (!form && found) {
		/* Resumed by a form's event (as Concord's server does after a submission, with the
		 * values in args): that form is no longer pending. */
		const char *k;
		void *tmp;
		json_t *f;
		json_object_foreach_safe(vm->forms, tmp, k, f)
		{
			const char *fe = json_string_value(json_object_get(f, "eventName"));
			if (fe && strcmp(fe, name) == 0)
				json_object_del(vm->forms, k);
		}
	}
	if (!found)
		return err_set(e, ERR_NOT_FOUND, "the process does not wait for '%s'", name);
	vm->status = VM_RUNNING;
	return 0;
}
