#ifndef ACCORD_INVENTORY_PARSE_H
#define ACCORD_INVENTORY_PARSE_H

/* Internal to the inventory-query translator (dialect.c: statements, dialect_expr.c:
 * expressions): the parser state, the fragments it produces and the small helpers both
 * halves use.  A syntax-directed translator: recursive descent over the statement,
 * precedence climbing over expressions (PostgreSQL's operator precedence), each production
 * returning the SQLite text it stands for together with what is known of its type.
 * Nothing outside those two files includes this. */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/str.h"
#include "inventory/lex.h"

enum vt { VT_UNKNOWN, VT_JSON, VT_TEXT, VT_NUM, VT_BOOL };

struct frag {
	size_t slot; /* its text: the parser's pool entry */
	enum vt type;
	bool is_param;	    /* a bare ? */
	bool is_param_json; /* ?::jsonb */
	bool is_item_data;  /* a reference to the column item_data */
	bool prefilter;	    /* item_data @> ?::jsonb, alone or as a conjunct of an AND chain */
};

#define MAX_DEPTH 48
#define MAX_NAMES 32
#define NAME_MAX_LEN 64

struct srf {
	char alias[NAME_MAX_LEN];
	char column[NAME_MAX_LEN];
	bool text; /* jsonb_array_elements_text */
};

struct pool {
	struct buf *v;
	size_t n, cap;
};

struct parser {
	const struct inv_tok *t;
	struct pool pool; /* every fragment's text; freed all at once at the end */
	bool oom;
	size_t i;
	const char *table;
	struct err *e;
	size_t out_max;
	unsigned depth;
	unsigned n_params;
	unsigned n_refs; /* references to inventory_data */
	char ctes[MAX_NAMES][NAME_MAX_LEN];
	size_t n_ctes;
	struct srf srfs[MAX_NAMES];
	size_t n_srfs;
};

/* What the statement-level productions report up for the prefilter decision. */
struct core_info {
	bool simple; /* one SELECT, FROM exactly inventory_data */
	bool where_prefilter;
};

enum prec {
	P_OR = 1,
	P_AND,
	P_NOT,
	P_IS,
	P_CMP,
	P_LIKE,
	P_OTHER,
	P_ADD,
	P_MUL,
	P_UNARY,
};

static const struct inv_tok *peek(struct parser *p)
{
	return &p->t[p->i];
}

static const struct inv_tok *peek2(struct parser *p)
{
	return p->t[p->i].kind == INV_TOK_END ? &p->t[p->i] : &p->t[p->i + 1];
}

static const struct inv_tok *next(struct parser *p)
{
	const struct inv_tok *t = &p->t[p->i];
	if (t->kind != INV_TOK_END)
		p->i++;
	return t;
}

static inline bool tok_is(const struct inv_tok *t, const char *kw)
{
	return t->kind == INV_TOK_WORD && str_ieq_cstr(t->text, kw);
}

static inline bool tok_op(const struct inv_tok *t, const char *op)
{
	return t->kind == INV_TOK_OP && str_eq_cstr(t->text, op);
}

static inline bool is_reserved(const struct inv_tok *t)
{
	static const char *const reserved[] = {
	    "all",    "and",	"as",	     "asc",	"between", "by",      "case",	   "cast",
	    "cross",  "desc",	"distinct",  "else",	"end",	   "escape",  "except",	   "exists",
	    "fetch",  "filter", "for",	     "from",	"full",	   "group",   "having",	   "ilike",
	    "in",     "inner",	"intersect", "into",	"is",	   "isnull",  "join",	   "lateral",
	    "left",   "like",	"limit",     "natural", "not",	   "notnull", "null",	   "nulls",
	    "offset", "on",	"or",	     "order",	"outer",   "over",    "recursive", "returning",
	    "right",  "select", "similar",   "then",	"union",   "using",   "values",	   "when",
	    "where",  "window", "with",	     "false",	"true",	   "collate", "array",	   "interval",
	};

	if (t->kind != INV_TOK_WORD)
		return false;
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (str_ieq_cstr(t->text, reserved[i]))
			return true;
	return false;
}

static inline bool accept(struct parser *p, const char *kw)
{
	if (!tok_is(peek(p), kw))
		return false;
	p->i++;
	return true;
}

static inline int syntax(struct parser *p, const char *expected)
{
	const struct inv_tok *t = peek(p);
	char d[64];

	inv_tok_describe(t, d, sizeof(d));
	if (t->kind == INV_TOK_END)
		return err_set(p->e, ERR_INVALID, "syntax error: expected %s, found end of input", expected);
	return err_set(p->e, ERR_INVALID, "syntax error: expected %s, found %s at line %u, column %u", expected, d,
		       t->line, t->col);
}

static inline int unsupported(struct parser *p, const struct inv_tok *t, const char *what)
{
	return err_set(p->e, ERR_INVALID, "unsupported syntax: %s at line %u, column %u", what, t->line, t->col);
}

static inline int expect(struct parser *p, enum inv_tok_kind kind, const char *what)
{
	if (peek(p)->kind != kind)
		return syntax(p, what);
	p->i++;
	return 0;
}

static inline int expect_kw(struct parser *p, const char *kw)
{
	char what[32];

	if (accept(p, kw))
		return 0;
	str_fmt_cut(what, sizeof(what), "%s", kw);
	for (char *c = what; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	return syntax(p, what);
}

/* Normalised name of an identifier token, as PostgreSQL resolves it: unquoted names fold to
 * lower case, quoted names keep their case with "" read as ". */
static inline void tok_name(const struct inv_tok *t, char *out, size_t cap)
{
	size_t n = 0;

	if (t->kind == INV_TOK_QIDENT) {
		for (size_t i = 1; i + 1 < t->text.len && n + 1 < cap; i++) {
			out[n++] = t->text.p[i];
			if (t->text.p[i] == '"')
				i++;
		}
	} else {
		for (size_t i = 0; i < t->text.len && n + 1 < cap; i++) {
			char c = t->text.p[i];
			out[n++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
		}
	}
	out[n] = '\0';
}

static inline bool is_name_tok(const struct inv_tok *t)
{
	return t->kind == INV_TOK_QIDENT || (t->kind == INV_TOK_WORD && !is_reserved(t));
}

/* A new empty fragment.  Out of memory, the fragment gets the pool's entry 0, which refuses
 * every append, and the parser remembers to report it. */
static inline void frag_init(struct parser *p, struct frag *f)
{
	struct pool *pl = &p->pool;

	memset(f, 0, sizeof(*f));
	if (pl->n == pl->cap) {
		size_t cap = pl->cap ? pl->cap * 2 : 256;
		struct buf *v = realloc(pl->v, cap * sizeof(*v));
		if (!v) {
			p->oom = true;
			return;
		}
		pl->v = v;
		pl->cap = cap;
	}
	buf_init(&pl->v[pl->n], p->out_max);
	f->slot = pl->n++;
}

static inline struct buf *fbuf(struct parser *p, const struct frag *f)
{
	return &p->pool.v[f->slot];
}

/* Appends text, separated from what is there by one space unless punctuation makes it
 * unnecessary. */
static inline int emitn(struct parser *p, struct frag *f, const char *s, size_t n)
{
	struct buf *b = fbuf(p, f);

	if (n == 0)
		return 0;
	if (f->slot == 0)
		return err_set(p->e, ERR_INTERNAL, "out of memory");
	if (b->len > 0) {
		char last = b->data[b->len - 1];
		if (last != '(' && last != ' ' && last != '.' && s[0] != ')' && s[0] != ',' && s[0] != '.' &&
		    buf_append_char(b, ' ', p->e))
			return -1;
	}
	return buf_append(b, s, n, p->e);
}

static inline int emit(struct parser *p, struct frag *f, const char *s)
{
	return emitn(p, f, s, strlen(s));
}

static inline int emit_tok(struct parser *p, struct frag *f, const struct inv_tok *t)
{
	return emitn(p, f, t->text.p, t->text.len);
}

/* Appends g's text to f; g is used up (its text is released). */
static inline int emit_frag(struct parser *p, struct frag *f, struct frag *g)
{
	struct buf *b = fbuf(p, g);
	int rc;

	if (g->slot == 0)
		return err_set(p->e, ERR_INTERNAL, "out of memory");
	rc = emitn(p, f, b->data ? b->data : "", b->len);
	buf_cleanup(fbuf(p, g));
	return rc;
}

/* out = "(" l op …, to be completed by the caller. */
static inline int binary_open(struct parser *p, struct frag *out, struct frag *l, const char *op)
{
	frag_init(p, out);
	return emit(p, out, "(") || emit_frag(p, out, l) || emit(p, out, op);
}

static inline int enter(struct parser *p)
{
	if (++p->depth > MAX_DEPTH)
		return err_set(p->e, ERR_INVALID, "query is nested too deeply (more than %d levels)", MAX_DEPTH);
	return 0;
}

/* The two halves of the grammar call each other through these. */
int inv_parse_expr(struct parser *p, int min_prec, struct frag *out) WUR;
int inv_parse_query(struct parser *p, struct frag *out, struct core_info *ci) WUR;

static inline int p_expr(struct parser *p, int min_prec, struct frag *out)
{
	return inv_parse_expr(p, min_prec, out);
}

static inline int p_query(struct parser *p, struct frag *out, struct core_info *ci)
{
	return inv_parse_query(p, out, ci);
}

static inline bool starts_query(const struct inv_tok *t)
{
	return tok_is(t, "select") || tok_is(t, "with");
}

static inline void leave(struct parser *p)
{
	p->depth--;
}

/* Appends raw text with no separator (for "name(" and the like). */
static inline int emit_raw(struct parser *p, struct frag *f, const char *s)
{
	if (f->slot == 0)
		return err_set(p->e, ERR_INTERNAL, "out of memory");
	return buf_append_str(fbuf(p, f), s, p->e);
}

/* Emits a name as a double-quoted SQLite identifier (the sandbox turns off SQLite's
 * "double-quoted string" fallback, so a quoted name is always a name). */
static inline int emit_name(struct parser *p, struct frag *f, const struct inv_tok *t)
{
	char n[NAME_MAX_LEN];
	size_t raw = t->kind == INV_TOK_QIDENT ? t->text.len - 2 : t->text.len;

	if (raw >= NAME_MAX_LEN)
		return err_set(p->e, ERR_INVALID, "name longer than %d bytes at line %u, column %u", NAME_MAX_LEN - 1,
			       t->line, t->col);
	tok_name(t, n, sizeof(n));
	if (emitn(p, f, "\"", 1))
		return -1;
	for (const char *c = n; *c; c++)
		if (buf_append(fbuf(p, f), c, 1, p->e) || (*c == '"' && buf_append_char(fbuf(p, f), '"', p->e)))
			return -1;
	return buf_append_char(fbuf(p, f), '"', p->e);
}

static inline int emit_cname(struct parser *p, struct frag *f, const char *n)
{
	if (emitn(p, f, "\"", 1))
		return -1;
	for (const char *c = n; *c; c++)
		if (buf_append(fbuf(p, f), c, 1, p->e) || (*c == '"' && buf_append_char(fbuf(p, f), '"', p->e)))
			return -1;
	return buf_append_char(fbuf(p, f), '"', p->e);
}

/* Wraps x: out = pre x post, where pre ends with "(" or is a prefix word. */
static inline int wrap(struct parser *p, struct frag *out, const char *pre, struct frag *x, const char *post)
{
	frag_init(p, out);
	if (emit(p, out, pre) || emit_frag(p, out, x) || emit(p, out, post))
		return -1;
	return 0;
}

/* out = "(" l op r ")" */
static inline int binary(struct parser *p, struct frag *out, struct frag *l, const char *op, struct frag *r)
{
	frag_init(p, out);
	if (emit(p, out, "(") || emit_frag(p, out, l) || emit(p, out, op) || emit_frag(p, out, r) || emit(p, out, ")"))
		return -1;
	return 0;
}

/* out = fn(a, b) */
static inline int call2(struct parser *p, struct frag *out, const char *fn, struct frag *a, struct frag *b)
{
	frag_init(p, out);
	if (emit(p, out, fn) || emit_raw(p, out, "(") || emit_frag(p, out, a) || emit(p, out, ",") ||
	    emit_frag(p, out, b) || emit(p, out, ")"))
		return -1;
	return 0;
}

static inline bool name_in(const char *n, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(n, *set) == 0)
			return true;
	return false;
}

#endif
