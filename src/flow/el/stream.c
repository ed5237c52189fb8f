/* Lambdas, EL streams (jakarta.el.stream.Stream) and their Optional. */
#include "flow/el/internal.h"

#include <stdlib.h>
#include <string.h>

#include "flow/value.h"

int el_lambda_call(struct el_ctx *c, const struct ev *lambda, struct ev *args, size_t n, struct ev *out)
{
	const struct el_node *ln = lambda->node;
	struct el_scope *sc = lambda->sc, *saved;
	uint32_t i;
	int rc;

	if (n < ln->n_params)
		return el_fail(c, ERR_INVALID,
			       "Only [%zu] arguments were provided for a lambda expression that requires at least [%u]",
			       n, ln->n_params);
	if (sc)
		sc->refs++;
	for (i = 0; i < ln->n_params; i++) {
		struct el_scope *s = malloc(sizeof *s);
		if (!s) {
			el_scope_release(sc);
			return el_no_memory(c);
		}
		s->refs = 1;
		s->parent = sc;
		s->name = ln->params[i];
		s->val = el_ev_copy(&args[i]);
		sc = s;
	}
	saved = c->scope;
	c->scope = sc;
	rc = el_eval_node(c, ln->kids[0], out);
	c->scope = saved;
	el_scope_release(sc);
	return rc;
}

static int need_lambda(struct el_ctx *c, const char *name, struct ev *args, size_t n, size_t i)
{
	if (i >= n || args[i].kind != EV_LAMBDA)
		return el_fail(c, ERR_INVALID, "%s() expects a lambda expression as argument %zu", name, i + 1);
	return 0;
}

/* Calls fn(a[, b]) and returns its JSON result (new reference). */
static int call_json(struct el_ctx *c, const struct ev *fn, json_t *a, json_t *b, json_t **out)
{
	struct ev args[2] = {el_ev_json(a), el_ev_json(b)}, r;

	if (el_lambda_call(c, fn, args, b ? 2 : 1, &r) < 0)
		return -1;
	return el_ev_take_json(c, &r, out);
}

static int call_bool(struct el_ctx *c, const struct ev *fn, json_t *a, bool *out)
{
	json_t *r;
	int rc;

	if (call_json(c, fn, a, NULL, &r) < 0)
		return -1;
	rc = el_to_bool(c, r, out);
	json_decref(r);
	return rc;
}

static int ret_stream(struct el_ctx *c, json_t *arr, struct ev *out)
{
	if (!arr)
		return el_no_memory(c);
	*out = (struct ev){.kind = EV_STREAM, .j = arr};
	return 0;
}

static int ret_optional(json_t *v, struct ev *out)
{
	*out = (struct ev){.kind = EV_OPTIONAL, .j = v};
	return 0;
}

static int s_filter_map(struct el_ctx *c, json_t *items, const char *name, const struct ev *fn, struct ev *out)
{
	json_t *r = json_array(), *v, *item;
	size_t i;
	bool keep;

	if (!r)
		return el_no_memory(c);
	json_array_foreach(items, i, item)
	{
		if (el_budget(c, 1 + json_array_size(r) / 64) < 0)
			goto fail;
		if (name[0] == 'f' && name[1] == 'i') {
			if (call_bool(c, fn, item, &keep) < 0)
				goto fail;
			if (keep)
				json_array_append(r, item);
			continue;
		}
		if (call_json(c, fn, item, NULL, &v) < 0)
			goto fail;
		if (name[0] == 'm') {
			json_array_append_new(r, v);
		} else if (json_is_array(v)) {
			json_array_extend(r, v);
			json_decref(v);
		} else {
			json_decref(v);
			el_fail(c, ERR_INVALID, "flatMap() expects the lambda expression to return a stream or a list");
			goto fail;
		}
	}
	return ret_stream(c, r, out);
fail:
	json_decref(r);
	return -1;
}

/* Compares with the lambda comparator, or naturally when fn is NULL. */
static int compare(struct el_ctx *c, const struct ev *fn, json_t *a, json_t *b, int *out)
{
	json_t *r;
	int64_t l;
	int rc;

	if (el_budget(c, 1) < 0)
		return -1;
	if (!fn)
		return el_natural_compare(c, a, b, out);
	if (call_json(c, fn, a, b, &r) < 0)
		return -1;
	rc = el_to_long(c, r, &l);
	json_decref(r);
	*out = l < 0 ? -1 : l > 0;
	return rc;
}

/* Stable merge sort of v[0..n) (Java sorts objects stably). */
static int merge_sort(struct el_ctx *c, const struct ev *fn, json_t **v, json_t **tmp, size_t n)
{
	size_t mid = n / 2, i = 0, j = mid, k = 0;
	int cmp;

	if (n < 2)
		return 0;
	if (merge_sort(c, fn, v, tmp, mid) < 0 || merge_sort(c, fn, v + mid, tmp, n - mid) < 0)
		return -1;
	while (i < mid && j < n) {
		if (compare(c, fn, v[j], v[i], &cmp) < 0)
			return -1;
		tmp[k++] = cmp < 0 ? v[j++] : v[i++];
	}
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof *v);
	return 0;
}

static int s_sorted(struct el_ctx *c, json_t *items, const struct ev *fn, struct ev *out)
{
	size_t n = json_array_size(items), i;
	json_t **v = calloc(n ? n * 2 : 1, sizeof *v), *r;

	if (!v)
		return el_no_memory(c);
	for (i = 0; i < n; i++)
		v[i] = json_array_get(items, i);
	if (merge_sort(c, fn, v, v + n, n) < 0) {
		free(v);
		return -1;
	}
	r = json_array();
	for (i = 0; r && i < n; i++)
		json_array_append(r, v[i]);
	free(v);
	return ret_stream(c, r, out);
}

static int s_distinct(struct el_ctx *c, json_t *items, struct ev *out)
{
	json_t *r = json_array(), *item;
	size_t i, j;

	if (!r)
		return el_no_memory(c);
	json_array_foreach(items, i, item)
	{
		bool dup = false;
		if (el_budget(c, 1 + json_array_size(r)) < 0) {
			json_decref(r);
			return -1;
		}
		for (j = 0; !dup && j < json_array_size(r); j++)
			dup = value_equals(json_array_get(r, j), item);
		if (!dup)
			json_array_append(r, item);
	}
	return ret_stream(c, r, out);
}

static int s_slice(struct el_ctx *c, json_t *items, const char *name, struct ev *args, size_t n, struct ev *out)
{
	int64_t a = 0, b = INT64_MAX;
	size_t len = json_array_size(items), i;
	json_t *x, *r;

	if (!(x = el_ev_json_of(c, &args[0])) || el_to_long(c, x, name[0] == 'l' ? &b : &a) < 0)
		return -1;
	if (n > 1 && (!(x = el_ev_json_of(c, &args[1])) || el_to_long(c, x, &b) < 0))
		return -1;
	if (name[0] == 'l' && b < 0)
		return el_fail(c, ERR_INVALID, "limit() needs a size >= 0");
	if (!(r = json_array()))
		return el_no_memory(c);
	for (i = a < 0 ? 0 : (size_t)a; i < len && (int64_t)i < b; i++)
		json_array_append(r, json_array_get(items, i));
	return ret_stream(c, r, out);
}

static int s_each(struct el_ctx *c, json_t *items, const char *name, const struct ev *fn, struct ev *out)
{
	json_t *item, *v;
	size_t i;

	json_array_foreach(items, i, item)
	{
		if (call_json(c, fn, item, NULL, &v) < 0)
			return -1;
		json_decref(v);
	}
	if (name[0] == 'p')
		return ret_stream(c, json_incref(items), out);
	*out = el_ev_json(json_null());
	return 0;
}

static int s_match(struct el_ctx *c, json_t *items, const char *name, const struct ev *fn, struct ev *out)
{
	json_t *item;
	size_t i;
	bool b, any = name[0] == 'a' && name[1] == 'n', all = name[1] == 'l';

	json_array_foreach(items, i, item)
	{
		if (call_bool(c, fn, item, &b) < 0)
			return -1;
		if (any && b)
			return ret_optional(json_true(), out);
		if (!any && b != all)
			return ret_optional(json_false(), out);
	}
	return ret_optional(json_boolean(!any), out);
}

static int s_reduce(struct el_ctx *c, json_t *items, struct ev *args, size_t n, struct ev *out)
{
	const struct ev *fn = &args[n - 1];
	json_t *acc = NULL, *item, *next;
	size_t i;

	if (need_lambda(c, "reduce", args, n, n - 1) < 0)
		return -1;
	if (n == 2 && !(acc = el_ev_json_of(c, &args[0])))
		return -1;
	json_incref(acc);
	json_array_foreach(items, i, item)
	{
		if (!acc) {
			acc = json_incref(item);
			continue;
		}
		if (call_json(c, fn, acc, item, &next) < 0) {
			json_decref(acc);
			return -1;
		}
		json_decref(acc);
		acc = next;
	}
	if (n == 2) {
		*out = el_ev_json(acc);
		return 0;
	}
	return ret_optional(acc, out);
}

static int s_extreme(struct el_ctx *c, json_t *items, bool max, const struct ev *fn, struct ev *out)
{
	json_t *best = NULL, *item;
	size_t i;
	int cmp;

	json_array_foreach(items, i, item)
	{
		if (!best) {
			best = item;
			continue;
		}
		if (compare(c, fn, item, best, &cmp) < 0)
			return -1;
		if (max ? cmp > 0 : cmp < 0)
			best = item;
	}
	return ret_optional(best ? json_incref(best) : NULL, out);
}

static int s_sum(struct el_ctx *c, json_t *items, bool average, struct ev *out)
{
	json_t *acc = json_integer(0), *item, *next, *cnt;
	size_t i;
	int rc;

	json_array_foreach(items, i, item)
	{
		if (el_op_binary(c, OP_ADD, acc, item, &next) < 0) {
			json_decref(acc);
			return -1;
		}
		json_decref(acc);
		acc = next;
	}
	if (!average) {
		*out = el_ev_json(acc);
		return 0;
	}
	if (json_array_size(items) == 0) {
		json_decref(acc);
		return ret_optional(NULL, out);
	}
	cnt = json_integer((json_int_t)json_array_size(items));
	rc = el_op_binary(c, OP_DIV, acc, cnt, &next);
	json_decref(acc);
	json_decref(cnt);
	return rc < 0 ? -1 : ret_optional(next, out);
}

static int stream_lambda_method(struct el_ctx *c, json_t *items, const char *name, struct ev *args, size_t n,
				struct ev *out)
{
	static const char *const one_fn[] = {"filter",	 "map",	     "flatMap",	  "forEach", "peek",
					     "anyMatch", "allMatch", "noneMatch", NULL};
	size_t i;

	for (i = 0; one_fn[i]; i++)
		if (strcmp(name, one_fn[i]) == 0)
			break;
	if (!one_fn[i])
		return 1;
	if (n != 1 || need_lambda(c, name, args, n, 0) < 0)
		return n != 1 ? 1 : -1;
	if (i < 3)
		return s_filter_map(c, items, name, &args[0], out);
	if (i < 5)
		return s_each(c, items, name, &args[0], out);
	return s_match(c, items, name, &args[0], out);
}

static int stream_dispatch(struct el_ctx *c, json_t *items, const char *name, struct ev *args, size_t n, struct ev *out)
{
	int rc = stream_lambda_method(c, items, name, args, n, out);

	if (rc <= 0)
		return rc;
	if (strcmp(name, "sorted") == 0 || strcmp(name, "max") == 0 || strcmp(name, "min") == 0) {
		if (n > 1 || (n == 1 && need_lambda(c, name, args, n, 0) < 0))
			return n > 1 ? 1 : -1;
		if (name[0] == 's')
			return s_sorted(c, items, n ? &args[0] : NULL, out);
		return s_extreme(c, items, name[1] == 'a', n ? &args[0] : NULL, out);
	}
	if (n == 0 && strcmp(name, "distinct") == 0)
		return s_distinct(c, items, out);
	if ((n == 1 && strcmp(name, "limit") == 0) || ((n == 1 || n == 2) && strcmp(name, "substream") == 0))
		return s_slice(c, items, name, args, n, out);
	if ((n == 1 || n == 2) && strcmp(name, "reduce") == 0)
		return s_reduce(c, items, args, n, out);
	if (n == 0 && (strcmp(name, "sum") == 0 || strcmp(name, "average") == 0))
		return s_sum(c, items, name[0] == 'a', out);
	if (n == 0 && strcmp(name, "count") == 0) {
		*out = el_ev_json(json_integer((json_int_t)json_array_size(items)));
		return 0;
	}
	if (n == 0 && strcmp(name, "findFirst") == 0)
		return ret_optional(json_array_size(items) ? json_incref(json_array_get(items, 0)) : NULL, out);
	if (n == 0 && (strcmp(name, "toList") == 0 || strcmp(name, "toArray") == 0)) {
		*out = el_ev_json(json_incref(items));
		return 0;
	}
	return 1;
}

int el_stream_method(struct el_ctx *c, struct ev *stream, const char *name, struct ev *args, size_t n, struct ev *out)
{
	int rc = stream_dispatch(c, stream->j, name, args, n, out);

	if (rc > 0)
		return el_fail(c, ERR_INVALID, "Can't find '%s()' method in jakarta.el.stream.Stream", name);
	return rc;
}

int el_optional_method(struct el_ctx *c, struct ev *opt, const char *name, struct ev *args, size_t n, struct ev *out)
{
	json_t *v = opt->j, *r;

	if (n == 0 && strcmp(name, "get") == 0) {
		if (!v)
			return el_fail(c, ERR_INVALID, "No value present");
		*out = el_ev_json(json_incref(v));
		return 0;
	}
	if (n == 0 && strcmp(name, "isPresent") == 0) {
		*out = el_ev_json(json_boolean(v != NULL));
		return 0;
	}
	if (n == 1 && strcmp(name, "orElse") == 0) {
		*out = v ? el_ev_json(json_incref(v)) : el_ev_copy(&args[0]);
		return 0;
	}
	if (n == 1 && strcmp(name, "orElseGet") == 0) {
		if (v) {
			*out = el_ev_json(json_incref(v));
			return 0;
		}
		if (args[0].kind != EV_LAMBDA) {
			*out = el_ev_copy(&args[0]);
			return 0;
		}
		return el_lambda_call(c, &args[0], NULL, 0, out);
	}
	if (n == 1 && strcmp(name, "ifPresent") == 0) {
		if (need_lambda(c, name, args, n, 0) < 0)
			return -1;
		if (v) {
			if (call_json(c, &args[0], v, NULL, &r) < 0)
				return -1;
			json_decref(r);
		}
		*out = el_ev_json(json_null());
		return 0;
	}
	return el_fail(c, ERR_INVALID, "Can't find '%s()' method in jakarta.el.stream.Optional", name);
}
