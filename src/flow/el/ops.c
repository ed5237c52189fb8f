/* EL 3.0 operators and coercions (Jakarta EL ELArithmetic / ELSupport rules). */
#include "base/oom.h"
#include "flow/el/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "flow/value.h"

static char *el_brief(const json_t *v)
{
	char *s = value_to_cstr(v, NULL);

	if (!s)
		s = strdup("?");
	if (!s)
		oom_abort("an expression's text");
	return s;
}

static bool is_string_float(const json_t *v)
{
	const char *s;
	size_t n, i;

	if (!json_is_string(v))
		return false;
	s = json_string_value(v);
	n = json_string_length(v);
	for (i = 0; i < n; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			return true;
	return false;
}

static bool is_double_op(const json_t *a, const json_t *b)
{
	return json_is_real(a) || json_is_real(b);
}

static bool is_long_op(const json_t *a, const json_t *b)
{
	return json_is_integer(a) || json_is_integer(b);
}

json_t *el_new_real(struct el_ctx *c, double d)
{
	json_t *j;

	if (!isfinite(d)) {
		el_fail(c, ERR_INVALID, "the result %s cannot be represented (not a finite number)",
			isnan(d) ? "NaN"
			: d > 0	 ? "Infinity"
				 : "-Infinity");
		return NULL;
	}
	j = json_real(d);
	if (!j)
		el_no_memory(c);
	return j;
}

/* Small integer results are shared, one json_t per value for the life of the process
 * (made on first use, by whichever thread gets there first): a counter or `item % 3`
 * computed in every iteration of a loop then allocates nothing.  Sharing scalars is
 * already the contract (el.h: nobody modifies a scalar in place). */
#define SMALL_INT_MIN (-128)
#define SMALL_INT_MAX 1023
static json_t *small_ints[SMALL_INT_MAX - SMALL_INT_MIN + 1];

static json_t *small_int(int64_t v)
{
	json_t **slot = &small_ints[v - SMALL_INT_MIN];
	json_t *j = __atomic_load_n(slot, __ATOMIC_ACQUIRE), *fresh;

	if (j)
		return json_incref(j);
	if (!(fresh = json_integer(v)))
		return NULL;
	if (!__atomic_compare_exchange_n(slot, &j, fresh, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		json_decref(fresh); /* another thread made it first: j is that one */
		fresh = j;
	}
	return json_incref(fresh);
}

static json_t *new_int(struct el_ctx *c, int64_t v)
{
	json_t *j = v >= SMALL_INT_MIN && v <= SMALL_INT_MAX ? small_int(v) : json_integer(v);

	if (!j)
		el_no_memory(c);
	return j;
}

/* ELArithmetic.coerce: null and "" are 0; strings parse as Long or Double. */
static int arith_coerce(struct el_ctx *c, const json_t *v, bool dbl, int64_t *l, double *d)
{
	char *s;

	if (!v || json_is_null(v) || (json_is_string(v) && json_string_length(v) == 0)) {
		*l = 0;
		*d = 0;
		return 0;
	}
	if (json_is_number(v) || json_is_string(v)) {
		struct err tmp;
		int rc = dbl ? value_to_double(v, d, &tmp) : value_to_long(v, l, &tmp);
		if (rc == 0)
			return 0;
		if (json_is_string(v))
			return el_fail(c, ERR_INVALID, "For input string: \"%.200s\"", json_string_value(v));
	}
	s = el_brief(v);
	el_fail(c, ERR_INVALID, "Cannot convert %.200s of type class %s to Number", s, value_class_name(v));
	free(s);
	return -1;
}

int el_to_number(struct el_ctx *c, const json_t *v, bool *is_real, int64_t *l, double *d)
{
	*is_real = json_is_real(v) || is_string_float(v);
	return arith_coerce(c, v, *is_real, l, d);
}

static int arith_double(struct el_ctx *c, int op, double x, double y, json_t **out)
{
	double r;

	switch (op) {
	case OP_ADD:
		r = x + y;
		break;
	case OP_SUB:
		r = x - y;
		break;
	case OP_MUL:
		r = x * y;
		break;
	case OP_DIV:
		r = x / y;
		break;
	default:
		r = fmod(x, y);
		break;
	}
	*out = el_new_real(c, r);
	return *out ? 0 : -1;
}

/* Java long arithmetic: wraps around on overflow. */
static int arith_long(struct el_ctx *c, int op, int64_t x, int64_t y, json_t **out)
{
	uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
	int64_t r;

	switch (op) {
	case OP_ADD:
		r = (int64_t)(ux + uy);
		break;
	case OP_SUB:
		r = (int64_t)(ux - uy);
		break;
	case OP_MUL:
		r = (int64_t)(ux * uy);
		break;
	default:
		if (y == 0)
			return el_fail(c, ERR_INVALID, "/ by zero");
		r = (y == -1) ? 0 : x % y;
		break;
	}
	*out = new_int(c, r);
	return *out ? 0 : -1;
}

static int arith(struct el_ctx *c, int op, json_t *a, json_t *b, json_t **out)
{
	bool dbl;
	int64_t la = 0, lb = 0;
	double da = 0, db = 0;

	if (json_is_null(a) && json_is_null(b)) {
		*out = new_int(c, 0);
		return *out ? 0 : -1;
	}
	dbl = op == OP_DIV || is_double_op(a, b) || is_string_float(a) || is_string_float(b);
	if (arith_coerce(c, a, dbl, &la, &da) < 0 || arith_coerce(c, b, dbl, &lb, &db) < 0)
		return -1;
	if (dbl)
		return arith_double(c, op, da, db, out);
	return arith_long(c, op, la, lb, out);
}

json_t *el_to_string(struct el_ctx *c, const json_t *v)
{
	struct buf b;
	struct err tmp;
	json_t *s;

	if (json_is_string(v))
		return json_incref((json_t *)v);
	if (!v || json_is_null(v))
		s = json_string("");
	else {
		buf_init(&b, EL_STR_MAX);
		if (value_print(&b, v, &tmp) < 0) {
			buf_cleanup(&b);
			el_fail(c, tmp.code, "%s", tmp.msg);
			return NULL;
		}
		s = el_budget(c, b.len / 256) < 0 ? NULL : json_stringn_nocheck(b.data, b.len);
		buf_cleanup(&b);
		if (!s)
			return NULL;
	}
	if (!s)
		el_no_memory(c);
	return s;
}

static int concat(struct el_ctx *c, json_t *a, json_t *b, json_t **out)
{
	json_t *sa = el_to_string(c, a), *sb = sa ? el_to_string(c, b) : NULL;
	size_t la, lb;
	char *p;
	int rc = -1;

	if (!sa || !sb)
		goto out;
	if (json_is_null(a) || json_is_null(b)) {
		/* Concord's EL fails (a NullPointerException) instead of printing "null" or "". */
		el_fail(c, ERR_INVALID, "Cannot concatenate a null value with '+=' (%s operand is null)",
			json_is_null(a) ? "left" : "right");
		goto out;
	}
	la = json_string_length(sa);
	lb = json_string_length(sb);
	if (el_budget(c, (la + lb) / 256) < 0)
		goto out;
	if (la + lb > EL_STR_MAX) {
		el_fail(c, ERR_LIMIT, "string longer than %u bytes", EL_STR_MAX);
		goto out;
	}
	p = malloc(la + lb + 1);
	if (!p) {
		el_no_memory(c);
		goto out;
	}
	memcpy(p, json_string_value(sa), la);
	memcpy(p + la, json_string_value(sb), lb);
	*out = json_stringn_nocheck(p, la + lb);
	free(p);
	rc = *out ? 0 : el_no_memory(c);
out:
	json_decref(sa);
	json_decref(sb);
	return rc;
}

int el_to_bool(struct el_ctx *c, const json_t *v, bool *out)
{
	struct err tmp;

	if (value_to_bool(v, out, &tmp) < 0)
		return el_fail(c, tmp.code, "%s", tmp.msg);
	return 0;
}

int el_to_long(struct el_ctx *c, const json_t *v, int64_t *out)
{
	struct err tmp;

	if (value_to_long(v, out, &tmp) < 0)
		return el_fail(c, tmp.code, "%s", tmp.msg);
	return 0;
}

int el_to_double(struct el_ctx *c, const json_t *v, double *out)
{
	struct err tmp;

	if (value_to_double(v, out, &tmp) < 0)
		return el_fail(c, tmp.code, "%s", tmp.msg);
	return 0;
}

static int compare_strings(struct el_ctx *c, json_t *a, json_t *b, int *out)
{
	json_t *sa = el_to_string(c, a), *sb = sa ? el_to_string(c, b) : NULL;
	size_t la, lb;
	int r;

	if (!sa || !sb) {
		json_decref(sa);
		return -1;
	}
	la = json_string_length(sa);
	lb = json_string_length(sb);
	r = memcmp(json_string_value(sa), json_string_value(sb), la < lb ? la : lb);
	if (r == 0)
		r = la < lb ? -1 : la > lb;
	*out = r < 0 ? -1 : r > 0;
	json_decref(sa);
	json_decref(sb);
	return 0;
}

static int cannot_compare(struct el_ctx *c, json_t *a, json_t *b)
{
	char *sa = el_brief(a), *sb = el_brief(b);

	el_fail(c, ERR_INVALID, "Cannot compare [%.200s] to [%.200s]", sa, sb);
	free(sa);
	free(sb);
	return -1;
}

int el_op_compare(struct el_ctx *c, json_t *a, json_t *b, int *out)
{
	if (is_double_op(a, b)) {
		double x, y;
		if (el_to_double(c, a, &x) < 0 || el_to_double(c, b, &y) < 0)
			return -1;
		*out = x < y ? -1 : x > y;
		return 0;
	}
	if (is_long_op(a, b)) {
		int64_t x, y;
		if (el_to_long(c, a, &x) < 0 || el_to_long(c, b, &y) < 0)
			return -1;
		*out = x < y ? -1 : x > y;
		return 0;
	}
	if (json_is_string(a) || json_is_string(b))
		return compare_strings(c, a, b, out);
	if (json_is_boolean(a) && json_is_boolean(b)) {
		*out = (int)json_is_true(a) - (int)json_is_true(b);
		return 0;
	}
	return cannot_compare(c, a, b);
}

int el_natural_compare(struct el_ctx *c, json_t *a, json_t *b, int *out)
{
	if (json_is_number(a) && json_is_number(b))
		return el_op_compare(c, a, b, out);
	if (json_is_string(a) && json_is_string(b))
		return compare_strings(c, a, b, out);
	if (json_is_boolean(a) && json_is_boolean(b))
		return el_op_compare(c, a, b, out);
	return cannot_compare(c, a, b);
}

int el_op_equals(struct el_ctx *c, json_t *a, json_t *b, bool *out)
{
	int cmp;

	if (a == b || (json_is_null(a) && json_is_null(b))) {
		*out = true;
		return 0;
	}
	if (json_is_null(a) || json_is_null(b)) {
		*out = false;
		return 0;
	}
	if (is_double_op(a, b) || is_long_op(a, b)) {
		if (el_op_compare(c, a, b, &cmp) < 0)
			return -1;
		*out = cmp == 0;
		return 0;
	}
	if (json_is_boolean(a) || json_is_boolean(b)) {
		bool x, y;
		if (el_to_bool(c, a, &x) < 0 || el_to_bool(c, b, &y) < 0)
			return -1;
		*out = x == y;
		return 0;
	}
	if (json_is_string(a) || json_is_string(b)) {
		if (compare_strings(c, a, b, &cmp) < 0)
			return -1;
		*out = cmp == 0;
		return 0;
	}
	*out = value_equals(a, b);
	return 0;
}

static int relational(struct el_ctx *c, int op, json_t *a, json_t *b, json_t **out)
{
	int cmp;
	bool r;

	if ((op == OP_LE || op == OP_GE) && json_is_null(a) && json_is_null(b)) {
		*out = json_true();
		return 0;
	}
	if (json_is_null(a) || json_is_null(b)) {
		*out = json_false();
		return 0;
	}
	if (el_op_compare(c, a, b, &cmp) < 0)
		return -1;
	r = op == OP_LT ? cmp < 0 : op == OP_GT ? cmp > 0 : op == OP_LE ? cmp <= 0 : cmp >= 0;
	*out = json_boolean(r);
	return 0;
}

/* Both operands integers: what arith, el_op_equals and relational give for them, without
 * their coercions (the flow VM's counters and comparisons, bench/flows loop). */
static int int_op(struct el_ctx *c, int op, int64_t x, int64_t y, json_t **out)
{
	switch (op) {
	case OP_EQ:
		*out = json_boolean(x == y);
		return 0;
	case OP_NE:
		*out = json_boolean(x != y);
		return 0;
	case OP_LT:
		*out = json_boolean(x < y);
		return 0;
	case OP_GT:
		*out = json_boolean(x > y);
		return 0;
	case OP_LE:
		*out = json_boolean(x <= y);
		return 0;
	case OP_GE:
		*out = json_boolean(x >= y);
		return 0;
	default:
		return arith_long(c, op, x, y, out);
	}
}

int el_op_binary(struct el_ctx *c, int op, json_t *a, json_t *b, json_t **out)
{
	bool eq;

	if (json_is_integer(a) && json_is_integer(b) && op != OP_DIV && op != OP_CONCAT)
		return int_op(c, op, json_integer_value(a), json_integer_value(b), out);
	switch (op) {
	case OP_ADD:
	case OP_SUB:
	case OP_MUL:
	case OP_DIV:
	case OP_MOD:
		return arith(c, op, a, b, out);
	case OP_EQ:
	case OP_NE:
		if (el_op_equals(c, a, b, &eq) < 0)
			return -1;
		*out = json_boolean(op == OP_EQ ? eq : !eq);
		return 0;
	case OP_CONCAT:
		return concat(c, a, b, out);
	default:
		return relational(c, op, a, b, out);
	}
}

int el_op_neg(struct el_ctx *c, json_t *a, json_t **out)
{
	int64_t l = 0;
	double d = 0;
	bool dbl;

	if (json_is_null(a)) {
		*out = new_int(c, 0);
		return *out ? 0 : -1;
	}
	if (json_is_boolean(a) || json_is_array(a) || json_is_object(a)) {
		char *s = el_brief(a);
		el_fail(c, ERR_INVALID, "Cannot convert [%.200s] of type [class %s] to [class java.lang.Number]", s,
			value_class_name(a));
		free(s);
		return -1;
	}
	dbl = json_is_real(a) || is_string_float(a);
	if (arith_coerce(c, a, dbl, &l, &d) < 0)
		return -1;
	if (dbl) {
		*out = el_new_real(c, -d);
		return *out ? 0 : -1;
	}
	*out = new_int(c, (int64_t)(0 - (uint64_t)l));
	return *out ? 0 : -1;
}

int el_check_store(struct el_ctx *c, json_t *container, json_t *v)
{
	if (value_contains_ref(v, container))
		return el_fail(c, ERR_INVALID, "cannot store a collection inside itself");
	return 0;
}
