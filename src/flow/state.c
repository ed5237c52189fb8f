#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

/* The VM state as JSON.  Steps and step lists are referred to by their model ids; the
 * model's hash guards against loading a state into a changed definition. */

#define STATE_VERSION 1

static const char *const kind_names[] = {"list", "flow", "try", "loop", "iter", "retry", "parallel"};
static const char *const state_names[] = {"run", "wait", "suspended", "done", "failed"};

static json_t *opt(json_t *v)
{
	return v ? json_incref(v) : json_null();
}

static json_t *frame_save(const struct frame *f)
{
	return json_pack("{s:s, s:b, s:o, s:i, s:i, s:I, s:I, s:i, s:o}", "kind", kind_names[f->kind], "root", f->root,
			 "locals", opt(f->locals), "step", f->step ? f->step->id : -1, "list",
			 f->list ? f->list->id : -1, "pc", (json_int_t)f->pc, "end", (json_int_t)f->end, "phase",
			 f->phase, "data", opt(f->data));
}

static json_t *thread_save(const struct thread *t)
{
	json_t *frames = json_array();
	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(frames, frame_save(&t->frames[i]));
	json_t *j = json_pack("{s:i, s:i, s:s, s:o, s:o, s:b, s:o, s:o}", "id", t->id, "parent", t->parent, "state",
			      state_names[t->state], "event", t->event ? json_string(t->event) : json_null(),
			      "error", opt(t->error), "fatal", t->fatal, "final", opt(t->final), "frames", frames);
	if (j && t->reentry)
		json_object_set(j, "reentry", t->reentry);
	return j;
}

/* A re-entry names a step of this model that calls a server task (vm_internal.h). */
static int reentry_load(struct vm *vm, struct thread *t, json_t *re, struct err *e)
{
	json_t *step = json_object_get(re, "step");
	json_int_t id = json_integer_value(step);
	const struct task_def *d;

	if (!re)
		return 0;
	if (!json_is_integer(step) || id < 0 || id >= (json_int_t)vm->m->n_steps ||
	    vm->m->steps[id]->kind != STEP_TASK || !(d = task_find(vm->m->steps[id]->task)) || !d->server ||
	    !json_object_get(re, "payload") || t->state != TH_SUSPENDED)
		return err_set(e, ERR_INVALID, "invalid process state: bad task re-entry");
	t->reentry = json_incref(re);
	return 0;
}

json_t *vm_save(struct vm *vm)
{
	json_t *threads = json_array();
	for (size_t i = 0; i < vm->n_threads; i++)
		json_array_append_new(threads, thread_save(vm->threads[i]));
	return json_pack("{s:i, s:s, s:i, s:I, s:i, s:O, s:o, s:O}", "version", STATE_VERSION, "definition",
			 vm->m->hash, "nextThreadId", vm->next_thread_id, "steps", (json_int_t)vm->steps, "errorId",
			 vm->next_error_id, "forms", vm->forms, "threads", threads, "sensitive", vm->sensitive);
}

static int name_index(const char *s, const char *const *names, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return (int)i;
	return -1;
}

static json_t *obj_or_null(json_t *v)
{
	return json_is_object(v) ? json_incref(v) : NULL;
}

static int frame_load(struct vm *vm, struct thread *t, json_t *j, struct err *e)
{
	int kind = name_index(json_string_value(json_object_get(j, "kind")), kind_names, 7);
	json_int_t step = json_integer_value(json_object_get(j, "step"));
	json_int_t list = json_integer_value(json_object_get(j, "list"));
	json_int_t pc = json_integer_value(json_object_get(j, "pc")),
		   end = json_integer_value(json_object_get(j, "end"));
	struct frame *f;
	if (kind < 0 || step < -1 || step >= (json_int_t)vm->m->n_steps || list < -1 ||
	    list >= (json_int_t)vm->m->n_lists || pc < 0 || end < 0)
		return err_set(e, ERR_INVALID, "invalid process state: bad frame");
	if ((kind == FR_LIST || kind == FR_FLOW) && (list < 0 || (size_t)end > vm->m->lists[list]->n || pc > end))
		return err_set(e, ERR_INVALID, "invalid process state: bad program counter");
	if (kind != FR_LIST && kind != FR_FLOW && step < 0)
		return err_set(e, ERR_INVALID, "invalid process state: frame without step");
	f = vm_push(t, (enum frame_kind)kind, json_is_true(json_object_get(j, "root")),
		    step >= 0 ? vm->m->steps[step] : NULL);
	json_decref(f->locals);
	f->locals = obj_or_null(json_object_get(j, "locals"));
	if (f->root && !f->locals)
		f->locals = json_object();
	f->list = list >= 0 ? vm->m->lists[list] : NULL;
	f->pc = (size_t)pc;
	f->end = (size_t)end;
	f->phase = (int)json_integer_value(json_object_get(j, "phase"));
	f->data = obj_or_null(json_object_get(j, "data"));
	if (kind == FR_LOOP && f->phase > 0 && (!f->data || !f->step->loop))
		return err_set(e, ERR_INVALID, "invalid process state: bad loop frame");
	if (kind == FR_PARALLEL && !f->data)
		return err_set(e, ERR_INVALID, "invalid process state: bad parallel frame");
	return 0;
}

static int thread_load(struct vm *vm, json_t *j, struct err *e)
{
	json_t *frames = json_object_get(j, "frames"), *f;
	int st = name_index(json_string_value(json_object_get(j, "state")), state_names, 5);
	struct thread *t;
	size_t i;
	if (st < 0 || !json_is_array(frames) || !json_is_integer(json_object_get(j, "id")))
		return err_set(e, ERR_INVALID, "invalid process state: bad thread");
	t = vm_thread_new(vm, (int)json_integer_value(json_object_get(j, "parent")));
	t->id = (int)json_integer_value(json_object_get(j, "id"));
	t->state = (enum thread_state)st;
	if (json_is_string(json_object_get(j, "event")) &&
	    !(t->event = strdup(json_string_value(json_object_get(j, "event")))))
		return oom_fail(e);
	t->error = obj_or_null(json_object_get(j, "error"));
	t->fatal = json_is_true(json_object_get(j, "fatal"));
	t->final = obj_or_null(json_object_get(j, "final"));
	if (t->state == TH_SUSPENDED && !t->event)
		return err_set(e, ERR_INVALID, "invalid process state: suspended thread without event");
	if (reentry_load(vm, t, json_object_get(j, "reentry"), e) < 0)
		return -1;
	json_array_foreach(frames, i, f) if (frame_load(vm, t, f, e) < 0) return -1;
	return 0;
}

struct vm *vm_load(const struct model *m, const struct flow_host *h, json_t *state, struct err *e)
{
	struct vm *vm;
	json_t *threads = json_object_get(state, "threads"), *t;
	const char *def = json_string_value(json_object_get(state, "definition"));
	size_t i;
	if (json_integer_value(json_object_get(state, "version")) != STATE_VERSION || !json_is_array(threads)) {
		err_set(e, ERR_INVALID, "invalid process state");
		return NULL;
	}
	if (!def || strcmp(def, m->hash) != 0) {
		err_set(e, ERR_CONFLICT,
			"the process definition changed since the process was suspended; refusing to resume");
		return NULL;
	}
	vm = vm_new(m, h);
	if (!vm) {
		oom_fail(e);
		return NULL;
	}
	vm->steps = (uint64_t)json_integer_value(json_object_get(state, "steps"));
	vm->next_error_id = (int)json_integer_value(json_object_get(state, "errorId"));
	if (json_is_object(json_object_get(state, "forms")))
		json_object_update(vm->forms, json_object_get(state, "forms"));
	/* the values masked before the suspend stay masked (the host learns them again) */
	json_array_foreach(json_object_get(state, "sensitive"), i, t) if (json_is_string(t)) vm_mark_sensitive(vm, t);
	json_array_foreach(threads, i, t) if (thread_load(vm, t, e) < 0)
	{
		vm_free(vm);
		return NULL;
	}
	vm->next_thread_id = (int)json_integer_value(json_object_get(state, "nextThreadId"));
	return vm;
}
