/* Built-in functions (reference §4.4) and the java.lang classes usable in expressions:
 * String, Integer, Long, Double, Boolean, Math. */
#include "flow/el/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/rand.h"
#include "base/uuid.h"
#include "flow/value.h"

static int ret_json(struct el_ctx *c, json_t *j, struct ev *out)
{
	if (!j)
		return el_no_memory(c);
	*out = el_ev_json(j);
	return 0;
}

static json_t *arg_json(struct el_ctx *c, struct ev *args, size_t i)
{
	return el_ev_json_of(c, &args[i]);
}

/* A path argument of hasVariable/orDefault as a string. */
static int path_arg(struct el_ctx *c, struct ev *args, json_t **s, json_t **v, int *found)
{
	json_t *a = arg_json(c, args, 0);
	int rc;

	if (!a || !(*s = el_to_string(c, a)))
		return -1;
	rc = el_path_lookup(c->env, json_string_value(*s), json_string_length(*s), v, c->e);
	if (rc < 0) {
		json_decref(*s);
		return el_callback_failed(c, rc);
	}
	*found = rc;
	return 0;
}

static int builtin(struct el_ctx *c, const char *name, struct ev *args, size_t n, struct ev *out)
{
	json_t *s = NULL, *v = NULL;
	int found = 0, rc;

	if (strcmp(name, "uuid") == 0 && n == 0) {
		char id[UUID_STR_LEN];
		uuid_v4(id);
		return ret_json(c, json_string(id), out);
	}
	if (strcmp(name, "throw") == 0 && n == 1) {
		json_t *a = arg_json(c, args, 0), *m = a ? el_to_string(c, a) : NULL;
		if (!m)
			return -1;
		el_fail(c, ERR_INVALID, "%s", json_string_value(m));
		json_decref(m);
		c->thrown = true;
		return -1;
	}
	if (!((strcmp(name, "hasVariable") == 0 || strcmp(name, "hasNonNullVariable") == 0) && n == 1) &&
	    !(strcmp(name, "orDefault") == 0 && n == 2))
		return 1;
	if (path_arg(c, args, &s, &v, &found) < 0)
		return -1;
	json_decref(s);
	if (name[0] == 'o') {
		*out = found ? el_ev_json(json_incref(v)) : el_ev_copy(&args[1]);
		return 0;
	}
	rc = ret_json(c, json_boolean(found && (name[3] == 'V' || !json_is_null(v))), out);
	return rc;
}

static int vm_function(struct el_ctx *c, const char *name, struct ev *args, size_t n, struct ev *out)
{
	const struct el_env *env = c->env;
	json_t *arr, *r = NULL;
	size_t i;
	int rc;

	if (!env->call_function)
		return 0;
	if (!(arr = json_array()))
		return el_no_memory(c);
	for (i = 0; i < n; i++) {
		json_t *j = arg_json(c, args, i);
		if (!j) {
			json_decref(arr);
			return -1;
		}
		json_array_append(arr, j);
	}
	rc = env->call_function(env->ctx, env, name, arr, &r, c->e);
	json_decref(arr);
	if (rc < 0)
		return el_callback_failed(c, rc);
	if (rc > 0)
		*out = el_ev_json(r ? r : json_null());
	return rc;
}

int el_call_function(struct el_ctx *c, const char *name, struct ev *args, size_t n, struct ev *out)
{
	int rc;
	size_t i;

	for (i = 0; i < n; i++)
		if (args[i].kind == EV_LAMBDA || args[i].kind == EV_TASK || args[i].kind == EV_CLASS)
			break;
	if (i == n) {
		rc = vm_function(c, name, args, n, out);
		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	rc = builtin(c, name, args, n, out);
	if (rc > 0)
		return el_fail(c, ERR_INVALID, "Function '%s' not found", name);
	return rc;
}

/* ---- classes ---- */

static const char *const class_names[] = {
    [CLS_NONE] = "",	     [CLS_STRING] = "String",	[CLS_INTEGER] = "Integer", [CLS_LONG] = "Long",
    [CLS_DOUBLE] = "Double", [CLS_BOOLEAN] = "Boolean", [CLS_MATH] = "Math",
};

enum el_class el_class_by_name(const char *name)
{
	size_t i;

	for (i = 1; i < sizeof class_names / sizeof class_names[0]; i++)
		if (strcmp(name, class_names[i]) == 0)
			return (enum el_class)i;
	return CLS_NONE;
}

int el_static_field(struct el_ctx *c, enum el_class cls, const char *name, struct ev *out)
{
	bool max = strcmp(name, "MAX_VALUE") == 0, min = strcmp(name, "MIN_VALUE") == 0;

	if (cls == CLS_INTEGER && (max || min))
		return ret_json(c, json_integer(max ? INT32_MAX : INT32_MIN), out);
	if (cls == CLS_LONG && (max || min))
		return ret_json(c, json_integer(max ? INT64_MAX : INT64_MIN), out);
	if (cls == CLS_MATH && (strcmp(name, "PI") == 0 || strcmp(name, "E") == 0))
		return ret_json(c, json_real(name[0] == 'P' ? M_PI : M_E), out);
	return el_fail(c, ERR_INVALID, "Property [%.100s] not found on type [java.lang.%s]", name, class_names[cls]);
}

static int parse_integer(struct el_ctx *c, json_t *a, bool int32, struct ev *out)
{
	int64_t v;
	struct err tmp;

	if (json_is_integer(a)) {
		v = (int64_t)json_integer_value(a);
	} else if (!json_is_string(a) || json_string_length(a) == 0 || value_to_long(a, &v, &tmp) < 0) {
		json_t *s = el_to_string(c, a);
		if (s)
			el_fail(c, ERR_INVALID, "For input string: \"%.200s\"", json_string_value(s));
		json_decref(s);
		return -1;
	}
	if (int32 && (v < INT32_MIN || v > INT32_MAX))
		return el_fail(c, ERR_INVALID, "For input string: \"%lld\"", (long long)v);
	return ret_json(c, json_integer(v), out);
}

/* String.join(sep, list) or String.join(sep, a, b, …); null elements print as "null". */
static int string_join(struct el_ctx *c, json_t *sep, struct ev *args, size_t n, struct ev *out)
{
	json_t *list = n == 2 ? arg_json(c, args, 1) : NULL, *item;
	size_t count = json_is_array(list) ? json_array_size(list) : n - 1, i;
	struct buf b;
	struct err tmp;
	int rc = 0;

	buf_init(&b, EL_STR_MAX);
	for (i = 0; i < count && rc == 0; i++) {
		item = json_is_array(list) ? json_array_get(list, i) : arg_json(c, args, i + 1);
		if (!item || el_budget(c, 1) < 0) {
			buf_cleanup(&b);
			return -1;
		}
		if (i > 0)
			rc = value_append_string(&b, sep, &tmp);
		if (rc == 0)
			rc = value_print(&b, item, &tmp);
	}
	if (rc < 0) {
		buf_cleanup(&b);
		return el_fail(c, tmp.code, "%s", tmp.msg);
	}
	rc = ret_json(c, json_stringn_nocheck(b.data ? b.data : "", b.len), out);
	buf_cleanup(&b);
	return rc;
}

static int string_static(struct el_ctx *c, const char *name, struct ev *args, size_t n, struct ev *out)
{
	json_t *a = n ? arg_json(c, args, 0) : NULL;

	if (n && !a)
		return -1;
	if (strcmp(name, "valueOf") == 0 && n == 1) {
		if (json_is_null(a))
			return ret_json(c, json_string("null"), out);
		return ret_json(c, el_to_string(c, a), out);
	}
	if (strcmp(name, "join") == 0 && n >= 2)
		return string_join(c, a, args, n, out);
	return 1;
}

static int number_static(struct el_ctx *c, enum el_class cls, const char *name, json_t *a, struct ev *out)
{
	double d;

	if (cls == CLS_INTEGER && (strcmp(name, "parseInt") == 0 || strcmp(name, "valueOf") == 0))
		return parse_integer(c, a, true, out);
	if (cls == CLS_LONG && (strcmp(name, "parseLong") == 0 || strcmp(name, "valueOf") == 0))
		return parse_integer(c, a, false, out);
	if (cls == CLS_DOUBLE && (strcmp(name, "parseDouble") == 0 || strcmp(name, "valueOf") == 0)) {
		if (json_is_null(a) || el_to_double(c, a, &d) < 0)
			return json_is_null(a) ? el_fail(c, ERR_INVALID, "null") : -1;
		return ret_json(c, el_new_real(c, d), out);
	}
	if (cls == CLS_BOOLEAN && (strcmp(name, "parseBoolean") == 0 || strcmp(name, "valueOf") == 0)) {
		bool b = json_is_true(a) || (json_is_string(a) && json_string_length(a) == 4 &&
					     strncasecmp(json_string_value(a), "true", 4) == 0);
		return ret_json(c, json_boolean(b), out);
	}
	if ((cls == CLS_INTEGER || cls == CLS_LONG || cls == CLS_DOUBLE) && strcmp(name, "toString") == 0)
		return ret_json(c, el_to_string(c, a), out);
	return 1;
}

static int math_1(struct el_ctx *c, const char *name, json_t *a, struct ev *out)
{
	bool real;
	int64_t l = 0;
	double d = 0, r;

	if (el_to_number(c, a, &real, &l, &d) < 0)
		return -1;
	if (strcmp(name, "abs") == 0) {
		if (!real)
			return ret_json(c, json_integer(l < 0 ? (int64_t)(0 - (uint64_t)l) : l), out);
		return ret_json(c, el_new_real(c, fabs(d)), out);
	}
	if (!real)
		d = (double)l;
	if (strcmp(name, "round") == 0)
		return ret_json(c, json_integer(real ? (int64_t)floor(d + 0.5) : l), out);
	if (strcmp(name, "floor") == 0)
		r = floor(d);
	else if (strcmp(name, "ceil") == 0)
		r = ceil(d);
	else if (strcmp(name, "sqrt") == 0)
		r = sqrt(d);
	else if (strcmp(name, "signum") == 0)
		r = d > 0 ? 1.0 : d < 0 ? -1.0 : d;
	else
		return 1;
	return ret_json(c, el_new_real(c, r), out);
}

static int math_2(struct el_ctx *c, const char *name, json_t *a, json_t *b, struct ev *out)
{
	bool ra, rb;
	int64_t la = 0, lb = 0;
	double da = 0, db = 0;
	bool max = strcmp(name, "max") == 0;

	if (!max && strcmp(name, "min") != 0 && strcmp(name, "pow") != 0)
		return 1;
	if (el_to_number(c, a, &ra, &la, &da) < 0 || el_to_number(c, b, &rb, &lb, &db) < 0)
		return -1;
	if (!ra)
		da = (double)la;
	if (!rb)
		db = (double)lb;
	if (strcmp(name, "pow") == 0)
		return ret_json(c, el_new_real(c, pow(da, db)), out);
	if (!ra && !rb)
		return ret_json(c, json_integer(max ? (la > lb ? la : lb) : (la < lb ? la : lb)), out);
	return ret_json(c, el_new_real(c, max ? fmax(da, db) : fmin(da, db)), out);
}

int el_static_call(struct el_ctx *c, enum el_class cls, const char *name, struct ev *args, size_t n, struct ev *out)
{
	json_t *a = NULL, *b = NULL;
	int rc = 1;

	if (n >= 1 && !(a = arg_json(c, args, 0)))
		return -1;
	if (n >= 2 && !(b = arg_json(c, args, 1)))
		return -1;
	if (cls == CLS_STRING)
		rc = string_static(c, name, args, n, out);
	else if (cls == CLS_MATH && n == 0 && strcmp(name, "random") == 0) {
		uint64_t r;
		rand_bytes(&r, sizeof r);
		rc = ret_json(c, json_real((double)(r >> 11) / 9007199254740992.0), out);
	} else if (cls == CLS_MATH && n == 1)
		rc = math_1(c, name, a, out);
	else if (cls == CLS_MATH && n == 2)
		rc = math_2(c, name, a, b, out);
	else if (n == 1)
		rc = number_static(c, cls, name, a, out);
	if (rc > 0)
		return el_fail(c, ERR_INVALID, "Can't find '%s()' method in java.lang.%s", name, class_names[cls]);
	return rc;
}
