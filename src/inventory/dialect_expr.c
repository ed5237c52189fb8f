#include "inventory/parse.h"

#include "base/str.h"

enum cast_to { C_JSON, C_TEXT, C_INT, C_REAL, C_BOOL };

static const struct {
	const char *name;
	enum cast_to to;
} type_names[] = {
    {"jsonb", C_JSON},	 {"json", C_JSON}, {"text", C_TEXT},	  {"varchar", C_TEXT}, {"char", C_TEXT},
    {"bpchar", C_TEXT},	 {"name", C_TEXT}, {"int", C_INT},	  {"integer", C_INT},  {"int2", C_INT},
    {"int4", C_INT},	 {"int8", C_INT},  {"smallint", C_INT},	  {"bigint", C_INT},   {"numeric", C_REAL},
    {"decimal", C_REAL}, {"real", C_REAL}, {"float", C_REAL},	  {"float4", C_REAL},  {"float8", C_REAL},
    {"boolean", C_BOOL}, {"bool", C_BOOL}, {"character", C_TEXT}, {"double", C_REAL},
};

static int p_typename(struct parser *p, enum cast_to *to)
{
	const struct inv_tok *t = peek(p);
	char n[NAME_MAX_LEN];
	size_t i;

	if (t->kind != INV_TOK_WORD)
		return syntax(p, "a type name");
	tok_name(t, n, sizeof(n));
	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strcmp(n, type_names[i].name) == 0)
			break;
	if (i == sizeof(type_names) / sizeof(type_names[0])) {
		char msg[200];
		str_fmt_cut(
		    msg, sizeof(msg),
		    "cast to type '%.64s' (supported: jsonb, json, text, varchar, integer, bigint, numeric, real, "
		    "double precision, boolean)",
		    n);
		return unsupported(p, t, msg);
	}
	p->i++;
	*to = type_names[i].to;
	if (strcmp(n, "character") == 0)
		accept(p, "varying");
	if (strcmp(n, "double") == 0 && expect_kw(p, "precision"))
		return -1;
	if (peek(p)->kind == INV_TOK_LPAREN) {
		p->i++;
		if (expect(p, INV_TOK_NUMBER, "a type modifier"))
			return -1;
		if (peek(p)->kind == INV_TOK_COMMA && (p->i++, expect(p, INV_TOK_NUMBER, "a type modifier")))
			return -1;
		if (expect(p, INV_TOK_RPAREN, "')'"))
			return -1;
	}
	if (peek(p)->kind == INV_TOK_LBRACKET)
		return unsupported(p, peek(p), "array types");
	return 0;
}

static int apply_cast(struct parser *p, struct frag *x, enum cast_to to, struct frag *out)
{
	bool param = x->is_param;
	int rc = -1;

	switch (to) {
	case C_JSON:
		if (x->type == VT_JSON) {
			*out = *x;
			return 0;
		}
		rc = wrap(p, out, "json(", x, ")");
		out->is_param_json = param;
		break;
	case C_TEXT:
		rc = x->type == VT_JSON ? wrap(p, out, "(", x, "|| '')") : wrap(p, out, "CAST(", x, "AS TEXT)");
		out->type = VT_TEXT;
		return rc;
	case C_INT:
		rc = wrap(p, out, "CAST(", x, "AS INTEGER)");
		out->type = VT_NUM;
		return rc;
	case C_REAL:
		rc = wrap(p, out, "CAST(", x, "AS REAL)");
		out->type = VT_NUM;
		return rc;
	case C_BOOL:
		rc = wrap(p, out, "accord_pg_bool(", x, ")");
		out->type = VT_BOOL;
		return rc;
	}
	out->type = VT_JSON;
	return rc;
}

/* x as a value for SQLite's JSON constructors (json_object, json_array, json_group_*). */
static int as_json_value(struct parser *p, struct frag *x, struct frag *out)
{
	switch (x->type) {
	case VT_JSON:
		return wrap(p, out, "json(", x, ")");
	case VT_BOOL:
		return wrap(p, out, "accord_json_bool(", x, ")");
	default:
		*out = *x;
		return 0;
	}
}

/* PostgreSQL's to_json / to_jsonb. */
static int to_json(struct parser *p, struct frag *x, struct frag *out)
{
	int rc;

	if (x->is_item_data) { /* stored as valid compact JSON already */
		*out = *x;
		out->is_item_data = false;
		return 0;
	}
	switch (x->type) {
	case VT_JSON:
	case VT_NUM:
		rc = wrap(p, out, "json(", x, ")");
		break;
	case VT_BOOL:
		rc = wrap(p, out, "accord_json_bool(", x, ")");
		break;
	default:
		rc = wrap(p, out, "json_quote(", x, ")");
		break;
	}
	out->type = VT_JSON;
	return rc;
}

#define MAX_ARGS 100

struct args {
	struct frag v[MAX_ARGS];
	size_t n;
};

/* Comma-separated expressions up to and including the closing parenthesis. */
static int p_args(struct parser *p, struct args *a)
{
	a->n = 0;
	if (peek(p)->kind == INV_TOK_RPAREN) {
		p->i++;
		return 0;
	}
	for (;;) {
		if (a->n == MAX_ARGS)
			return err_set(p->e, ERR_INVALID, "more than %d arguments in a function call", MAX_ARGS);
		if (p_expr(p, P_OR, &a->v[a->n]))
			return -1;
		a->n++;
		if (peek(p)->kind != INV_TOK_COMMA)
			break;
		p->i++;
	}
	return expect(p, INV_TOK_RPAREN, "',' or ')'");
}

static int argc_is(struct parser *p, const struct inv_tok *t, const char *fn, const struct args *a, size_t n)
{
	if (a->n == n)
		return 0;
	return err_set(p->e, ERR_INVALID, "%s takes %zu argument%s, got %zu at line %u, column %u", fn, n,
		       n == 1 ? "" : "s", a->n, t->line, t->col);
}

/* json_build_object / json_build_array: value conversions applied to every (value) arg. */
static int build_json(struct parser *p, const char *fn, struct args *a, bool pairs, struct frag *out)
{
	frag_init(p, out);
	if (emit(p, out, fn) || emit_raw(p, out, "("))
		return -1;
	for (size_t i = 0; i < a->n; i++) {
		struct frag v;
		if (i > 0 && emit(p, out, ","))
			return -1;
		if (pairs && i % 2 == 0) {
			if (a->v[i].type == VT_NUM || a->v[i].type == VT_BOOL) {
				if (wrap(p, &v, "CAST(", &a->v[i], "AS TEXT)"))
					return -1;
			} else {
				v = a->v[i];
			}
		} else if (as_json_value(p, &a->v[i], &v)) {
			return -1;
		}
		if (emit_frag(p, out, &v))
			return -1;
	}
	out->type = VT_JSON;
	return emit(p, out, ")");
}

static const char *const srf_names[] = {"jsonb_array_elements",	    "json_array_elements", "jsonb_array_elements_text",
					"json_array_elements_text", "jsonb_each",	   "json_each",
					"jsonb_each_text",	    "json_each_text",	   "jsonb_object_keys",
					"json_object_keys",	    "json_tree",	   NULL};

/* The functions whose PostgreSQL meaning needs a different SQLite spelling. */
static int special_call(struct parser *p, const struct inv_tok *t, const char *n, struct args *a, struct frag *out,
			bool *handled)
{
	static const char *const build_obj[] = {"json_build_object", "jsonb_build_object", NULL};
	static const char *const build_arr[] = {"json_build_array", "jsonb_build_array", NULL};
	static const char *const to_js[] = {"to_json", "to_jsonb", NULL};
	static const char *const agg[] = {"json_agg", "jsonb_agg", NULL};
	static const char *const obj_agg[] = {"json_object_agg", "jsonb_object_agg", NULL};
	static const char *const arr_len[] = {"json_array_length", "jsonb_array_length", NULL};
	static const char *const type_of[] = {"json_typeof", "jsonb_typeof", NULL};
	struct frag v;

	*handled = true;
	if (name_in(n, to_js)) {
		if (argc_is(p, t, n, a, 1))
			return -1;
		return to_json(p, &a->v[0], out);
	}
	if (name_in(n, build_obj)) {
		if (a->n % 2)
			return err_set(p->e, ERR_INVALID, "%s needs an even number of arguments at line %u, column %u",
				       n, t->line, t->col);
		return build_json(p, "json_object", a, true, out);
	}
	if (name_in(n, build_arr))
		return build_json(p, "json_array", a, false, out);
	if (name_in(n, agg)) {
		if (argc_is(p, t, n, a, 1) || as_json_value(p, &a->v[0], &v) ||
		    wrap(p, out, "json_group_array(", &v, ")"))
			return -1;
		out->type = VT_JSON;
		return 0;
	}
	if (name_in(n, obj_agg))
		return argc_is(p, t, n, a, 2) ? -1 : build_json(p, "json_group_object", a, true, out);
	if (name_in(n, arr_len)) {
		if (argc_is(p, t, n, a, 1) || wrap(p, out, "json_array_length(", &a->v[0], ")"))
			return -1;
		out->type = VT_NUM;
		return 0;
	}
	if (name_in(n, type_of)) {
		if (argc_is(p, t, n, a, 1) || wrap(p, out, "accord_jsonb_typeof(", &a->v[0], ")"))
			return -1;
		out->type = VT_TEXT;
		return 0;
	}
	if (strcmp(n, "string_agg") == 0) {
		if (argc_is(p, t, n, a, 2) || call2(p, out, "group_concat", &a->v[0], &a->v[1]))
			return -1;
		out->type = VT_TEXT;
		return 0;
	}
	if (name_in(n, srf_names)) {
		char msg[160];
		str_fmt_cut(msg, sizeof(msg),
			    "%.40s outside FROM (use it as a table: FROM inventory_data, %.40s(...) AS x)", n, n);
		return unsupported(p, t, msg);
	}
	*handled = false;
	return 0;
}

static int p_call(struct parser *p, struct frag *out)
{
	const struct inv_tok *t = next(p);
	struct args a;
	char n[NAME_MAX_LEN];
	bool handled = false, distinct = false;
	int rc = -1;

	tok_name(t, n, sizeof(n));
	p->i++; /* ( */
	frag_init(p, out);
	if (peek(p)->kind == INV_TOK_OP && str_eq_cstr(peek(p)->text, "*") && peek2(p)->kind == INV_TOK_RPAREN) {
		p->i += 2;
		if (emit_tok(p, out, t) || emit_raw(p, out, "(*)"))
			return -1;
		out->type = VT_NUM;
		goto filter;
	}
	distinct = accept(p, "distinct");
	if (p_args(p, &a))
		goto out;
	if (!distinct && (rc = special_call(p, t, n, &a, out, &handled)) != 0)
		goto out;
	if (handled)
		goto out;
	rc = -1;
	if (emit_tok(p, out, t) || emit_raw(p, out, "(") || (distinct && emit(p, out, "DISTINCT")))
		goto out;
	for (size_t i = 0; i < a.n; i++)
		if ((i > 0 && emit(p, out, ",")) || emit_frag(p, out, &a.v[i]))
			goto out;
	if (emit(p, out, ")"))
		goto out;
	if (strcmp(n, "count") == 0 || strcmp(n, "length") == 0)
		out->type = VT_NUM;
filter:
	if (tok_is(peek(p), "filter")) {
		struct frag w;
		p->i++;
		if (expect(p, INV_TOK_LPAREN, "'('") || expect_kw(p, "where") || p_expr(p, P_OR, &w))
			goto out;
		if (emit(p, out, "FILTER (WHERE") || emit_frag(p, out, &w) || emit(p, out, ")") ||
		    expect(p, INV_TOK_RPAREN, "')'"))
			goto out;
	}
	if (tok_is(peek(p), "over")) {
		unsupported(p, peek(p), "window functions (OVER)");
		goto out;
	}
	rc = 0;
out:
	return rc;
}

static int p_case(struct parser *p, struct frag *out)
{
	struct frag x;

	p->i++;
	frag_init(p, out);
	if (emit(p, out, "CASE"))
		return -1;
	if (!tok_is(peek(p), "when") && (p_expr(p, P_OR, &x) || emit_frag(p, out, &x)))
		return -1;
	if (!tok_is(peek(p), "when"))
		return syntax(p, "WHEN");
	while (accept(p, "when")) {
		if (emit(p, out, "WHEN") || p_expr(p, P_OR, &x) || emit_frag(p, out, &x) || expect_kw(p, "then") ||
		    emit(p, out, "THEN") || p_expr(p, P_OR, &x) || emit_frag(p, out, &x))
			return -1;
	}
	if (accept(p, "else") && (emit(p, out, "ELSE") || p_expr(p, P_OR, &x) || emit_frag(p, out, &x)))
		return -1;
	if (expect_kw(p, "end"))
		return -1;
	return emit(p, out, "END");
}

static struct srf *srf_find(struct parser *p, const char *n, bool as_alias)
{
	for (size_t i = p->n_srfs; i-- > 0;)
		if (strcmp(as_alias ? p->srfs[i].alias : p->srfs[i].column, n) == 0)
			return &p->srfs[i];
	return NULL;
}

/* A value of a jsonb_array_elements row, as jsonb (or text for the _text variants). */
static int srf_value(struct parser *p, const struct srf *s, struct frag *out)
{
	frag_init(p, out);
	if (emit(p, out, s->text ? "accord_pg_text(accord_json_value(" : "accord_json_value(") ||
	    emit_cname(p, out, s->alias) || emit_raw(p, out, ".value,") || emit_cname(p, out, s->alias) ||
	    emit_raw(p, out, ".type)") || (s->text && emit_raw(p, out, ")")))
		return -1;
	out->type = s->text ? VT_TEXT : VT_JSON;
	return 0;
}

static int p_colref(struct parser *p, struct frag *out)
{
	const struct inv_tok *parts[3];
	char last[NAME_MAX_LEN], first[NAME_MAX_LEN];
	size_t n = 0;
	struct srf *s;

	parts[n++] = next(p);
	while (peek(p)->kind == INV_TOK_DOT) {
		const struct inv_tok *t = peek2(p);
		if (t->kind == INV_TOK_OP && str_eq_cstr(t->text, "*")) {
			p->i += 2;
			frag_init(p, out);
			for (size_t i = 0; i < n; i++)
				if ((i > 0 && emit_raw(p, out, ".")) || emit_name(p, out, parts[i]))
					return -1;
			return emit_raw(p, out, ".*");
		}
		if (n == 3 || (t->kind != INV_TOK_WORD && t->kind != INV_TOK_QIDENT))
			return syntax(p, "a column name");
		p->i++;
		parts[n++] = next(p);
	}
	tok_name(parts[n - 1], last, sizeof(last));
	tok_name(parts[0], first, sizeof(first));
	if (n == 1 && ((s = srf_find(p, last, true)) || (s = srf_find(p, last, false))))
		return srf_value(p, s, out);
	if (n == 2 && (s = srf_find(p, first, true)) && strcmp(s->column, last) == 0)
		return srf_value(p, s, out);
	frag_init(p, out);
	for (size_t i = 0; i < n; i++)
		if ((i > 0 && emit_raw(p, out, ".")) || emit_name(p, out, parts[i]))
			return -1;
	if (strcmp(last, "item_data") == 0) {
		out->type = VT_JSON;
		out->is_item_data = true;
	} else if (strcmp(last, "item_path") == 0 || strcmp(last, "inventory_id") == 0 ||
		   strcmp(last, "json_store_id") == 0) {
		out->type = VT_TEXT;
	} else if (strcmp(last, "item_data_size") == 0) {
		out->type = VT_NUM;
	}
	return 0;
}

static int p_paren(struct parser *p, struct frag *out)
{
	struct frag x;
	size_t n = 0;

	p->i++;
	frag_init(p, out);
	if (emit(p, out, "("))
		return -1;
	if (starts_query(peek(p))) {
		struct core_info ci = {0};
		if (p_query(p, &x, &ci) || emit_frag(p, out, &x))
			return -1;
		return expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, ")");
	}
	for (;;) {
		struct frag *keep = n == 0 ? &x : NULL;
		struct frag y;
		if (p_expr(p, P_OR, keep ? keep : &y))
			return -1;
		if (n == 0 && peek(p)->kind == INV_TOK_RPAREN) {
			out->type = x.type;
			out->prefilter = x.prefilter;
			out->is_item_data = x.is_item_data;
			out->is_param = x.is_param;
			out->is_param_json = x.is_param_json;
		}
		if ((n > 0 && emit(p, out, ",")) || emit_frag(p, out, keep ? keep : &y))
			return -1;
		n++;
		if (peek(p)->kind != INV_TOK_COMMA)
			break;
		p->i++;
	}
	if (n > 1)
		out->type = VT_UNKNOWN;
	return expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, ")");
}

static int p_word(struct parser *p, struct frag *out)
{
	const struct inv_tok *t = peek(p);

	if (t->kind == INV_TOK_WORD) {
		if (tok_is(t, "null") || tok_is(t, "true") || tok_is(t, "false")) {
			frag_init(p, out);
			out->type = tok_is(t, "null") ? VT_UNKNOWN : VT_BOOL;
			return emit_tok(p, out, next(p));
		}
		if (tok_is(t, "current_date") || tok_is(t, "current_time") || tok_is(t, "current_timestamp")) {
			frag_init(p, out);
			return emit_tok(p, out, next(p));
		}
		if (tok_is(t, "case"))
			return p_case(p, out);
		if (tok_is(t, "cast")) {
			struct frag x;
			enum cast_to to;
			p->i++;
			if (expect(p, INV_TOK_LPAREN, "'('") || p_expr(p, P_OR, &x))
				return -1;
			if (expect_kw(p, "as") || p_typename(p, &to) || expect(p, INV_TOK_RPAREN, "')'")) {
				return -1;
			}
			return apply_cast(p, &x, to, out);
		}
		if (tok_is(t, "exists")) {
			struct frag q;
			struct core_info ci = {0};
			p->i++;
			frag_init(p, out);
			if (expect(p, INV_TOK_LPAREN, "'('") || !starts_query(peek(p)))
				return syntax(p, "a subquery");
			if (p_query(p, &q, &ci) || emit(p, out, "EXISTS (") || emit_frag(p, out, &q) ||
			    expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, ")"))
				return -1;
			out->type = VT_BOOL;
			return 0;
		}
		if (tok_is(t, "array") || tok_is(t, "interval") || tok_is(t, "row"))
			return unsupported(p, t, "ARRAY, ROW and INTERVAL constructors");
		if ((tok_is(t, "jsonb") || tok_is(t, "json")) && peek2(p)->kind == INV_TOK_STRING) {
			struct frag x;
			p->i++;
			frag_init(p, &x);
			if (emit_tok(p, &x, next(p)))
				return -1;
			x.type = VT_TEXT;
			return apply_cast(p, &x, C_JSON, out);
		}
		if (is_reserved(t))
			return syntax(p, "an expression");
		if (peek2(p)->kind == INV_TOK_LPAREN)
			return p_call(p, out);
	}
	return p_colref(p, out);
}

static int p_primary(struct parser *p, struct frag *out)
{
	const struct inv_tok *t = peek(p);

	switch (t->kind) {
	case INV_TOK_NUMBER:
	case INV_TOK_STRING:
		frag_init(p, out);
		out->type = t->kind == INV_TOK_NUMBER ? VT_NUM : VT_TEXT;
		return emit_tok(p, out, next(p));
	case INV_TOK_PARAM:
		p->i++;
		p->n_params++;
		frag_init(p, out);
		out->is_param = true;
		return emit(p, out, "?");
	case INV_TOK_LPAREN:
		return p_paren(p, out);
	case INV_TOK_WORD:
	case INV_TOK_QIDENT:
		return p_word(p, out);
	default:
		return syntax(p, "an expression");
	}
}

static int p_postfix(struct parser *p, struct frag *out)
{
	if (p_primary(p, out))
		return -1;
	for (;;) {
		const struct inv_tok *t = peek(p);
		if (tok_op(t, "::")) {
			struct frag x = *out;
			enum cast_to to;
			p->i++;
			if (p_typename(p, &to)) {
				return -1;
			}
			if (apply_cast(p, &x, to, out))
				return -1;
		} else if (t->kind == INV_TOK_LBRACKET) {
			return unsupported(p, t, "subscripts ([...])");
		} else if (tok_is(t, "collate")) {
			return unsupported(p, t, "COLLATE");
		} else {
			return 0;
		}
	}
}

static int p_unary(struct parser *p, struct frag *out)
{
	const struct inv_tok *t = peek(p);
	struct frag x;
	int rc;

	if (tok_is(t, "not")) {
		p->i++;
		if (enter(p))
			return -1;
		rc = p_expr(p, P_IS, &x);
		leave(p);
		if (rc || wrap(p, out, "(NOT", &x, ")"))
			return -1;
		out->type = VT_BOOL;
		return 0;
	}
	if (tok_op(t, "-") || tok_op(t, "+")) {
		p->i++;
		if (enter(p))
			return -1;
		rc = p_unary(p, &x);
		leave(p);
		if (rc || wrap(p, out, tok_op(t, "-") ? "(-" : "(+", &x, ")"))
			return -1;
		out->type = VT_NUM;
		return 0;
	}
	return p_postfix(p, out);
}

static int p_in(struct parser *p, struct frag *l, bool neg, struct frag *out)
{
	struct frag x;
	size_t n = 0;

	if (binary_open(p, out, l, neg ? "NOT IN (" : "IN (") || expect(p, INV_TOK_LPAREN, "'('"))
		return -1;
	if (starts_query(peek(p))) {
		struct core_info ci = {0};
		if (p_query(p, &x, &ci) || emit_frag(p, out, &x))
			return -1;
	} else {
		do {
			if ((n++ > 0 && emit(p, out, ",")) || p_expr(p, P_OR, &x) || emit_frag(p, out, &x))
				return -1;
		} while (peek(p)->kind == INV_TOK_COMMA && (p->i++, true));
	}
	out->type = VT_BOOL;
	return expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, "))");
}

static int p_like(struct parser *p, struct frag *l, bool neg, bool ci_like, struct frag *out)
{
	struct frag r, x;

	if (p_expr(p, P_LIKE + 1, &r))
		return -1;
	frag_init(p, out);
	out->type = VT_BOOL;
	if (emit(p, out, ci_like ? "(lower(" : "(") || emit_frag(p, out, l) || emit(p, out, ci_like ? ")" : "") ||
	    emit(p, out, neg ? "NOT LIKE" : "LIKE") || emit(p, out, ci_like ? "lower(" : "") || emit_frag(p, out, &r) ||
	    emit(p, out, ci_like ? ")" : ""))
		return -1;
	if (accept(p, "escape") && (p_expr(p, P_LIKE + 1, &x) || emit(p, out, "ESCAPE") || emit_frag(p, out, &x)))
		return -1;
	return emit(p, out, ")");
}

static int p_between(struct parser *p, struct frag *l, bool neg, struct frag *out)
{
	struct frag a, b;

	if (tok_is(peek(p), "symmetric"))
		return unsupported(p, peek(p), "BETWEEN SYMMETRIC");
	if (p_expr(p, P_LIKE + 1, &a) || expect_kw(p, "and") || p_expr(p, P_LIKE + 1, &b))
		return -1;
	if (binary_open(p, out, l, neg ? "NOT BETWEEN" : "BETWEEN") || emit_frag(p, out, &a) || emit(p, out, "AND") ||
	    emit_frag(p, out, &b) || emit(p, out, ")"))
		return -1;
	out->type = VT_BOOL;
	return 0;
}

static int p_is(struct parser *p, struct frag *l, struct frag *out)
{
	bool neg = accept(p, "not");
	const struct inv_tok *t = peek(p);
	struct frag r;

	if (tok_is(t, "null") || tok_is(t, "true") || tok_is(t, "false")) {
		p->i++;
		if (binary_open(p, out, l, neg ? "IS NOT" : "IS") || emit_tok(p, out, t) || emit(p, out, ")"))
			return -1;
	} else if (tok_is(t, "distinct")) {
		p->i++;
		if (expect_kw(p, "from") || p_expr(p, P_IS + 1, &r))
			return -1;
		/* IS DISTINCT FROM is SQLite's IS NOT, and the other way round. */
		if (binary_open(p, out, l, neg ? "IS" : "IS NOT") || emit_frag(p, out, &r) || emit(p, out, ")"))
			return -1;
	} else {
		return syntax(p, "NULL, TRUE, FALSE or DISTINCT FROM after IS");
	}
	out->type = VT_BOOL;
	return 0;
}

static int p_other_op(struct parser *p, const struct inv_tok *op, struct frag *l, struct frag *out)
{
	struct frag r;
	bool lparam, rparam;

	if (tok_op(op, "#>") || tok_op(op, "#>>"))
		return unsupported(p, op, "the path operators #> and #>> (use a chain of -> and ->>)");
	if (tok_op(op, "~"))
		return unsupported(p, op, "regular expression match (~)");
	if (tok_op(op, "^"))
		return unsupported(p, op, "the ^ operator");
	if (p_expr(p, P_OTHER + 1, &r))
		return -1;
	if (tok_op(op, "->") || tok_op(op, "->>")) {
		if (binary(p, out, l, "->", &r))
			return -1;
		out->type = VT_JSON;
		if (tok_op(op, "->>")) {
			struct frag x = *out;
			if (wrap(p, out, "accord_pg_text(", &x, ")"))
				return -1;
			out->type = VT_TEXT;
		}
		return 0;
	}
	if (tok_op(op, "@>") || tok_op(op, "<@")) {
		bool fwd = tok_op(op, "@>");
		struct frag *a = fwd ? l : &r, *b = fwd ? &r : l;
		bool item = a->is_item_data;
		rparam = b->is_param_json || b->is_param;
		if (call2(p, out, "json_contains", a, b))
			return -1;
		out->type = VT_BOOL;
		out->prefilter = item && rparam;
		return 0;
	}
	/* || */
	lparam = l->type == VT_JSON;
	rparam = r.type == VT_JSON;
	if (lparam || rparam)
		return unsupported(p, op, "jsonb concatenation (||)");
	if (binary(p, out, l, "||", &r))
		return -1;
	out->type = VT_TEXT;
	return 0;
}

static int op_prec(struct parser *p)
{
	const struct inv_tok *t = peek(p);

	if (tok_is(t, "or"))
		return P_OR;
	if (tok_is(t, "and"))
		return P_AND;
	if (tok_is(t, "is") || tok_is(t, "isnull") || tok_is(t, "notnull"))
		return P_IS;
	if (tok_is(t, "in") || tok_is(t, "like") || tok_is(t, "ilike") || tok_is(t, "between") || tok_is(t, "similar"))
		return P_LIKE;
	if (tok_is(t, "not")) {
		const struct inv_tok *u = peek2(p);
		if (tok_is(u, "in") || tok_is(u, "like") || tok_is(u, "ilike") || tok_is(u, "between") ||
		    tok_is(u, "similar"))
			return P_LIKE;
		return 0;
	}
	if (t->kind != INV_TOK_OP)
		return 0;
	if (tok_op(t, "=") || tok_op(t, "<>") || tok_op(t, "!=") || tok_op(t, "<") || tok_op(t, ">") ||
	    tok_op(t, "<=") || tok_op(t, ">="))
		return P_CMP;
	if (tok_op(t, "+") || tok_op(t, "-"))
		return P_ADD;
	if (tok_op(t, "*") || tok_op(t, "/") || tok_op(t, "%"))
		return P_MUL;
	if (tok_op(t, "::"))
		return 0;
	return P_OTHER;
}

static int p_binary(struct parser *p, int prec, struct frag *l, struct frag *out)
{
	const struct inv_tok *t = next(p);
	struct frag r;

	switch (prec) {
	case P_OR:
	case P_AND: {
		bool pf = prec == P_AND && l->prefilter;
		if (p_expr(p, prec + 1, &r))
			return -1;
		pf = pf || (prec == P_AND && r.prefilter);
		if (binary(p, out, l, prec == P_OR ? "OR" : "AND", &r))
			return -1;
		out->type = VT_BOOL;
		out->prefilter = pf;
		return 0;
	}
	case P_IS:
		if (tok_is(t, "isnull") || tok_is(t, "notnull")) {
			if (binary_open(p, out, l, tok_is(t, "isnull") ? "IS NULL" : "IS NOT NULL") ||
			    emit(p, out, ")"))
				return -1;
			out->type = VT_BOOL;
			return 0;
		}
		return p_is(p, l, out);
	case P_LIKE: {
		bool neg = tok_is(t, "not");
		if (neg)
			t = next(p);
		if (tok_is(t, "similar"))
			return unsupported(p, t, "SIMILAR TO");
		if (tok_is(t, "in"))
			return p_in(p, l, neg, out);
		if (tok_is(t, "between"))
			return p_between(p, l, neg, out);
		return p_like(p, l, neg, tok_is(t, "ilike"), out);
	}
	case P_OTHER:
		return p_other_op(p, t, l, out);
	default: {
		char op[4] = {0};
		memcpy(op, t->text.p, t->text.len < 3 ? t->text.len : 3);
		if (p_expr(p, prec + 1, &r) || binary(p, out, l, op, &r))
			return -1;
		out->type = prec == P_CMP ? VT_BOOL : VT_NUM;
		return 0;
	}
	}
}

int inv_parse_expr(struct parser *p, int min_prec, struct frag *out)
{
	int prec;

	if (enter(p))
		return -1;
	if (p_unary(p, out))
		return -1;
	while ((prec = op_prec(p)) != 0 && prec >= min_prec) {
		struct frag l = *out;
		if (p_binary(p, prec, &l, out))
			return -1;
	}
	leave(p);
	return 0;
}
