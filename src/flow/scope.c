#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

/* The keys of a `set` map being evaluated lazily: a sibling is evaluated when first read,
 * and is invisible while it is itself being evaluated (reference §2.5). */
struct lazy {
	const struct tval *map;
	json_t **values;
	unsigned char *state; /* 0 not yet, 1 evaluating, 2 done */
};

void scope_init(struct scope *sc, struct vm *vm, struct thread *t)
{
	memset(sc, 0, sizeof *sc);
	sc->vm = vm;
	sc->t = t;
}

void scope_cleanup(struct scope *sc)
{
	json_decref(sc->keep);
	sc->keep = NULL;
}

static json_t *keep(struct scope *sc, json_t *v)
{
	if (!sc->keep)
		sc->keep = json_array();
	json_array_append_new(sc->keep, v);
	return v;
}

json_t *scope_get(struct thread *t, const char *name)
{
	json_t *v;
	for (size_t i = t->n; i > 0; i--)
		if (t->frames[i - 1].locals && (v = json_object_get(t->frames[i - 1].locals, name)))
			return v;
	if (t->n == 0 && t->final)
		return json_object_get(t->final, name);
	return NULL;
}

/* utf8: name is known to be UTF-8 (a key of the definition: libyaml refuses anything
 * else, or of a JSON object), so jansson's check of it is skipped. */
static void set_local(struct thread *t, const char *name, json_t *v, bool utf8)
{
	struct frame *f = vm_nearest_root(t);
	if (!f) {
		json_decref(v);
		return;
	}
	if (!f->locals)
		f->locals = json_object();
	if (utf8)
		json_object_set_new_nocheck(f->locals, name, v ? v : json_null());
	else
		json_object_set_new(f->locals, name, v ? v : json_null());
}

void scope_set(struct thread *t, const char *name, json_t *v)
{
	set_local(t, name, v, false);
}

json_t *scope_all(struct thread *t)
{
	json_t *all = json_object();
	for (size_t i = 0; i < t->n; i++)
		if (t->frames[i].locals)
			json_object_update(all, t->frames[i].locals);
	return all;
}

static json_t *lazy_get(struct scope *sc, const char *name, struct err *e, int *rc);

static int env_lookup(void *ctx, const char *name, json_t **out, struct err *e)
{
	struct scope *sc = ctx;
	json_t *v;
	int rc = 0;
	if (sc->extra && (v = json_object_get(sc->extra, name))) {
		*out = v;
		return 1;
	}
	if (sc->lazy && (v = lazy_get(sc, name, e, &rc))) {
		*out = v;
		return 1;
	}
	if (rc < 0)
		return -1;
	if (sc->root_only) {
		struct frame *f = sc->t->n ? &sc->t->frames[0] : NULL;
		v = f ? json_object_get(f->locals, name) : sc->t->final ? json_object_get(sc->t->final, name) : NULL;
	} else {
		v = scope_get(sc->t, name);
	}
	if (!v)
		return 0;
	*out = v;
	return 1;
}

static int env_assign(void *ctx, const char *name, json_t *value, struct err *e)
{
	struct scope *sc = ctx;
	(void)e;
	scope_set(sc->t, name, json_incref(value));
	return 0;
}

static bool env_is_task(void *ctx, const char *name)
{
	(void)ctx;
	return task_find(name) != NULL;
}

static int env_call_task(void *ctx, const char *task, const char *method, json_t *args, json_t **out, struct err *e)
{
	struct scope *sc = ctx;
	return task_call_method(sc->vm, sc->t, task, method, args, out, true, e);
}

static int fn_eval_as_map(struct scope *sc, const struct el_env *env, json_t *args, json_t **out, struct err *e)
{
	json_t *v = json_array_get(args, 0);
	(void)sc;
	if (el_json_eval_value(v, EL_JSON_KEYS, env, out, e) < 0)
		return -1;
	if (json_is_object(*out) && scope_expand_dotted(*out, e) < 0) {
		json_decref(*out);
		return -1;
	}
	return 1;
}

static const char *current_flow(struct thread *t)
{
	for (size_t i = t->n; i > 0; i--)
		if (t->frames[i - 1].kind == FR_FLOW)
			return json_string_value(json_object_get(t->frames[i - 1].data, "flow"));
	return NULL;
}

static int env_call_function(void *ctx, const struct el_env *env, const char *name, json_t *args, json_t **out,
			     struct err *e)
{
	struct scope *sc = ctx;
	if (strcmp(name, "allVariables") == 0)
		*out = scope_all(sc->t);
	else if (strcmp(name, "currentFlowName") == 0)
		*out = current_flow(sc->t) ? json_string(current_flow(sc->t)) : json_null();
	else if (strcmp(name, "hasFlow") == 0)
		*out = json_boolean(json_is_string(json_array_get(args, 0)) &&
				    model_flow(sc->vm->m, json_string_value(json_array_get(args, 0))));
	else if (strcmp(name, "evalAsMap") == 0)
		return fn_eval_as_map(sc, env, args, out, e);
	else if (strcmp(name, "isDebug") == 0)
		*out = json_boolean(sc->vm->h->debug);
	else if (strcmp(name, "isDryRun") == 0)
		*out = json_boolean(sc->vm->h->dry_run);
	else if (strcmp(name, "sensitive") == 0 || strcmp(name, "mask") == 0) {
		/* the value as it is, masked in the log from now on */
		*out = json_incref(json_array_get(args, 0) ? json_array_get(args, 0) : json_null());
		vm_mark_sensitive(sc->vm, *out);
	} else
		return 0;
	return 1;
}

void scope_env(struct scope *sc, struct el_env *env)
{
	memset(env, 0, sizeof *env);
	env->ctx = sc;
	env->lookup = env_lookup;
	env->assign = env_assign;
	env->is_task = env_is_task;
	env->call_task = env_call_task;
	env->call_function = env_call_function;
}

int scope_expand_dotted(json_t *obj, struct err *e)
{
	const char *k;
	json_t *v, *copy;
	void *tmp;
	bool any = false;
	json_object_foreach(obj, k, v) any = any || strchr(k, '.');
	if (!any)
		return 0;
	copy = json_copy(obj);
	json_object_clear(obj);
	json_object_foreach_safe(copy, tmp, k, v)
	{
		if (!strchr(k, '.')) {
			json_object_set(obj, k, v);
			continue;
		}
		json_t *nested = json_object();
		if (value_set_path(nested, k, strlen(k), v, e) < 0 || value_merge(obj, nested, e) < 0) {
			json_decref(nested);
			json_decref(copy);
			return -1;
		}
		json_decref(nested);
	}
	json_decref(copy);
	return 0;
}

json_t *scope_eval(struct scope *sc, const struct tval *tv, struct err *e)
{
	struct el_env env;
	json_t *r = NULL;
	switch (tv->kind) {
	case TV_LIT:
		/* A fresh copy of a list or map literal on every evaluation: the model's literal
		 * must never be shared with (and mutated through) a variable. */
		return json_is_array(tv->lit) || json_is_object(tv->lit) ? json_deep_copy(tv->lit)
									 : json_incref(tv->lit);
	case TV_EXPR:
		if (!tv->expr) {
			err_set(e, ERR_INVALID, "%s", tv->error);
			return NULL;
		}
		scope_env(sc, &env);
		return el_eval(tv->expr, &env, &r, e) < 0 ? NULL : r;
	case TV_LIST:
		r = json_array();
		for (size_t i = 0; i < tv->n; i++) {
			json_t *v = scope_eval(sc, tv->items[i], e);
			if (!v)
				goto fail;
			json_array_append_new(r, v);
		}
		return r;
	case TV_MAP:
		r = json_object();
		for (size_t i = 0; i < tv->n; i++) {
			json_t *v = scope_eval(sc, tv->items[i], e);
			if (!v)
				goto fail;
			json_object_set_new(r, tv->keys[i], v);
		}
		if (tv->dotted && scope_expand_dotted(r, e) < 0)
			goto fail;
		return r;
	}
fail:
	json_decref(r);
	return NULL;
}

int scope_eval_bool(struct scope *sc, const struct tval *tv, bool *out, struct err *e)
{
	struct el_env env;
	if (tv->kind != TV_EXPR)
		return value_to_bool(tv->lit, out, e);
	scope_env(sc, &env);
	if (!tv->expr)
		return err_set(e, ERR_INVALID, "%s", tv->error);
	return el_eval_bool(tv->expr, &env, out, e);
}

static json_t *lazy_value(struct scope *sc, size_t i, struct err *e, int *rc)
{
	struct lazy *lz = sc->lazy;
	if (lz->state[i] == 2)
		return lz->values[i];
	if (lz->state[i] == 1)
		return NULL;
	lz->state[i] = 1;
	lz->values[i] = scope_eval(sc, lz->map->items[i], e);
	if (!lz->values[i]) {
		*rc = -1;
		return NULL;
	}
	lz->state[i] = 2;
	return lz->values[i];
}

static json_t *lazy_get(struct scope *sc, const char *name, struct err *e, int *rc)
{
	struct lazy *lz = sc->lazy;
	size_t nlen = strlen(name);
	json_t *merged = NULL;
	for (size_t i = 0; i < lz->map->n; i++)
		if (strcmp(lz->map->keys[i], name) == 0)
			return lazy_value(sc, i, e, rc);
	if (!lz->map->dotted) /* no "name.path" key to merge */
		return NULL;
	for (size_t i = 0; i < lz->map->n && *rc == 0; i++) {
		const char *k = lz->map->keys[i];
		json_t *v;
		if (strncmp(k, name, nlen) != 0 || k[nlen] != '.' || lz->state[i] == 1)
			continue;
		if (!merged) {
			json_t *cur = scope_get(sc->t, name);
			merged = keep(sc, json_is_object(cur) ? json_deep_copy(cur) : json_object());
		}
		v = lazy_value(sc, i, e, rc);
		if (v && value_set_path(merged, k + nlen + 1, strlen(k + nlen + 1), v, e) < 0)
			*rc = -1;
	}
	return *rc < 0 ? NULL : merged;
}

/* key: a key of a `set` map (UTF-8, see set_local). */
static int write_var(struct thread *t, const char *key, json_t *v, struct err *e)
{
	const char *dot = strchr(key, '.');
	json_t *cur, *copy;
	char *first;
	if (!dot) {
		set_local(t, key, json_incref(v), true);
		return 0;
	}
	first = strndup(key, (size_t)(dot - key));
	if (!first)
		return oom_fail(e);
	cur = scope_get(t, first);
	copy = json_is_object(cur) ? json_deep_copy(cur) : json_object();
	if (value_set_path(copy, dot + 1, strlen(dot + 1), v, e) < 0) {
		json_decref(copy);
		free(first);
		return -1;
	}
	scope_set(t, first, copy);
	free(first);
	return 0;
}

#define SET_VARS_ON_STACK 8

/* A `set` of one variable: while its value is evaluated, a lazy map would hide that one
 * key (being evaluated) and nothing else, so the lookups see the frames as here. */
static int set_one(struct scope *sc, const struct tval *map, struct err *e)
{
	json_t *v = scope_eval(sc, map->items[0], e);
	int rc;
	if (!v)
		return -1;
	rc = write_var(sc->t, map->keys[0], v, e);
	json_decref(v);
	return rc;
}

int scope_set_vars(struct scope *sc, const struct tval *map, struct err *e)
{
	struct lazy lz = {.map = map};
	json_t *values_here[SET_VARS_ON_STACK] = {0};
	unsigned char state_here[SET_VARS_ON_STACK] = {0};
	int rc = 0;
	if (map->kind == TV_LIT) {
		const char *k;
		json_t *v;
		json_object_foreach(map->lit, k, v)
		{
			json_t *fresh = json_is_array(v) || json_is_object(v) ? json_deep_copy(v) : json_incref(v);
			int rc2 = write_var(sc->t, k, fresh, e);
			json_decref(fresh);
			if (rc2 < 0)
				return -1;
		}
		return 0;
	}
	if (map->n == 1) /* no sibling to read lazily: the value is read as without one */
		return set_one(sc, map, e);
	/* Most `set` steps set a few variables: their slots live on the stack. */
	if (map->n <= SET_VARS_ON_STACK) {
		lz.values = values_here;
		lz.state = state_here;
	} else {
		lz.values = calloc(map->n + 1, sizeof *lz.values);
		lz.state = calloc(map->n + 1, 1);
	}
	if (!lz.values || !lz.state) {
		free(lz.values);
		free(lz.state);
		return oom_fail(e);
	}
	sc->lazy = &lz;
	for (size_t i = 0; i < map->n && rc == 0; i++)
		if (!lazy_value(sc, i, e, &rc))
			rc = -1;
	sc->lazy = NULL;
	for (size_t i = 0; i < map->n && rc == 0; i++)
		rc = write_var(sc->t, map->keys[i], lz.values[i], e);
	for (size_t i = 0; i < map->n; i++)
		json_decref(lz.values[i]);
	if (lz.values != values_here) {
		free(lz.values);
		free(lz.state);
	}
	return rc;
}
