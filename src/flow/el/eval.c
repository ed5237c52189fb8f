/* The evaluator: walks the immutable AST with working values (struct ev). */
#include "flow/el/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "base/str.h"
#include "flow/value.h"

int el_fail(struct el_ctx *c, enum err_code code, const char *fmt, ...)
{
	va_list ap;

	if (c->e) {
		char tmp[ERR_MSG_MAX];
		va_start(ap, fmt);
		str_vfmt_cut(tmp, sizeof tmp, fmt, ap);
		va_end(ap);
		c->e->code = code;
		memcpy(c->e->msg, tmp, sizeof tmp);
	}
	return -1;
}

struct ev el_ev_json(json_t *j)
{
	return (struct ev){.kind = EV_JSON, .j = j};
}

void el_scope_release(struct el_scope *s)
{
	while (s && --s->refs == 0) {
		struct el_scope *parent = s->parent;
		el_ev_release(&s->val);
		free(s);
		s = parent;
	}
}

void el_ev_release(struct ev *v)
{
	json_decref(v->j);
	v->j = NULL;
	if (v->sc) {
		el_scope_release(v->sc);
		v->sc = NULL;
	}
}

struct ev el_ev_copy(const struct ev *v)
{
	struct ev r = *v;

	json_incref(r.j);
	if (r.sc)
		r.sc->refs++;
	return r;
}

static const char *kind_name(const struct ev *v)
{
	switch (v->kind) {
	case EV_LAMBDA:
		return "a lambda expression";
	case EV_TASK:
		return "a task";
	case EV_CLASS:
		return "a class";
	case EV_STREAM:
		return "jakarta.el.stream.Stream";
	default:
		return "jakarta.el.stream.Optional";
	}
}

int el_ev_take_json(struct el_ctx *c, struct ev *v, json_t **out)
{
	switch (v->kind) {
	case EV_JSON:
	case EV_STREAM:
		*out = v->j;
		v->j = NULL;
		return 0;
	case EV_OPTIONAL:
		*out = v->j ? v->j : json_null();
		v->j = NULL;
		return 0;
	default:
		el_fail(c, ERR_INVALID, "%s cannot be used as a value", kind_name(v));
		el_ev_release(v);
		return -1;
	}
}

json_t *el_ev_json_of(struct el_ctx *c, const struct ev *v)
{
	if (v->kind == EV_JSON || v->kind == EV_STREAM)
		return v->j;
	if (v->kind == EV_OPTIONAL)
		return v->j ? v->j : json_null();
	el_fail(c, ERR_INVALID, "%s cannot be used as a value", kind_name(v));
	return NULL;
}

/* Evaluates n to a JSON value (new reference). */
static int eval_json(struct el_ctx *c, const struct el_node *n, json_t **out)
{
	struct ev v;

	if (el_eval_node(c, n, &v) < 0)
		return -1;
	return el_ev_take_json(c, &v, out);
}

int el_callback_failed(struct el_ctx *c, int rc)
{
	if (rc == EL_THROWN)
		c->thrown = true;
	if (c->e && c->e->code == ERR_OK)
		el_fail(c, ERR_INVALID, "failed without a message");
	return -1;
}

static int eval_ident(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	const struct el_env *env = c->env;
	struct el_scope *s;
	json_t *v = NULL;
	enum el_class cls;
	int rc;

	for (s = c->scope; s; s = s->parent) {
		if (strcmp(s->name, n->name) == 0) {
			*out = el_ev_copy(&s->val);
			return 0;
		}
	}
	if (env->lookup) {
		rc = env->lookup(env->ctx, n->name, &v, c->e);
		if (rc < 0)
			return el_callback_failed(c, rc);
		if (rc > 0) {
			*out = el_ev_json(json_incref(v ? v : json_null()));
			return 0;
		}
	}
	if (env->is_task && env->is_task(env->ctx, n->name)) {
		*out = (struct ev){.kind = EV_TASK, .node = n};
		return 0;
	}
	cls = el_class_by_name(n->name);
	if (cls != CLS_NONE) {
		*out = (struct ev){.kind = EV_CLASS, .cls = (uint8_t)cls};
		return 0;
	}
	return el_fail(c, ERR_INVALID,
		       "Can't find a variable '%s'. Check if it is defined in the current scope. Details: ELResolver "
		       "cannot handle a null base Object with identifier '%s'",
		       n->name, n->name);
}

static int eval_list(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	json_t *arr = json_array(), *item;
	uint32_t i;
	size_t j;

	if (!arr)
		return el_no_memory(c);
	for (i = 0; i < n->n_kids; i++) {
		bool dup = false;
		if (eval_json(c, n->kids[i], &item) < 0) {
			json_decref(arr);
			return -1;
		}
		if (n->kind == N_SET && el_budget(c, json_array_size(arr)) < 0) {
			json_decref(item);
			json_decref(arr);
			return -1;
		}
		for (j = 0; n->kind == N_SET && !dup && j < json_array_size(arr); j++)
			dup = value_equals(json_array_get(arr, j), item);
		if (dup)
			json_decref(item);
		else
			json_array_append_new(arr, item);
	}
	*out = el_ev_json(arr);
	return 0;
}

static int eval_map(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	json_t *obj = json_object(), *k = NULL, *ks = NULL, *v = NULL;
	uint32_t i;
	int rc = -1;

	if (!obj)
		return el_no_memory(c);
	for (i = 0; i + 1 < n->n_kids; i += 2) {
		if (eval_json(c, n->kids[i], &k) < 0 || !(ks = el_to_string(c, k)) ||
		    eval_json(c, n->kids[i + 1], &v) < 0)
			goto out;
		json_object_setn_new(obj, json_string_value(ks), json_string_length(ks), v);
		v = NULL;
		json_decref(k);
		json_decref(ks);
		k = ks = NULL;
	}
	*out = el_ev_json(obj);
	obj = NULL;
	rc = 0;
out:
	json_decref(k);
	json_decref(ks);
	json_decref(obj);
	return rc;
}

/* An operand that is a literal or a variable the env defines: *out BORROWED (valid until
 * the evaluation returns, as the env promises), without a working value or a reference
 * taken.  1 when n is such a leaf, 0 when it needs the full path (lambda parameters,
 * tasks, classes, undefined names, anything else), < 0 when the lookup failed. */
static int leaf_value(struct el_ctx *c, const struct el_node *n, json_t **out)
{
	int rc;

	if (n->kind == N_LIT) {
		*out = n->lit;
		return 1;
	}
	if (n->kind != N_IDENT || c->scope || !c->env->lookup)
		return 0;
	*out = NULL;
	rc = c->env->lookup(c->env->ctx, n->name, out, c->e);
	if (rc < 0)
		return el_callback_failed(c, rc);
	if (rc > 0 && !*out)
		*out = json_null();
	return rc > 0;
}

/* `item % 3`, `x == 0`: both operands leaves, so neither can change the other (an
 * assignment inside an operand is not a leaf), and they are read without taking a
 * reference or building a working value each (bench/flows loop).  The same steps are
 * counted as on the full path.  1 when done, 0 when the full path must do it. */
static int eval_binary_leaves(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	json_t *a, *b, *r = NULL;
	int rc;

	if (c->depth + 1 > c->max_depth)
		return 0;
	if ((rc = leaf_value(c, n->kids[0], &a)) <= 0 || (rc = leaf_value(c, n->kids[1], &b)) <= 0)
		return rc;
	if (el_budget(c, 2) < 0 || el_op_binary(c, n->op, a, b, &r) < 0)
		return -1;
	*out = el_ev_json(r);
	return 1;
}

static int eval_binary(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	json_t *a = NULL, *b = NULL, *r = NULL;
	int rc = eval_binary_leaves(c, n, out);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	rc = -1;
	if (eval_json(c, n->kids[0], &a) < 0 || eval_json(c, n->kids[1], &b) < 0)
		goto out;
	if (el_op_binary(c, n->op, a, b, &r) < 0)
		goto out;
	*out = el_ev_json(r);
	rc = 0;
out:
	json_decref(a);
	json_decref(b);
	return rc;
}

static int eval_bool(struct el_ctx *c, const struct el_node *n, bool *out)
{
	json_t *v;
	int rc;

	if (eval_json(c, n, &v) < 0)
		return -1;
	rc = el_to_bool(c, v, out);
	json_decref(v);
	return rc;
}

static int eval_unary(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	json_t *v, *r = NULL;
	bool b;

	if (eval_json(c, n->kids[0], &v) < 0)
		return -1;
	if (n->kind == N_EMPTY) {
		r = json_boolean(value_is_empty(v));
	} else if (n->kind == N_NOT) {
		if (el_to_bool(c, v, &b) == 0)
			r = json_boolean(!b);
	} else if (el_op_neg(c, v, &r) < 0) {
		r = NULL;
	}
	json_decref(v);
	if (!r)
		return -1;
	*out = el_ev_json(r);
	return 0;
}

static int eval_logic(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	bool a, b = false;

	if (eval_bool(c, n->kids[0], &a) < 0)
		return -1;
	if (n->kind == N_AND ? a : !a) {
		if (eval_bool(c, n->kids[1], &b) < 0)
			return -1;
	} else {
		b = a;
	}
	*out = el_ev_json(json_boolean(b));
	return 0;
}

static int eval_cond(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	bool cond;

	if (eval_bool(c, n->kids[0], &cond) < 0)
		return -1;
	return el_eval_node(c, n->kids[cond ? 1 : 2], out);
}

static int no_property(struct el_ctx *c, const char *name, const char *type)
{
	return el_fail(c, ERR_INVALID, "Property [%.100s] not found on type [%s]", name, type);
}

/* base.name / base[key] on a JSON base: maps by key, lists by index, String.empty. */
static int access_json(struct el_ctx *c, json_t *base, json_t *key, const char *name, struct ev *out)
{
	json_t *r = NULL;

	if (json_is_object(base)) {
		if (name)
			r = json_object_get(base, name);
		else if (json_is_string(key))
			r = json_object_getn(base, json_string_value(key), json_string_length(key));
		else if (!json_is_null(key)) {
			json_t *ks = el_to_string(c, key);
			if (!ks)
				return -1;
			r = json_object_getn(base, json_string_value(ks), json_string_length(ks));
			json_decref(ks);
		}
	} else if (json_is_array(base)) {
		int64_t idx;
		if (name)
			return el_fail(c, ERR_INVALID, "For input string: \"%.100s\"", name);
		if (!json_is_null(key)) {
			if (json_is_string(key) && el_to_long(c, key, &idx) < 0)
				return el_fail(c, ERR_INVALID, "For input string: \"%.100s\"", json_string_value(key));
			if (el_to_long(c, key, &idx) < 0)
				return -1;
			if (idx >= 0 && (uint64_t)idx < json_array_size(base))
				r = json_array_get(base, (size_t)idx);
		}
	} else if (!json_is_null(base)) {
		json_t *ks = name ? NULL : el_to_string(c, key);
		const char *pn = name ? name : ks ? json_string_value(ks) : "";
		if (json_is_string(base) && strcmp(pn, "empty") == 0)
			r = json_boolean(json_string_length(base) == 0);
		else
			no_property(c, pn, value_class_name(base));
		json_decref(ks);
		if (!r)
			return -1;
	}
	*out = el_ev_json(json_incref(r ? r : json_null()));
	return 0;
}

static int eval_access(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	struct ev base;
	json_t *key = NULL;
	int rc = -1;

	if (el_eval_node(c, n->kids[0], &base) < 0)
		return -1;
	if (n->kind == N_INDEX && eval_json(c, n->kids[1], &key) < 0)
		goto out;
	if (base.kind == EV_CLASS && n->kind == N_PROP) {
		rc = el_static_field(c, (enum el_class)base.cls, n->name, out);
	} else if (base.kind == EV_JSON) {
		rc = access_json(c, base.j, key, n->kind == N_PROP ? n->name : NULL, out);
	} else {
		json_t *ks = key ? el_to_string(c, key) : NULL;
		no_property(c,
			    n->kind == N_PROP ? n->name
			    : ks	      ? json_string_value(ks)
					      : "null",
			    base.kind == EV_TASK ? base.node->name : kind_name(&base));
		json_decref(ks);
	}
out:
	json_decref(key);
	el_ev_release(&base);
	return rc;
}

/* Evaluates call arguments into a caller-provided array of n slots. */
static int eval_args(struct el_ctx *c, const struct el_node *n, uint32_t first, struct ev *args)
{
	uint32_t i;

	for (i = first; i < n->n_kids; i++) {
		if (el_eval_node(c, n->kids[i], &args[i - first]) < 0) {
			while (i-- > first)
				el_ev_release(&args[i - first]);
			return -1;
		}
	}
	return 0;
}

static void release_args(struct ev *args, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		el_ev_release(&args[i]);
}

static int eval_call(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	uint32_t first = n->kind == N_CALL ? 0 : 1, count = n->n_kids - first;
	struct ev stack_args[8], *args = stack_args, target = {0};
	struct el_scope *s;
	int rc = -1;

	if (count > 8 && !(args = calloc(count, sizeof *args)))
		return el_no_memory(c);
	if (first && el_eval_node(c, n->kids[0], &target) < 0)
		goto out;
	if (eval_args(c, n, first, args) < 0)
		goto out;
	if (n->kind == N_METHOD) {
		rc = el_call_method(c, &target, n->name, args, count, out);
	} else if (n->kind == N_INVOKE) {
		rc = target.kind == EV_LAMBDA ? el_lambda_call(c, &target, args, count, out)
					      : el_fail(c, ERR_INVALID, "only a lambda expression can be invoked");
	} else {
		for (s = c->scope; s && strcmp(s->name, n->name) != 0; s = s->parent)
			;
		if (s && s->val.kind == EV_LAMBDA)
			rc = el_lambda_call(c, &s->val, args, count, out);
		else
			rc = el_call_function(c, n->name, args, count, out);
	}
	release_args(args, count);
out:
	el_ev_release(&target);
	if (args != stack_args)
		free(args);
	return rc;
}

static int assign_variable(struct el_ctx *c, const struct el_node *target, json_t *v)
{
	struct el_scope *s;
	int rc;

	for (s = c->scope; s; s = s->parent)
		if (strcmp(s->name, target->name) == 0)
			return el_fail(c, ERR_INVALID, "cannot assign to the lambda parameter '%s'", target->name);
	if (!c->env->assign)
		return el_fail(c, ERR_INVALID, "cannot assign to the variable '%s' here", target->name);
	rc = c->env->assign(c->env->ctx, target->name, v, c->e);
	return rc < 0 ? el_callback_failed(c, rc) : 0;
}

static int assign_into(struct el_ctx *c, json_t *base, json_t *key, const char *name, json_t *v)
{
	int64_t idx;

	if (json_is_object(base)) {
		json_t *ks = name ? NULL : el_to_string(c, key);
		int rc;
		if (!name && !ks)
			return -1;
		if (el_check_store(c, base, v) < 0) {
			json_decref(ks);
			return -1;
		}
		rc = name ? json_object_set(base, name, v)
			  : json_object_setn(base, json_string_value(ks), json_string_length(ks), v);
		json_decref(ks);
		return rc < 0 ? el_no_memory(c) : 0;
	}
	if (json_is_array(base) && !name) {
		if (el_to_long(c, key, &idx) < 0)
			return -1;
		if (idx < 0 || (uint64_t)idx >= json_array_size(base))
			return el_fail(c, ERR_INVALID, "Index %lld out of bounds for length %zu", (long long)idx,
				       json_array_size(base));
		if (el_check_store(c, base, v) < 0)
			return -1;
		return json_array_set(base, (size_t)idx, v) < 0 ? el_no_memory(c) : 0;
	}
	if (json_is_null(base))
		return el_fail(c, ERR_INVALID, "Target Unreachable, the base of the assignment is null");
	return el_fail(c, ERR_INVALID, "Property [%.100s] not writable on type [%s]",
		       name		     ? name
		       : json_is_string(key) ? json_string_value(key)
					     : "?",
		       value_class_name(base));
}

static int eval_assign(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	const struct el_node *t = n->kids[0];
	json_t *v = NULL, *base = NULL, *key = NULL;
	int rc = -1;

	if (t->kind != N_IDENT &&
	    (eval_json(c, t->kids[0], &base) < 0 || (t->kind == N_INDEX && eval_json(c, t->kids[1], &key) < 0)))
		goto out;
	if (eval_json(c, n->kids[1], &v) < 0)
		goto out;
	if (t->kind == N_IDENT)
		rc = assign_variable(c, t, v);
	else
		rc = assign_into(c, base, key, t->kind == N_PROP ? t->name : NULL, v);
	if (rc == 0) {
		*out = el_ev_json(v);
		v = NULL;
	}
out:
	json_decref(v);
	json_decref(base);
	json_decref(key);
	return rc;
}

static int eval_lambda(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	*out = (struct ev){.kind = EV_LAMBDA, .node = n, .sc = c->scope};
	if (c->scope)
		c->scope->refs++;
	return 0;
}

static int eval_dispatch(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	switch (n->kind) {
	case N_LIT:
		*out = el_ev_json(json_incref(n->lit));
		return 0;
	case N_IDENT:
		return eval_ident(c, n, out);
	case N_LIST:
	case N_SET:
		return eval_list(c, n, out);
	case N_MAP:
		return eval_map(c, n, out);
	case N_NEG:
	case N_NOT:
	case N_EMPTY:
		return eval_unary(c, n, out);
	case N_BIN:
		return eval_binary(c, n, out);
	case N_AND:
	case N_OR:
		return eval_logic(c, n, out);
	case N_COND:
		return eval_cond(c, n, out);
	case N_PROP:
	case N_INDEX:
		return eval_access(c, n, out);
	case N_METHOD:
	case N_CALL:
	case N_INVOKE:
		return eval_call(c, n, out);
	case N_LAMBDA:
		return eval_lambda(c, n, out);
	default:
		return eval_assign(c, n, out);
	}
}

int el_no_memory(struct el_ctx *c)
{
	oom_note();
	return el_fail(c, ERR_INTERNAL, "out of memory");
}

int el_budget(struct el_ctx *c, size_t n)
{
	c->steps += n;
	if (c->steps > EL_STEPS_MAX)
		return el_fail(c, ERR_LIMIT, "expression evaluation exceeded %u steps", EL_STEPS_MAX);
	return 0;
}

int el_eval_node(struct el_ctx *c, const struct el_node *n, struct ev *out)
{
	int rc;

	*out = (struct ev){0};
	if (el_budget(c, 1) < 0)
		return -1;
	if (++c->depth > c->max_depth) {
		c->depth--;
		return el_fail(c, ERR_LIMIT, "evaluation nests deeper than the limit flow_expr_depth allows");
	}
	rc = eval_dispatch(c, n, out);
	c->depth--;
	return rc;
}
