#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/limits.h"
#include "base/str.h"
#include "flow/entry.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

static json_t *eval(struct vm *vm, struct thread *t, const struct tval *tv)
{
	struct scope sc;
	struct err e;
	json_t *v;
	scope_init(&sc, vm, t);
	v = scope_eval(&sc, tv, &e);
	scope_cleanup(&sc);
	if (!v)
		vm_raise(vm, t, NULL, e.msg, NULL);
	return v;
}

static int eval_int(struct vm *vm, struct thread *t, const struct tval *tv, long long dflt, long long *out)
{
	json_t *v;
	int64_t n;
	struct err e;
	*out = dflt;
	if (!tv)
		return 0;
	if (!(v = eval(vm, t, tv)))
		return -1;
	if (value_to_long(v, &n, &e) < 0) {
		json_decref(v);
		vm_raise(vm, t, NULL, e.msg, NULL);
		return -1;
	}
	json_decref(v);
	*out = n;
	return 0;
}

static void sleep_ms(long long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000};
	while (ms > 0 && nanosleep(&ts, &ts) < 0)
		;
}

/* The names a looped step collects into lists.  An `out:` expression is evaluated at the
 * loop's start: a list gives the names, a map its keys (the values are evaluated after
 * each call, see call_out_values). */
static int out_names(struct vm *vm, struct thread *t, const struct step *s, json_t *names)
{
	const char *k;
	json_t *v, *x;
	size_t i;
	if (s->out.kind == OUT_NAME || s->out.kind == OUT_LIST)
		for (i = 0; i < s->out.n; i++)
			json_array_append_new(names, json_string(s->out.names[i]));
	else if (s->out.kind == OUT_MAP && s->out.map->kind == TV_MAP)
		for (i = 0; i < s->out.map->n; i++)
			json_array_append_new(names, json_string(s->out.map->keys[i]));
	else if (s->out.kind == OUT_MAP && s->out.map->kind == TV_LIT) {
		json_object_foreach(s->out.map->lit, k, v) json_array_append_new(names, json_string(k));
	} else if (s->out.kind == OUT_EXPR) {
		if (!(v = eval(vm, t, s->out.map)))
			return -1;
		if (json_is_array(v)) {
			json_array_foreach(v, i, x) if (json_is_string(x)) json_array_append(names, x);
		} else if (json_is_object(v)) {
			json_object_foreach(v, k, x) json_array_append_new(names, json_string(k));
		}
		json_decref(v);
	}
	return 0;
}

/* Loop items as a list: maps become {key, value} entries; null and empty lists skip. */
static json_t *loop_items(struct vm *vm, struct thread *t, const struct step *s)
{
	json_t *v = eval(vm, t, s->loop->items), *list;
	const char *k;
	json_t *x;
	if (!v)
		return NULL;
	if (json_is_array(v))
		return v;
	if (json_is_null(v))
		list = json_array();
	else if (json_is_object(v)) {
		list = json_array();
		json_object_foreach(v, k, x) json_array_append_new(list, entry_new(k, x));
	} else {
		char *text = task_text(v), msg[512];
		str_fmt_cut(msg, sizeof msg, "Invalid loop items: expected a list or a map, got '%s' (%s)",
			    text ? text : "", value_class_name(v));
		free(text);
		json_decref(v);
		vm_raise(vm, t, s, msg, NULL);
		return NULL;
	}
	json_decref(v);
	return list;
}

static long long cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

static int loop_start(struct vm *vm, struct thread *t, struct frame *f)
{
	const struct step *s = f->step;
	json_t *items = loop_items(vm, t, s), *names, *results, *cfg;
	long long par = cpus();
	size_t n, i;
	json_t *name;
	if (!items)
		return -1;
	n = json_array_size(items);
	if (n > limits.flow_loop_items) {
		json_decref(items);
		vm_fatal(vm, t, "Too many loop items: %zu (limit flow_loop_items = %zu)", n, limits.flow_loop_items);
		return -1;
	}
	cfg = json_object_get(vm->m->configuration, "parallelLoopParallelism");
	if (json_is_integer(cfg))
		par = json_integer_value(cfg);
	if (s->loop->unlimited)
		par = (long long)n;
	if (eval_int(vm, t, s->loop->parallelism, par, &par) < 0) {
		json_decref(items);
		return -1;
	}
	names = json_array();
	if (out_names(vm, t, s, names) < 0) {
		json_decref(names);
		json_decref(items);
		return -1;
	}
	results = json_object();
	json_array_foreach(names, i, name)
	{
		json_t *list = json_array();
		for (size_t j = 0; j < n; j++)
			json_array_append_new(list, json_null());
		json_object_set_new(results, json_string_value(name), list);
	}
	json_decref(names);
	f->data = json_pack("{s:o, s:i, s:o, s:{}, s:[], s:I}", "items", items, "next", 0, "results", results,
			    "children", "errors", "parallelism", (json_int_t)(par < 1 ? 1 : par));
	f->phase = 1;
	return 0;
}

/* The keys are literals: the _nocheck setters skip jansson's UTF-8 scan of each, which
 * showed in every loop iteration's profile (bench/flows loop). */
static json_t *iter_locals(json_t *items, size_t index, json_t *base)
{
	json_t *l = base ? base : json_object();
	json_object_set_nocheck(l, "item", json_array_get(items, index));
	json_object_set_new_nocheck(l, "itemIndex", json_integer((json_int_t)index));
	json_object_set_nocheck(l, "items", items);
	return l;
}

static const char *const iter_keys[] = {"item", "itemIndex", "items"};

/* Replaces an integer that nothing else holds in place (a fresh one otherwise): the loop's
 * counters change every iteration and need no allocation for that. */
static void set_count(json_t *obj, void *it, json_t *cur, size_t n)
{
	if (json_is_integer(cur) && cur->refcount == 1)
		json_integer_set(cur, (json_int_t)n);
	else
		json_object_iter_set_new(obj, it, json_integer((json_int_t)n));
}

/* The previous iteration's locals (l, owned by the loop alone) made into the next one's:
 * the same object as iter_locals builds, keys in the same order (the saved state does not
 * change), without freeing and allocating its table, pairs and counter.  The keys the
 * previous iteration added go; its first three are replaced in place through iterators. */
static json_t *iter_locals_reuse(json_t *items, size_t index, json_t *l)
{
	void *it = json_object_iter(l), *first = it, *rest;
	for (size_t i = 0; i < 3; i++, it = json_object_iter_next(l, it))
		if (!it || strcmp(json_object_iter_key(it), iter_keys[i]) != 0) {
			json_object_clear(l); /* its iteration changed the first keys: built anew */
			return iter_locals(items, index, l);
		}
	for (rest = it; rest;) {
		const char *k = json_object_iter_key(rest);
		rest = json_object_iter_next(l, rest);
		json_object_del(l, k);
	}
	it = first;
	if (json_object_iter_value(it) != json_array_get(items, index))
		json_object_iter_set(l, it, json_array_get(items, index));
	it = json_object_iter_next(l, it);
	set_count(l, it, json_object_iter_value(it), index);
	it = json_object_iter_next(l, it);
	if (json_object_iter_value(it) != items)
		json_object_iter_set(l, it, items);
	return l;
}

void frame_iter_done(struct frame *loop, json_t *locals)
{
	if (!loop->spare && locals && locals->refcount == 1 && !loop->step->loop->parallel)
		loop->spare = locals;
	else
		json_decref(locals);
}

/* A value of the loop's data through the frame's slot: looked up once per frame (the
 * frame's data never replaces its items or results; `next` see loop_serial). */
static json_t *loop_slot(struct frame *f, json_t **slot, const char *key)
{
	if (!*slot)
		*slot = json_object_get(f->data, key);
	return *slot;
}

void frame_collect_iter(struct vm *vm, struct frame *loop, json_t *locals, size_t index)
{
	json_t *results = loop_slot(loop, &loop->results, "results"), *list;
	const char *k;
	(void)vm;
	json_object_foreach(results, k, list)
	{
		json_t *v = locals ? json_object_get(locals, k) : NULL;
		if (v)
			json_array_set(list, index, v);
	}
}

static void loop_finish(struct vm *vm, struct thread *t, struct frame *f)
{
	json_t *results = json_object_get(f->data, "results"), *list;
	const char *k;
	json_object_foreach(results, k, list) scope_set(t, k, json_incref(list));
	vm_pop_done(vm, t);
}

/* The loop's items and counter stay in its data (what vm_save writes), read through the
 * frame's slots; the counter is replaced in place while nothing else holds it. */
static void loop_serial(struct vm *vm, struct thread *t, struct frame *f)
{
	json_t *items = loop_slot(f, &f->items, "items"), *cur = loop_slot(f, &f->next, "next"), *l;
	size_t next = (size_t)json_integer_value(cur);
	const struct step *s = f->step;
	struct frame *it;
	if (next >= json_array_size(items)) {
		loop_finish(vm, t, f);
		return;
	}
	if (json_is_integer(cur) && cur->refcount == 1) {
		json_integer_set(cur, (json_int_t)next + 1);
	} else {
		json_object_set_new_nocheck(f->data, "next", json_integer((json_int_t)next + 1));
		f->next = NULL;
	}
	l = f->spare ? iter_locals_reuse(items, next, f->spare) : iter_locals(items, next, NULL);
	f->spare = NULL;
	it = vm_push_root(t, FR_ITER, s, l); /* f is not valid after this */
	it->pc = next;
}

/* Takes in the results of finished child threads; returns how many still run. */
static size_t collect_children(struct vm *vm, struct frame *f, bool iter)
{
	json_t *children = json_object_get(f->data, "children"), *idx;
	const char *k;
	void *tmp;
	size_t running = 0;
	json_object_foreach_safe(children, tmp, k, idx)
	{
		int64_t tid = -1;
		struct err ignored;
		struct thread *c = str_to_i64(str_from(k), 0, INT32_MAX, &tid, "thread", &ignored) == 0
				       ? vm_thread_get(vm, (int)tid)
				       : NULL;
		size_t index = (size_t)json_integer_value(idx);
		if (c && c->state != TH_DONE && c->state != TH_FAILED) {
			running++;
			continue;
		}
		if (c && c->state == TH_FAILED) {
			json_t *err = json_deep_copy(c->error);
			json_object_set_new(err, "threadId", json_integer(c->id));
			json_array_append_new(json_object_get(f->data, "errors"), err);
		} else if (c && iter) {
			frame_collect_iter(vm, f, c->final, index);
		} else if (c) {
			char key[32];
			if (str_fmt(key, sizeof key, "%zu", index)) /* always fits */
				abort();
			json_object_set(json_object_get(f->data, "finals"), key, c->final ? c->final : json_null());
		}
		if (c)
			vm_thread_remove(vm, c->id);
		json_object_del(children, k);
	}
	return running;
}

/* Appends text with every line after the first indented by `indent`. */
static int append_indented(struct buf *b, const char *text, const char *indent, struct err *e)
{
	for (const char *p = text; *p; p++) {
		if (buf_append(b, p, 1, e) < 0)
			return -1;
		if (*p == '\n' && buf_append_str(b, indent, e) < 0)
			return -1;
	}
	return 0;
}

/* Concord's summary: entries numbered from [1], each with its error and, indented inside
 * it, the call stack of the thread that failed. */
static void raise_parallel(struct vm *vm, struct thread *t, struct frame *f)
{
	json_t *errors = json_object_get(f->data, "errors"), *err, *payload;
	struct buf b;
	struct err e;
	size_t i;
	buf_init(&b, 0);
	if (buf_append_str(&b, "Parallel execution errors: ", &e) < 0)
		return;
	json_array_foreach(errors, i, err)
	{
		json_t *loc = json_object_get(err, "@location");
		const char *stack = json_string_value(json_object_get(err, "@callStack"));
		if (buf_printf(&b, &e, "\n[%zu] (%s): Error @ line: %d, col: %d, thread: %d\n  Error: ", i + 1,
			       json_string_value(json_object_get(loc, "fileName")),
			       (int)json_integer_value(json_object_get(loc, "line")),
			       (int)json_integer_value(json_object_get(loc, "column")),
			       (int)json_integer_value(json_object_get(err, "threadId"))) < 0 ||
		    append_indented(&b, json_string_value(json_object_get(err, "message")), "  ", &e) < 0)
			break;
		if (stack &&
		    (buf_append_str(&b, "\n  Call stack:\n    ", &e) < 0 || append_indented(&b, stack, "    ", &e) < 0))
			break;
	}
	payload = json_deep_copy(errors);
	json_array_foreach(payload, i, err) json_object_del(err, "@callStack");
	vm_raise(vm, t, f->step, b.data, NULL);
	json_object_set_new(t->error, "exceptions", payload);
	buf_cleanup(&b);
}

static void spawn_iteration(struct vm *vm, struct thread *t, struct frame *f, size_t index)
{
	struct thread *c = vm_thread_new(vm, t->id);
	struct frame *it = vm_push(c, FR_ITER, true, f->step);
	char id[32];
	json_decref(it->locals);
	it->locals = iter_locals(json_object_get(f->data, "items"), index, scope_all(t));
	it->pc = index;
	if (str_fmt(id, sizeof id, "%d", c->id)) /* always fits */
		abort();
	json_object_set_new(json_object_get(f->data, "children"), id, json_integer((json_int_t)index));
}

static size_t live_threads(struct vm *vm)
{
	size_t n = 0;
	for (size_t i = 0; i < vm->n_threads; i++)
		n += vm->threads[i]->state != TH_DONE && vm->threads[i]->state != TH_FAILED;
	return n;
}

static void loop_parallel(struct vm *vm, struct thread *t, struct frame *f)
{
	size_t running = collect_children(vm, f, true);
	size_t n = json_array_size(json_object_get(f->data, "items"));
	size_t next = (size_t)json_integer_value(json_object_get(f->data, "next"));
	size_t par = (size_t)json_integer_value(json_object_get(f->data, "parallelism"));
	bool failed = json_array_size(json_object_get(f->data, "errors")) > 0;
	while (!failed && !vm->exiting && next < n && running < par) {
		if (live_threads(vm) >= limits.flow_threads) {
			vm_fatal(vm, t, "Too many threads (limit flow_threads = %zu)", limits.flow_threads);
			return;
		}
		spawn_iteration(vm, t, f, next++);
		running++;
	}
	json_object_set_new(f->data, "next", json_integer((json_int_t)next));
	if (running > 0) {
		t->state = TH_WAIT;
		return;
	}
	if (failed)
		raise_parallel(vm, t, f);
	else
		loop_finish(vm, t, f);
}

static void parallel_done(struct vm *vm, struct thread *t, struct frame *f)
{
	const struct step *s = f->step;
	json_t *finals = json_object_get(f->data, "finals"), *all = json_object(), *fin;
	char key[32];
	if (s->out.kind == OUT_LIST || s->out.kind == OUT_NAME) {
		for (size_t i = 0; i < s->body->n; i++) {
			if (str_fmt(key, sizeof key, "%zu", i)) /* always fits */
				abort();
			fin = json_object_get(finals, key);
			for (size_t j = 0; j < s->out.n; j++) {
				json_t *v = json_object_get(fin, s->out.names[j]);
				if (v)
					scope_set(t, s->out.names[j], json_incref(v));
			}
		}
	} else if (s->out.kind == OUT_MAP) {
		struct scope sc;
		struct err e;
		json_t *m;
		for (size_t i = 0; i < s->body->n; i++) {
			if (str_fmt(key, sizeof key, "%zu", i)) /* always fits */
				abort();
			if (json_is_object(fin = json_object_get(finals, key)))
				json_object_update(all, fin);
		}
		scope_init(&sc, vm, t);
		sc.extra = all;
		m = scope_eval(&sc, s->out.map, &e);
		scope_cleanup(&sc);
		if (!m) {
			json_decref(all);
			vm_raise(vm, t, s, e.msg, NULL);
			return;
		}
		const char *k;
		json_t *v;
		json_object_foreach(m, k, v) scope_set(t, k, json_incref(v));
		json_decref(m);
	}
	json_decref(all);
	vm_pop_done(vm, t);
}

static void run_parallel(struct vm *vm, struct thread *t, struct frame *f)
{
	if (collect_children(vm, f, false) > 0) {
		t->state = TH_WAIT;
		return;
	}
	if (json_array_size(json_object_get(f->data, "errors")) > 0)
		raise_parallel(vm, t, f);
	else
		parallel_done(vm, t, f);
}

void frame_run(struct vm *vm, struct thread *t, struct frame *f)
{
	switch (f->kind) {
	case FR_TRY:
		if (f->phase == 0) {
			f->phase = 1;
			exec_layer(vm, t, f->step, LAYER_LOOP);
		} else {
			vm_pop_done(vm, t);
		}
		return;
	case FR_LOOP:
		if (f->phase == 0 && loop_start(vm, t, f) < 0)
			return;
		if (f->step->loop->parallel)
			loop_parallel(vm, t, f);
		else
			loop_serial(vm, t, f);
		return;
	case FR_ITER:
	case FR_RETRY:
		if (f->phase == 0) {
			f->phase = 1;
			if (f->kind == FR_ITER)
				exec_layer(vm, t, f->step, LAYER_RETRY);
			else
				exec_core(vm, t, f->step);
		} else {
			vm_pop_done(vm, t);
		}
		return;
	case FR_PARALLEL:
		run_parallel(vm, t, f);
		return;
	default:
		return;
	}
}

static bool retry_catch(struct vm *vm, struct thread *t, struct frame *f)
{
	long long times, delay;
	json_t *err = t->error;
	const struct step *s = f->step;
	t->error = NULL; /* evaluate times/delay without the pending error */
	if (eval_int(vm, t, s->retry->times, 1, &times) < 0 || eval_int(vm, t, s->retry->delay, 5, &delay) < 0) {
		json_decref(err);
		return false;
	}
	if ((long long)f->pc >= times) {
		t->error = err;
		return false;
	}
	vm_log(vm, FLOW_WARN, "Last error: %s. Waiting for %lldms before retry (attempt #%zu)",
	       json_string_value(json_object_get(err, "message")), delay * 1000, f->pc);
	json_decref(err);
	sleep_ms(delay * 1000);
	f->pc++;
	f->phase = 0;
	return true;
}

bool frame_catch(struct vm *vm, struct thread *t, struct frame *f)
{
	if (f->kind == FR_TRY && f->phase == 1 && f->step->error) {
		f->phase = 2;
		f->locals = json_object();
		json_object_del(t->error, "@callStack");
		json_object_set_new(f->locals, "lastError", t->error);
		t->error = NULL;
		struct frame *l = vm_push(t, FR_LIST, false, f->step);
		l->list = f->step->error;
		l->end = f->step->error->n;
		return true;
	}
	if (f->kind == FR_RETRY && f->phase == 1)
		return retry_catch(vm, t, f);
	return false;
}

void frame_child_done(struct vm *vm, struct thread *child)
{
	struct thread *p = vm_thread_get(vm, child->parent);
	if (p && p->state == TH_WAIT)
		p->state = TH_RUN;
}
