#include "inventory/dialect.h"

#include "base/str.h"
#include "inventory/parse.h"

/* [AS] alias, emitted as AS "alias"; found is false when there is none. */
static int p_alias(struct parser *p, struct frag *out, const struct inv_tok **found)
{
	const struct inv_tok *t;

	*found = NULL;
	if (accept(p, "as")) {
		t = peek(p);
		if (t->kind != INV_TOK_WORD && t->kind != INV_TOK_QIDENT)
			return syntax(p, "a name after AS");
	} else if (is_name_tok(peek(p))) {
		t = peek(p);
	} else {
		return 0;
	}
	p->i++;
	*found = t;
	return emit(p, out, "AS") || emit_name(p, out, t);
}

static int p_table_func(struct parser *p, struct frag *out)
{
	static const char *const json_srf[] = {"jsonb_array_elements", "json_array_elements", NULL};
	static const char *const text_srf[] = {"jsonb_array_elements_text", "json_array_elements_text", NULL};
	const struct inv_tok *t = next(p), *alias, *col = NULL;
	struct srf *s;
	struct frag x;
	char n[NAME_MAX_LEN];

	tok_name(t, n, sizeof(n));
	if (!name_in(n, json_srf) && !name_in(n, text_srf))
		return err_set(p->e, ERR_INVALID,
			       "function '%s' is not allowed in FROM at line %u, column %u (supported: "
			       "jsonb_array_elements, jsonb_array_elements_text)",
			       n, t->line, t->col);
	if (p->n_srfs == MAX_NAMES)
		return err_set(p->e, ERR_INVALID, "more than %d set-returning functions", MAX_NAMES);
	p->i++;
	if (p_expr(p, P_OR, &x) || expect(p, INV_TOK_RPAREN, "')'"))
		return -1;
	frag_init(p, out);
	if (emit(p, out, "json_each(") || emit_frag(p, out, &x) || emit(p, out, ")"))
		return -1;
	if (p_alias(p, out, &alias))
		return -1;
	s = &p->srfs[p->n_srfs];
	if (str_fmt(s->alias, sizeof(s->alias), "%s", n) || str_fmt(s->column, sizeof(s->column), "value"))
		return err_set(p->e, ERR_INVALID, "name '%.64s' too long (limit %zu bytes)", n, sizeof(s->alias) - 1);
	s->text = name_in(n, text_srf);
	if (!alias && (emit(p, out, "AS") || emit_cname(p, out, n)))
		return -1;
	if (alias) {
		tok_name(alias, s->alias, sizeof(s->alias));
		if (peek(p)->kind == INV_TOK_LPAREN) {
			p->i++;
			col = peek(p);
			if (!is_name_tok(col))
				return syntax(p, "a column name");
			p->i++;
			tok_name(col, s->column, sizeof(s->column));
			if (expect(p, INV_TOK_RPAREN, "')'"))
				return -1;
		}
	}
	p->n_srfs++;
	return 0;
}

/* The two names of a store's items: Concord's table json_store_data(json_store_id, item_path,
 * item_data, item_data_size) and its older view inventory_data(inventory_id, item_path,
 * item_data).  Both read the same rows, in JSON store and inventory queries alike, as in
 * Concord (one storage, two faces). */
static bool is_data_table(const char *n)
{
	return strcmp(n, "inventory_data") == 0 || strcmp(n, "json_store_data") == 0;
}

/* The rows of table n (is_data_table): p->table itself for inventory_data; for
 * json_store_data the same rows under Concord's column names, the size of each item being
 * the bytes of its stored compact JSON text (as item_size counts it). */
static int emit_data_table(struct parser *p, struct frag *out, const char *n)
{
	if (strcmp(n, "inventory_data") == 0)
		return emit(p, out, p->table);
	return emit(p, out,
		    "(SELECT \"inventory_id\" AS \"json_store_id\", \"item_path\", \"item_data\", "
		    "length(CAST(\"item_data\" AS BLOB)) AS \"item_data_size\" FROM") ||
	       emit(p, out, p->table) || emit(p, out, ")");
}

static bool cte_known(struct parser *p, const char *n)
{
	for (size_t i = 0; i < p->n_ctes; i++)
		if (strcmp(p->ctes[i], n) == 0)
			return true;
	return false;
}

static int p_from_item(struct parser *p, struct frag *out, bool *is_inv)
{
	const struct inv_tok *t, *alias;
	char n[NAME_MAX_LEN];

	*is_inv = false;
	accept(p, "lateral");
	t = peek(p);
	if (t->kind == INV_TOK_LPAREN) {
		struct frag q;
		struct core_info ci = {0};
		p->i++;
		if (!starts_query(peek(p)))
			return unsupported(p, peek(p), "parenthesized joins");
		frag_init(p, out);
		if (p_query(p, &q, &ci) || expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, "(") ||
		    emit_frag(p, out, &q) || emit(p, out, ")") || p_alias(p, out, &alias))
			return -1;
		if (peek(p)->kind == INV_TOK_LPAREN)
			return unsupported(p, peek(p), "column alias lists");
		return 0;
	}
	if (!is_name_tok(t))
		return syntax(p, "a table name or a subquery");
	if (peek2(p)->kind == INV_TOK_DOT)
		return err_set(p->e, ERR_INVALID, "schema-qualified table names are not allowed at line %u, column %u",
			       t->line, t->col);
	if (peek2(p)->kind == INV_TOK_LPAREN)
		return p_table_func(p, out);
	tok_name(t, n, sizeof(n));
	p->i++;
	frag_init(p, out);
	if (is_data_table(n) && !cte_known(p, n)) {
		p->n_refs++;
		*is_inv = true;
		if (emit_data_table(p, out, n) || p_alias(p, out, &alias))
			return -1;
		if (!alias && (emit(p, out, "AS") || emit_cname(p, out, n)))
			return -1;
	} else if (cte_known(p, n)) {
		if (emit_name(p, out, t) || p_alias(p, out, &alias))
			return -1;
	} else {
		return err_set(p->e, ERR_INVALID,
			       "table '%s' is not allowed at line %u, column %u: a query can read only json_store_data "
			       "or inventory_data (and its own WITH queries)",
			       n, t->line, t->col);
	}
	if (peek(p)->kind == INV_TOK_LPAREN)
		return unsupported(p, peek(p), "column alias lists");
	return 0;
}

static int p_join_op(struct parser *p, struct frag *out, bool *found)
{
	size_t start = p->i;
	static const char *const words[] = {"natural", "inner", "left", "right", "full", "outer", "cross", NULL};

	*found = false;
	while (peek(p)->kind == INV_TOK_WORD) {
		char n[NAME_MAX_LEN];
		tok_name(peek(p), n, sizeof(n));
		if (!name_in(n, words))
			break;
		p->i++;
	}
	if (!tok_is(peek(p), "join")) {
		if (p->i != start)
			return syntax(p, "JOIN");
		return 0;
	}
	p->i++;
	*found = true;
	for (size_t i = start; i < p->i; i++)
		if (emit_tok(p, out, &p->t[i]))
			return -1;
	return 0;
}

static int p_join_cond(struct parser *p, struct frag *out)
{
	struct frag x;
	size_t n = 0;

	if (accept(p, "on"))
		return emit(p, out, "ON") || p_expr(p, P_OR, &x) || emit_frag(p, out, &x);
	if (!accept(p, "using"))
		return 0;
	if (emit(p, out, "USING (") || expect(p, INV_TOK_LPAREN, "'('"))
		return -1;
	do {
		const struct inv_tok *t = peek(p);
		if (!is_name_tok(t))
			return syntax(p, "a column name");
		p->i++;
		if ((n++ > 0 && emit(p, out, ",")) || emit_name(p, out, t))
			return -1;
	} while (peek(p)->kind == INV_TOK_COMMA && (p->i++, true));
	return expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, ")");
}

static int p_from(struct parser *p, struct frag *out, bool *single_inv)
{
	size_t n = 0;
	bool inv = false, join = false;

	frag_init(p, out);
	for (;;) {
		struct frag item;
		if (p_from_item(p, &item, &inv) || emit_frag(p, out, &item))
			return -1;
		n++;
		if (join && p_join_cond(p, out))
			return -1;
		if (peek(p)->kind == INV_TOK_COMMA) {
			p->i++;
			join = false;
			if (emit(p, out, ","))
				return -1;
			continue;
		}
		if (p_join_op(p, out, &join))
			return -1;
		if (!join)
			break;
	}
	*single_inv = n == 1 && inv;
	return 0;
}

/* Index of the FROM that ends the select list starting at p->i, or 0 when there is none.
 * Parenthesised text is skipped, and so is the FROM of IS [NOT] DISTINCT FROM. */
static size_t find_from(struct parser *p)
{
	size_t depth = 0;

	for (size_t i = p->i; p->t[i].kind != INV_TOK_END; i++) {
		const struct inv_tok *t = &p->t[i];
		if (t->kind == INV_TOK_LPAREN) {
			depth++;
		} else if (t->kind == INV_TOK_RPAREN) {
			if (depth == 0)
				return 0;
			depth--;
		} else if (depth == 0 && t->kind == INV_TOK_SEMI) {
			return 0;
		} else if (depth == 0 && tok_is(t, "from") && !(i > 0 && tok_is(&p->t[i - 1], "distinct"))) {
			return i;
		} else if (depth == 0 && (tok_is(t, "where") || tok_is(t, "union") || tok_is(t, "order") ||
					  tok_is(t, "limit") || tok_is(t, "group"))) {
			return 0;
		}
	}
	return 0;
}

static int p_select_list(struct parser *p, struct frag *out)
{
	size_t n = 0;

	frag_init(p, out);
	do {
		struct frag x;
		const struct inv_tok *alias;
		if (n++ > 0 && emit(p, out, ","))
			return -1;
		if (tok_op(peek(p), "*")) {
			p->i++;
			if (emit(p, out, "*"))
				return -1;
			continue;
		}
		if (p_expr(p, P_OR, &x) || emit_frag(p, out, &x) || p_alias(p, out, &alias))
			return -1;
	} while (peek(p)->kind == INV_TOK_COMMA && (p->i++, true));
	return 0;
}

static int p_expr_list(struct parser *p, struct frag *out, bool order)
{
	size_t n = 0;

	do {
		struct frag x;
		if ((n++ > 0 && emit(p, out, ",")) || p_expr(p, P_OR, &x) || emit_frag(p, out, &x))
			return -1;
		if (!order)
			continue;
		if ((accept(p, "asc") && emit(p, out, "ASC")) || (accept(p, "desc") && emit(p, out, "DESC")))
			return -1;
		if (accept(p, "nulls")) {
			if (accept(p, "first")) {
				if (emit(p, out, "NULLS FIRST"))
					return -1;
			} else if (expect_kw(p, "last") || emit(p, out, "NULLS LAST")) {
				return -1;
			}
		}
	} while (peek(p)->kind == INV_TOK_COMMA && (p->i++, true));
	return 0;
}

static int p_core(struct parser *p, struct frag *out, struct core_info *ci)
{
	struct frag sel, from, x;
	size_t f, end_from = 0;
	bool single = false;

	if (peek(p)->kind == INV_TOK_LPAREN)
		return unsupported(p, peek(p), "parenthesized SELECT in a compound query");
	if (tok_is(peek(p), "values"))
		return unsupported(p, peek(p), "VALUES");
	if (expect_kw(p, "select"))
		return -1;
	frag_init(p, out);
	if (emit(p, out, "SELECT"))
		return -1;
	if (accept(p, "distinct")) {
		if (tok_is(peek(p), "on"))
			return unsupported(p, peek(p), "DISTINCT ON");
		if (emit(p, out, "DISTINCT"))
			return -1;
	} else {
		accept(p, "all");
	}
	/* FROM first, so that the select list knows the aliases of jsonb_array_elements. */
	f = find_from(p);
	if (f) {
		size_t sel_start = p->i;
		p->i = f + 1;
		if (p_from(p, &from, &single))
			return -1;
		end_from = p->i;
		p->i = sel_start;
	}
	if (p_select_list(p, &sel) || emit_frag(p, out, &sel))
		return -1;
	if (f) {
		if (p->i != f)
			return syntax(p, "',' or FROM");
		p->i = end_from;
		if (emit(p, out, "FROM") || emit_frag(p, out, &from))
			return -1;
	}
	ci->simple = single;
	if (accept(p, "where")) {
		if (p_expr(p, P_OR, &x))
			return -1;
		ci->where_prefilter = x.prefilter;
		if (emit(p, out, "WHERE") || emit_frag(p, out, &x))
			return -1;
	}
	if (accept(p, "group")) {
		if (expect_kw(p, "by") || emit(p, out, "GROUP BY") || p_expr_list(p, out, false))
			return -1;
	}
	if (accept(p, "having") && (emit(p, out, "HAVING") || p_expr(p, P_OR, &x) || emit_frag(p, out, &x)))
		return -1;
	if (tok_is(peek(p), "window"))
		return unsupported(p, peek(p), "WINDOW");
	return 0;
}

static int p_with(struct parser *p, struct frag *out)
{
	if (emit(p, out, "WITH") || (accept(p, "recursive") && emit(p, out, "RECURSIVE")))
		return -1;
	do {
		const struct inv_tok *t = peek(p);
		struct frag q;
		struct core_info ci = {0};
		char n[NAME_MAX_LEN];
		if (!is_name_tok(t))
			return syntax(p, "the name of a WITH query");
		tok_name(t, n, sizeof(n));
		if (is_data_table(n))
			return err_set(p->e, ERR_INVALID, "a WITH query must not be named %s (line %u, column %u)", n,
				       t->line, t->col);
		if (p->n_ctes == MAX_NAMES)
			return err_set(p->e, ERR_INVALID, "more than %d WITH queries", MAX_NAMES);
		if (str_fmt(p->ctes[p->n_ctes++], NAME_MAX_LEN, "%s", n))
			return err_set(p->e, ERR_INVALID, "name '%.64s' too long (limit %d bytes)", n,
				       NAME_MAX_LEN - 1);
		p->i++;
		if (emit_name(p, out, t))
			return -1;
		if (peek(p)->kind == INV_TOK_LPAREN) {
			size_t k = 0;
			p->i++;
			if (emit(p, out, "("))
				return -1;
			do {
				const struct inv_tok *c = peek(p);
				if (!is_name_tok(c))
					return syntax(p, "a column name");
				p->i++;
				if ((k++ > 0 && emit(p, out, ",")) || emit_name(p, out, c))
					return -1;
			} while (peek(p)->kind == INV_TOK_COMMA && (p->i++, true));
			if (expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, ")"))
				return -1;
		}
		if (expect_kw(p, "as") || emit(p, out, "AS"))
			return -1;
		if (accept(p, "not")) {
			if (expect_kw(p, "materialized") || emit(p, out, "NOT MATERIALIZED"))
				return -1;
		} else if (accept(p, "materialized") && emit(p, out, "MATERIALIZED")) {
			return -1;
		}
		if (expect(p, INV_TOK_LPAREN, "'('") || !starts_query(peek(p)))
			return syntax(p, "a SELECT");
		if (p_query(p, &q, &ci) || expect(p, INV_TOK_RPAREN, "')'") || emit(p, out, "(") ||
		    emit_frag(p, out, &q) || emit(p, out, ")"))
			return -1;
	} while (peek(p)->kind == INV_TOK_COMMA && (p->i++, emit(p, out, ",") == 0));
	return 0;
}

static int p_limit(struct parser *p, struct frag *out)
{
	struct frag limit, offset;
	bool has_limit = false, has_offset = false;

	for (;;) {
		if (!has_limit && accept(p, "limit")) {
			has_limit = true;
			if (accept(p, "all")) {
				frag_init(p, &limit);
				if (emit(p, &limit, "-1"))
					return -1;
			} else if (p_expr(p, P_OR, &limit)) {
				return -1;
			}
		} else if (!has_offset && accept(p, "offset")) {
			has_offset = true;
			if (p_expr(p, P_OR, &offset))
				return -1;
			if (!accept(p, "rows"))
				accept(p, "row");
		} else {
			break;
		}
	}
	if (tok_is(peek(p), "fetch"))
		return unsupported(p, peek(p), "FETCH FIRST (use LIMIT)");
	if (has_limit && (emit(p, out, "LIMIT") || emit_frag(p, out, &limit)))
		return -1;
	if (!has_limit && has_offset && emit(p, out, "LIMIT -1"))
		return -1;
	if (has_offset && (emit(p, out, "OFFSET") || emit_frag(p, out, &offset)))
		return -1;
	return 0;
}

int inv_parse_query(struct parser *p, struct frag *out, struct core_info *ci)
{
	size_t n_ctes = p->n_ctes, n_srfs = p->n_srfs, n_cores = 0;
	int rc = -1;

	if (enter(p))
		return -1;
	frag_init(p, out);
	if (accept(p, "with") && p_with(p, out))
		goto out;
	for (;;) {
		struct frag core;
		struct core_info dummy = {0};
		if (p_core(p, &core, n_cores == 0 ? ci : &dummy) || emit_frag(p, out, &core))
			goto out;
		n_cores++;
		if (accept(p, "union")) {
			if (emit(p, out, "UNION"))
				goto out;
			if (accept(p, "all") && emit(p, out, "ALL"))
				goto out;
			accept(p, "distinct");
		} else if (tok_is(peek(p), "intersect") || tok_is(peek(p), "except")) {
			if (emit_tok(p, out, next(p)))
				goto out;
			if (tok_is(peek(p), "all")) {
				unsupported(p, peek(p), "INTERSECT ALL and EXCEPT ALL");
				goto out;
			}
			accept(p, "distinct");
		} else {
			break;
		}
	}
	if (n_cores > 1)
		ci->simple = false;
	if (accept(p, "order") && (expect_kw(p, "by") || emit(p, out, "ORDER BY") || p_expr_list(p, out, true)))
		goto out;
	if (p_limit(p, out))
		goto out;
	rc = 0;
out:
	p->n_ctes = n_ctes;
	p->n_srfs = n_srfs;
	leave(p);
	return rc;
}

static void pool_cleanup(struct pool *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		buf_cleanup(&pl->v[i]);
	free(pl->v);
}

static int check_end(struct parser *p)
{
	bool semi = peek(p)->kind == INV_TOK_SEMI;
	char d[64];

	if (semi)
		p->i++;
	if (peek(p)->kind == INV_TOK_END)
		return 0;
	inv_tok_describe(peek(p), d, sizeof(d));
	if (semi)
		return err_set(p->e, ERR_INVALID,
			       "only one statement is allowed: found %s after ';' at line %u, column %u", d,
			       peek(p)->line, peek(p)->col);
	return err_set(p->e, ERR_INVALID, "syntax error: unexpected %s at line %u, column %u", d, peek(p)->line,
		       peek(p)->col);
}

static int translate(struct parser *p, struct inv_translation *out)
{
	struct frag f, sink;
	struct core_info ci = {0};
	char d[64];

	frag_init(p, &sink); /* entry 0: the out-of-memory sink */
	if (!starts_query(peek(p))) {
		inv_tok_describe(peek(p), d, sizeof(d));
		return err_set(p->e, ERR_INVALID, "a query must be a SELECT statement, found %s at line %u, column %u",
			       d, peek(p)->line, peek(p)->col);
	}
	if (p_query(p, &f, &ci) || check_end(p))
		return p->oom ? err_set(p->e, ERR_INTERNAL, "out of memory") : -1;
	if (p->n_params > 1)
		return err_set(p->e, ERR_INVALID, "a query may have at most one ? placeholder, found %u", p->n_params);
	out->n_params = p->n_params;
	out->prefilter = ci.simple && ci.where_prefilter && p->n_refs == 1 && p->n_params == 1;
	out->sql = buf_detach(fbuf(p, &f), NULL);
	return 0;
}

int inv_dialect_translate(const char *text, size_t len, const char *table, struct inv_translation *out, struct err *e)
{
	struct inv_toks toks = {0};
	struct parser p;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > INV_DIALECT_MAX_TEXT)
		return err_set(e, ERR_TOO_LARGE, "query text is longer than %d bytes", INV_DIALECT_MAX_TEXT);
	if (str_trim((struct str){text, len}).len == 0)
		return err_set(e, ERR_INVALID, "Query should not be empty");
	if (inv_lex((struct str){text, len}, &toks, e)) {
		inv_toks_cleanup(&toks);
		return -1;
	}
	memset(&p, 0, sizeof(p));
	p.t = toks.v;
	p.table = table ? table : "inventory_data";
	p.e = e;
	p.out_max = 8 * len + 4096;
	rc = translate(&p, out);
	pool_cleanup(&p.pool);
	inv_toks_cleanup(&toks);
	return rc;
}

void inv_translation_cleanup(struct inv_translation *t)
{
	free(t->sql);
	t->sql = NULL;
}
