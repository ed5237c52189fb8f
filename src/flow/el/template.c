/* Entry points: evaluating templates and whole JSON values. */
#include "flow/el/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/limits.h"
#include "base/oom.h"
#include "flow/value.h"

static const struct el_env no_env;

/* The negative return code for an error in e (never 0, even if a callback failed without
 * filling e). */
static int el_error_code(const struct err *e)
{
	return e && e->code != ERR_OK ? -(int)e->code : -(int)ERR_INVALID;
}

static void ctx_init(struct el_ctx *c, const struct el_env *env, struct err *e)
{
	*c = (struct el_ctx){0};
	c->env = env ? env : &no_env;
	c->e = e;
	err_clear(e);
	c->max_depth = (int)(limits.flow_expr_depth > 4096 ? 4096 : limits.flow_expr_depth) * 4 + 8;
}

static int eval_part(struct el_ctx *c, const struct el_node *n, json_t **out)
{
	struct ev v;

	if (el_eval_node(c, n, &v) < 0)
		return -1;
	return el_ev_take_json(c, &v, out);
}

static int eval_composite(struct el_ctx *c, const struct el_expr *x, json_t **out)
{
	struct buf b;
	struct err tmp;
	size_t i;
	int rc = -1;

	buf_init(&b, EL_STR_MAX);
	for (i = 0; i < x->n_parts; i++) {
		const struct el_part *p = &x->parts[i];
		json_t *v;
		if (!p->node) {
			if (buf_append(&b, p->text, p->len, &tmp) < 0)
				goto fail;
			continue;
		}
		if (eval_part(c, p->node, &v) < 0)
			goto out;
		rc = value_append_string(&b, v, &tmp);
		json_decref(v);
		if (rc < 0)
			goto fail;
	}
	*out = json_stringn_nocheck(b.data ? b.data : "", b.len);
	rc = *out ? 0 : el_no_memory(c);
	goto out;
fail:
	rc = el_fail(c, tmp.code, "%s", tmp.msg);
out:
	buf_cleanup(&b);
	return rc;
}

int el_eval(const struct el_expr *x, const struct el_env *env, json_t **out, struct err *e)
{
	struct el_ctx c;
	int rc;

	ctx_init(&c, env, e);
	*out = NULL;
	if (x->single)
		rc = eval_part(&c, x->parts[0].node, out);
	else
		rc = eval_composite(&c, x, out);
	if (rc == 0)
		return 0;
	if (c.thrown)
		return EL_THROWN;
	err_prefix(e, "while evaluating expression '%.300s'", x->src);
	return el_error_code(e);
}

int el_eval_bool(const struct el_expr *x, const struct el_env *env, bool *out, struct err *e)
{
	json_t *v;
	int rc = el_eval(x, env, &v, e);

	if (rc < 0)
		return rc;
	rc = value_to_bool(v, out, e);
	json_decref(v);
	if (rc < 0)
		err_prefix(e, "while evaluating expression '%.300s'", x->src);
	return rc;
}

int el_eval_template(const char *text, size_t len, const struct el_env *env, json_t **out, struct err *e)
{
	struct el_expr *x = el_parse_template(text, len, e);
	int rc;

	if (!x)
		return el_error_code(e);
	rc = el_eval(x, env, out, e);
	el_free(x);
	return rc;
}

int el_path_lookup(const struct el_env *env, const char *path, size_t len, json_t **out, struct err *e)
{
	char name[256];
	const char *dot = memchr(path, '.', len);
	size_t n = dot ? (size_t)(dot - path) : len, pos;
	json_t *v = NULL;
	int rc;

	if (!env || !env->lookup || n == 0 || n >= sizeof name || memchr(path, '\0', n))
		return 0;
	memcpy(name, path, n);
	name[n] = '\0';
	rc = env->lookup(env->ctx, name, &v, e);
	if (rc <= 0)
		return rc;
	for (pos = n; pos < len;) {
		const char *seg = path + pos + 1;
		size_t rest = len - pos - 1;
		const char *next = memchr(seg, '.', rest);
		size_t sl = next ? (size_t)(next - seg) : rest;
		if (!json_is_object(v))
			return 0;
		v = json_object_getn(v, seg, sl);
		if (!v)
			return 0;
		pos += sl + 1;
	}
	*out = v ? v : json_null();
	return 1;
}

/* ---- compiled JSON values ---- */

enum { J_CONST, J_TMPL, J_ARRAY, J_OBJECT };

struct el_json {
	int kind;
	json_t *v;	   /* J_CONST: the value; J_OBJECT: key strings (array) */
	struct el_expr *x; /* J_TMPL */
	size_t n;
	struct el_json **items;	   /* J_ARRAY items, J_OBJECT values */
	struct el_expr **key_tmpl; /* J_OBJECT: templated keys (NULL entries for plain keys) */
};

void el_json_free(struct el_json *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		el_json_free(c->items[i]);
		if (c->key_tmpl)
			el_free(c->key_tmpl[i]);
	}
	free(c->items);
	free(c->key_tmpl);
	el_free(c->x);
	json_decref(c->v);
	free(c);
}

static bool has_templates(json_t *v, unsigned flags, int depth)
{
	const char *key;
	json_t *item;
	size_t i;

	if (depth > VALUE_PRINT_DEPTH)
		return true;
	if (json_is_string(v))
		return el_has_template(json_string_value(v), json_string_length(v));
	if (json_is_array(v)) {
		json_array_foreach(v, i, item) if (has_templates(item, flags, depth + 1)) return true;
	}
	if (json_is_object(v)) {
		json_object_foreach(v, key, item)
		{
			if (((flags & EL_JSON_KEYS) && el_has_template(key, strlen(key))) ||
			    has_templates(item, flags, depth + 1))
				return true;
		}
	}
	return false;
}

static struct el_json *compile_rec(json_t *v, unsigned flags, int depth, struct err *e);

static int compile_children(struct el_json *c, json_t *v, unsigned flags, int depth, struct err *e)
{
	const char *key;
	json_t *item;
	size_t i = 0;

	c->n = json_is_array(v) ? json_array_size(v) : json_object_size(v);
	c->items = calloc(c->n ? c->n : 1, sizeof *c->items);
	if (!c->items)
		return oom_fail(e);
	if (json_is_array(v)) {
		json_array_foreach(v, i, item) if (!(c->items[i] = compile_rec(item, flags, depth + 1, e))) return -1;
		return 0;
	}
	c->v = json_array();
	c->key_tmpl = calloc(c->n ? c->n : 1, sizeof *c->key_tmpl);
	if (!c->v || !c->key_tmpl)
		return oom_fail(e);
	json_object_foreach(v, key, item)
	{
		size_t kl = strlen(key);
		json_array_append_new(c->v, json_stringn_nocheck(key, kl));
		if ((flags & EL_JSON_KEYS) && el_has_template(key, kl) &&
		    !(c->key_tmpl[i] = el_parse_template(key, kl, e)))
			return -1;
		if (!(c->items[i] = compile_rec(item, flags, depth + 1, e)))
			return -1;
		i++;
	}
	return 0;
}

static struct el_json *compile_rec(json_t *v, unsigned flags, int depth, struct err *e)
{
	struct el_json *c = calloc(1, sizeof *c);

	if (!c) {
		oom_fail(e);
		return NULL;
	}
	if (depth > VALUE_PRINT_DEPTH) {
		err_set(e, ERR_LIMIT, "value nests deeper than %d levels", VALUE_PRINT_DEPTH);
		goto fail;
	}
	if (!has_templates(v, flags, depth)) {
		c->kind = J_CONST;
		c->v = json_incref(v);
		return c;
	}
	if (json_is_string(v)) {
		c->kind = J_TMPL;
		if (!(c->x = el_parse_template(json_string_value(v), json_string_length(v), e)))
			goto fail;
		return c;
	}
	c->kind = json_is_array(v) ? J_ARRAY : J_OBJECT;
	if (compile_children(c, v, flags, depth, e) < 0)
		goto fail;
	return c;
fail:
	el_json_free(c);
	return NULL;
}

struct el_json *el_json_compile(json_t *v, unsigned flags, struct err *e)
{
	return compile_rec(v, flags, 0, e);
}

static int eval_key(const struct el_json *c, size_t i, const struct el_env *env, json_t **key, struct err *e)
{
	json_t *k;
	int rc;

	if (!c->key_tmpl[i]) {
		*key = json_incref(json_array_get(c->v, i));
		return 0;
	}
	if ((rc = el_eval(c->key_tmpl[i], env, &k, e)) < 0)
		return rc;
	if (json_is_string(k)) {
		*key = k;
		return 0;
	}
	if (json_is_null(k)) {
		*key = json_string("");
	} else {
		char *s = value_to_cstr(k, NULL);
		*key = s ? json_string_nocheck(s) : NULL;
		free(s);
	}
	json_decref(k);
	return *key ? 0 : oom_fail(e);
}

static int eval_container(const struct el_json *c, const struct el_env *env, json_t **out, struct err *e)
{
	json_t *r = c->kind == J_ARRAY ? json_array() : json_object(), *item = NULL, *key = NULL;
	size_t i;
	int rc = 0;

	if (!r)
		return oom_fail(e);
	for (i = 0; i < c->n && rc == 0; i++) {
		if ((rc = el_json_eval(c->items[i], env, &item, e)) < 0)
			break;
		if (c->kind == J_ARRAY) {
			json_array_append_new(r, item);
			continue;
		}
		if ((rc = eval_key(c, i, env, &key, e)) < 0) {
			json_decref(item);
			break;
		}
		json_object_setn_new(r, json_string_value(key), json_string_length(key), item);
		json_decref(key);
	}
	if (rc < 0) {
		json_decref(r);
		return rc;
	}
	*out = r;
	return 0;
}

int el_json_eval(const struct el_json *c, const struct el_env *env, json_t **out, struct err *e)
{
	*out = NULL;
	switch (c->kind) {
	case J_CONST:
		*out = json_is_array(c->v) || json_is_object(c->v) ? json_deep_copy(c->v) : json_incref(c->v);
		return *out ? 0 : oom_fail(e);
	case J_TMPL:
		return el_eval(c->x, env, out, e);
	default:
		return eval_container(c, env, out, e);
	}
}

int el_json_eval_value(json_t *v, unsigned flags, const struct el_env *env, json_t **out, struct err *e)
{
	struct el_json *c = el_json_compile(v, flags, e);
	int rc;

	if (!c)
		return el_error_code(e);
	rc = el_json_eval(c, env, out, e);
	el_json_free(c);
	return rc;
}
