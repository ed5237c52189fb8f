/* Method calls: value.m(args) on lists, maps, numbers and booleans (strings are in
 * strings.c), task.m(args) through the env, Class.m(args) through funcs.c. */
#include "flow/el/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flow/entry.h"
#include "flow/value.h"

static int no_method(struct el_ctx *c, const char *name, const char *cls)
{
	return el_fail(c, ERR_INVALID, "Can't find '%s()' method in %s", name, cls);
}

static int ret_json(struct el_ctx *c, json_t *j, struct ev *out)
{
	if (!j)
		return el_no_memory(c);
	*out = el_ev_json(j);
	return 0;
}

static int ret_int(struct el_ctx *c, int64_t v, struct ev *out)
{
	return ret_json(c, json_integer(v), out);
}

static int ret_bool(struct el_ctx *c, bool b, struct ev *out)
{
	return ret_json(c, json_boolean(b), out);
}

/* Borrowed value (null stands for a missing one). */
static json_t *ret_borrowed(json_t *j)
{
	return json_incref(j ? j : json_null());
}

static int index_of(json_t *list, json_t *v, bool last)
{
	size_t i, n = json_array_size(list);
	int found = -1;

	for (i = 0; i < n; i++) {
		if (value_equals(json_array_get(list, i), v)) {
			found = (int)i;
			if (!last)
				break;
		}
	}
	return found;
}

static int list_index(struct el_ctx *c, json_t *list, json_t *arg, bool allow_end, size_t *out)
{
	int64_t i;
	size_t n = json_array_size(list);

	if (el_to_long(c, arg, &i) < 0)
		return -1;
	if (i < 0 || (uint64_t)i > n || (!allow_end && (uint64_t)i == n))
		return el_fail(c, ERR_INVALID, "Index %lld out of bounds for length %zu", (long long)i, n);
	*out = (size_t)i;
	return 0;
}

static int list_method_0(struct el_ctx *c, json_t *l, const char *name, struct ev *out)
{
	if (strcmp(name, "size") == 0)
		return ret_int(c, (int64_t)json_array_size(l), out);
	if (strcmp(name, "isEmpty") == 0)
		return ret_bool(c, json_array_size(l) == 0, out);
	if (strcmp(name, "stream") == 0) {
		json_t *copy = json_array();
		if (!copy || json_array_extend(copy, l) < 0) {
			json_decref(copy);
			return el_no_memory(c);
		}
		*out = (struct ev){.kind = EV_STREAM, .j = copy};
		return 0;
	}
	if (strcmp(name, "clear") == 0) {
		json_array_clear(l);
		return ret_json(c, json_null(), out);
	}
	return 1;
}

static int list_add(struct el_ctx *c, json_t *l, json_t *a, json_t *b, struct ev *out)
{
	size_t i;

	if (!b) {
		if (el_check_store(c, l, a) < 0)
			return -1;
		json_array_append(l, a);
		return ret_bool(c, true, out);
	}
	if (list_index(c, l, a, true, &i) < 0 || el_check_store(c, l, b) < 0)
		return -1;
	json_array_insert(l, i, b);
	return ret_json(c, json_null(), out);
}

static int list_sublist(struct el_ctx *c, json_t *l, json_t *a, json_t *b, struct ev *out)
{
	size_t from, to, i;
	json_t *r;

	if (list_index(c, l, a, true, &from) < 0 || list_index(c, l, b, true, &to) < 0)
		return -1;
	if (from > to)
		return el_fail(c, ERR_INVALID, "fromIndex(%zu) > toIndex(%zu)", from, to);
	if (!(r = json_array()))
		return el_no_memory(c);
	for (i = from; i < to; i++)
		json_array_append(r, json_array_get(l, i));
	*out = el_ev_json(r);
	return 0;
}

static int list_method_1(struct el_ctx *c, json_t *l, const char *name, json_t *a, struct ev *out)
{
	size_t i;

	if (strcmp(name, "get") == 0) {
		if (list_index(c, l, a, false, &i) < 0)
			return -1;
		return ret_json(c, ret_borrowed(json_array_get(l, i)), out);
	}
	if (strcmp(name, "contains") == 0)
		return ret_bool(c, index_of(l, a, false) >= 0, out);
	if (strcmp(name, "indexOf") == 0 || strcmp(name, "lastIndexOf") == 0)
		return ret_int(c, index_of(l, a, name[0] == 'l'), out);
	if (strcmp(name, "add") == 0)
		return list_add(c, l, a, NULL, out);
	if (strcmp(name, "addAll") == 0 || strcmp(name, "containsAll") == 0) {
		size_t k;
		if (!json_is_array(a))
			return no_method(c, name, "java.util.ArrayList");
		if (name[0] == 'c') {
			for (k = 0; k < json_array_size(a); k++)
				if (index_of(l, json_array_get(a, k), false) < 0)
					return ret_bool(c, false, out);
			return ret_bool(c, true, out);
		}
		if (el_check_store(c, l, a) < 0)
			return -1;
		k = json_array_size(a);
		json_array_extend(l, a);
		return ret_bool(c, k > 0, out);
	}
	if (strcmp(name, "remove") == 0) {
		int k;
		json_t *old;
		if (!json_is_integer(a)) {
			k = index_of(l, a, false);
			if (k >= 0)
				json_array_remove(l, (size_t)k);
			return ret_bool(c, k >= 0, out);
		}
		if (list_index(c, l, a, false, &i) < 0)
			return -1;
		old = json_incref(json_array_get(l, i));
		json_array_remove(l, i);
		return ret_json(c, old, out);
	}
	return 1;
}

static int list_method_2(struct el_ctx *c, json_t *l, const char *name, json_t *a, json_t *b, struct ev *out)
{
	size_t i;

	if (strcmp(name, "add") == 0)
		return list_add(c, l, a, b, out);
	if (strcmp(name, "subList") == 0)
		return list_sublist(c, l, a, b, out);
	if (strcmp(name, "set") == 0) {
		json_t *old;
		if (list_index(c, l, a, false, &i) < 0 || el_check_store(c, l, b) < 0)
			return -1;
		old = json_incref(json_array_get(l, i));
		json_array_set(l, i, b);
		return ret_json(c, old, out);
	}
	return 1;
}

static int map_key(struct el_ctx *c, json_t *k, json_t **out)
{
	*out = json_is_null(k) ? json_string("null") : el_to_string(c, k);
	return *out ? 0 : el_no_memory(c);
}

static int map_method_0(struct el_ctx *c, json_t *m, const char *name, struct ev *out)
{
	const char *key;
	json_t *v, *r;

	if (strcmp(name, "size") == 0)
		return ret_int(c, (int64_t)json_object_size(m), out);
	if (strcmp(name, "isEmpty") == 0)
		return ret_bool(c, json_object_size(m) == 0, out);
	if (strcmp(name, "clear") == 0) {
		json_object_clear(m);
		return ret_json(c, json_null(), out);
	}
	if (strcmp(name, "keySet") != 0 && strcmp(name, "values") != 0 && strcmp(name, "entrySet") != 0)
		return 1;
	if (!(r = json_array()))
		return el_no_memory(c);
	json_object_foreach(m, key, v)
	{
		if (name[0] == 'k')
			json_array_append_new(r, json_string_nocheck(key));
		else if (name[0] == 'v')
			json_array_append(r, v);
		else
			json_array_append_new(r, entry_new(key, v));
	}
	*out = el_ev_json(r);
	return 0;
}

static int map_method_1(struct el_ctx *c, json_t *m, const char *name, json_t *a, struct ev *out)
{
	json_t *k = NULL, *v;
	const char *key;
	int rc;

	if (strcmp(name, "containsValue") == 0) {
		json_object_foreach(m, key, v) if (value_equals(v, a)) return ret_bool(c, true, out);
		return ret_bool(c, false, out);
	}
	if (strcmp(name, "putAll") == 0) {
		if (!json_is_object(a))
			return no_method(c, name, "java.util.LinkedHashMap");
		if (el_check_store(c, m, a) < 0)
			return -1;
		json_object_update(m, a);
		return ret_json(c, json_null(), out);
	}
	if (strcmp(name, "containsKey") != 0 && strcmp(name, "get") != 0 && strcmp(name, "remove") != 0)
		return 1;
	if (map_key(c, a, &k) < 0)
		return -1;
	v = json_object_getn(m, json_string_value(k), json_string_length(k));
	if (name[0] == 'c')
		rc = ret_bool(c, v != NULL, out);
	else
		rc = ret_json(c, ret_borrowed(v), out);
	if (name[0] == 'r' && v)
		json_object_deln(m, json_string_value(k), json_string_length(k));
	json_decref(k);
	return rc;
}

static int map_method_2(struct el_ctx *c, json_t *m, const char *name, json_t *a, json_t *b, struct ev *out)
{
	json_t *k = NULL, *v;
	int rc;

	if (strcmp(name, "put") != 0 && strcmp(name, "getOrDefault") != 0 && strcmp(name, "putIfAbsent") != 0)
		return 1;
	if (map_key(c, a, &k) < 0)
		return -1;
	v = json_object_getn(m, json_string_value(k), json_string_length(k));
	if (strcmp(name, "getOrDefault") == 0) {
		rc = ret_json(c, ret_borrowed(v ? v : b), out);
	} else if (el_check_store(c, m, b) < 0) {
		rc = -1;
	} else {
		rc = ret_json(c, ret_borrowed(v), out);
		if (name[1] == 'u' && (name[3] == '\0' || !v))
			json_object_setn(m, json_string_value(k), json_string_length(k), b);
	}
	json_decref(k);
	return rc;
}

/* Java (int) of a long: keep the low 32 bits. */
static int64_t to_int32(int64_t v)
{
	return (int64_t)(int32_t)(uint32_t)(uint64_t)v;
}

static int number_method(struct el_ctx *c, json_t *num, const char *name, json_t *a, struct ev *out)
{
	double d = json_number_value(num);
	int64_t l = json_is_integer(num) ? (int64_t)json_integer_value(num) : 0;

	if (json_is_real(num))
		l = isnan(d) ? 0 : d >= 9.2e18 ? INT64_MAX : d <= -9.2e18 ? INT64_MIN : (int64_t)d;
	if (a == NULL && strcmp(name, "intValue") == 0) {
		if (json_is_real(num))
			return ret_int(c,
				       isnan(d)		    ? 0
				       : d >= 2147483647.0  ? 2147483647
				       : d <= -2147483648.0 ? -2147483648LL
							    : (int64_t)d,
				       out);
		return ret_int(c, to_int32(l), out);
	}
	if (a == NULL && strcmp(name, "longValue") == 0)
		return ret_int(c, l, out);
	if (a == NULL && strcmp(name, "doubleValue") == 0)
		return ret_json(c, el_new_real(c, d), out);
	if (a && strcmp(name, "compareTo") == 0) {
		int cmp;
		if (el_op_compare(c, num, a, &cmp) < 0)
			return -1;
		return ret_int(c, cmp, out);
	}
	return 1;
}

static int json_method(struct el_ctx *c, json_t *t, const char *name, struct ev *args, size_t n, struct ev *out)
{
	json_t *a = NULL, *b = NULL;

	if (n >= 1 && !(a = el_ev_json_of(c, &args[0])))
		return -1;
	if (n >= 2 && !(b = el_ev_json_of(c, &args[1])))
		return -1;
	if ((json_is_array(t) || json_is_object(t)) && strcmp(name, "size") != 0 && strcmp(name, "get") != 0 &&
	    el_budget(c, (json_is_array(t) ? json_array_size(t) : json_object_size(t)) +
			     (json_is_array(a) ? json_array_size(a) * json_array_size(t) : 0) +
			     (json_is_object(a) ? json_object_size(a) : 0)) < 0)
		return -1;
	if (n == 0 && strcmp(name, "toString") == 0)
		return ret_json(c, el_to_string(c, t), out);
	if (n == 1 && strcmp(name, "equals") == 0)
		return ret_bool(c, value_equals(t, a), out);
	if (json_is_array(t))
		return n == 0	? list_method_0(c, t, name, out)
		       : n == 1 ? list_method_1(c, t, name, a, out)
		       : n == 2 ? list_method_2(c, t, name, a, b, out)
				: 1;
	if (json_is_object(t))
		return n == 0	? map_method_0(c, t, name, out)
		       : n == 1 ? map_method_1(c, t, name, a, out)
		       : n == 2 ? map_method_2(c, t, name, a, b, out)
				: 1;
	if (json_is_number(t) && n <= 1)
		return number_method(c, t, name, a, out);
	if (json_is_boolean(t) && n == 0 && strcmp(name, "booleanValue") == 0)
		return ret_json(c, json_incref(t), out);
	return 1;
}

static int call_task(struct el_ctx *c, const struct ev *task, const char *name, struct ev *args, size_t n,
		     struct ev *out)
{
	const struct el_env *env = c->env;
	json_t *arr, *r = NULL;
	size_t i;
	int rc;

	if (!env->call_task)
		return no_method(c, name, task->node->name);
	if (!(arr = json_array()))
		return el_no_memory(c);
	for (i = 0; i < n; i++) {
		json_t *j = el_ev_json_of(c, &args[i]);
		if (!j) {
			json_decref(arr);
			return -1;
		}
		json_array_append(arr, j);
	}
	rc = env->call_task(env->ctx, task->node->name, name, arr, &r, c->e);
	json_decref(arr);
	if (rc < 0)
		return el_callback_failed(c, rc);
	*out = el_ev_json(r ? r : json_null());
	return 0;
}

int el_call_method(struct el_ctx *c, struct ev *target, const char *name, struct ev *args, size_t n, struct ev *out)
{
	int rc;

	switch (target->kind) {
	case EV_TASK:
		return call_task(c, target, name, args, n, out);
	case EV_CLASS:
		return el_static_call(c, (enum el_class)target->cls, name, args, n, out);
	case EV_STREAM:
		return el_stream_method(c, target, name, args, n, out);
	case EV_OPTIONAL:
		return el_optional_method(c, target, name, args, n, out);
	case EV_LAMBDA:
		return no_method(c, name, "jakarta.el.LambdaExpression");
	default:
		break;
	}
	if (json_is_null(target->j)) {
		*out = el_ev_json(json_null());
		return 0;
	}
	if (json_is_string(target->j))
		return el_string_method(c, target->j, name, args, n, out);
	rc = json_method(c, target->j, name, args, n, out);
	if (rc > 0)
		return no_method(c, name, value_class_name(target->j));
	return rc;
}
