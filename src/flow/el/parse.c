#include "flow/el/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/oom.h"

/* The parsed form lives in a chain of chunks owned by the expression: nodes, names and
 * unescaped text are never freed one by one.  Out of memory aborts (like base/arena). */
struct el_chunk {
	struct el_chunk *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

static void *pool_alloc(struct el_expr *x, size_t n)
{
	struct el_chunk *c = x->chunks;
	size_t need = (n + 15) & ~(size_t)15;
	void *p;

	if (need < n)
		abort();
	if (!c || c->cap - c->used < need) {
		size_t cap = c ? c->cap * 2 : 512;
		if (cap > 65536)
			cap = 65536;
		if (cap < need)
			cap = need;
		c = malloc(sizeof *c + cap);
		if (!c)
			oom_abort("an expression's parse pool");
		c->used = 0;
		c->cap = cap;
		c->next = x->chunks;
		x->chunks = c;
	}
	p = c->data + c->used;
	c->used += need;
	memset(p, 0, n);
	return p;
}

static char *pool_strndup(struct el_expr *x, const char *s, size_t n)
{
	char *p = pool_alloc(x, n + 1);

	memcpy(p, s, n);
	return p;
}

struct parser {
	struct el_expr *x;
	struct el_lexer lx;
	struct el_token tok; /* current (not yet consumed) token */
	size_t depth;
	bool failed;
	struct err *e;
};

static void line_col(const char *s, size_t pos, size_t *line, size_t *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < pos; i++) {
		if (s[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

/* JavaCC's list after "Encountered" where an expression must start (Concord's message). */
static const char expecting_expr[] =
    ".\nWas expecting one of:\n    \"{\" ...\n    <INTEGER_LITERAL> ...\n"
    "    <FLOATING_POINT_LITERAL> ...\n    <STRING_LITERAL> ...\n    \"true\" ...\n"
    "    \"false\" ...\n    \"null\" ...\n    \"(\" ...\n    \")\" ...\n    \"[\" ...\n"
    "    \"!\" ...\n    \"not\" ...\n    \"empty\" ...\n    \"-\" ...\n    <IDENTIFIER> ...";

static void *fail_expecting(struct parser *p, const struct el_token *t, const char *expecting)
{
	size_t line, col, n = t->len > 60 ? 60 : t->len;

	if (p->failed)
		return NULL;
	p->failed = true;
	line_col(p->lx.src, t->pos, &line, &col);
	if (t->kind == T_EOF)
		err_set(p->e, ERR_INVALID,
			"while parsing expression '%s': Encountered \"<EOF>\" at line %zu, column %zu. Was expecting "
			"more input",
			p->x->src, line, col);
	else
		err_set(p->e, ERR_INVALID,
			"while parsing expression '%s': Encountered \"%.*s\" at line %zu, column %zu%s", p->x->src,
			(int)n, p->lx.src + t->pos, line, col, expecting);
	return NULL;
}

static void *fail_at(struct parser *p, const struct el_token *t)
{
	return fail_expecting(p, t, "");
}

static void *fail_limit(struct parser *p, const char *what)
{
	if (p->failed)
		return NULL;
	p->failed = true;
	if (strcmp(what, "flow_expr_depth") == 0)
		err_set(
		    p->e, ERR_LIMIT,
		    "while parsing expression '%.200s': expression nests deeper than the limit flow_expr_depth (%zu)",
		    p->x->src, limits.flow_expr_depth);
	else
		err_set(p->e, ERR_LIMIT,
			"while parsing expression '%.200s': expression is longer than the limit flow_expr_bytes (%zu "
			"bytes)",
			p->x->src, limits.flow_expr_bytes);
	return NULL;
}

static void advance(struct parser *p)
{
	el_lex_next(&p->lx, &p->tok);
}

static bool accept(struct parser *p, enum el_tok_kind k)
{
	if (p->tok.kind != k)
		return false;
	advance(p);
	return true;
}

static bool expect(struct parser *p, enum el_tok_kind k)
{
	if (accept(p, k))
		return true;
	fail_at(p, &p->tok);
	return false;
}

static struct el_node *node_new(struct parser *p, enum el_node_kind kind, size_t n_kids)
{
	struct el_node *n = pool_alloc(p->x, sizeof *n);

	n->kind = (uint8_t)kind;
	n->n_kids = (uint32_t)n_kids;
	if (n_kids)
		n->kids = pool_alloc(p->x, n_kids * sizeof *n->kids);
	n->depth = 1;
	return n;
}

/* Sets the height from the children and enforces limits.flow_expr_depth on it, so that
 * evaluation recursion is bounded even for long left-leaning chains like a.b.c.d… */
static struct el_node *node_done(struct parser *p, struct el_node *n)
{
	uint32_t i;
	size_t h = 1;

	for (i = 0; i < n->n_kids; i++)
		if (n->kids[i] && (size_t)n->kids[i]->depth + 1 > h)
			h = (size_t)n->kids[i]->depth + 1;
	if (h > limits.flow_expr_depth || h > UINT16_MAX)
		return fail_limit(p, "flow_expr_depth");
	n->depth = (uint16_t)h;
	return n;
}

static struct el_node *node1(struct parser *p, enum el_node_kind kind, struct el_node *a)
{
	struct el_node *n;

	if (!a)
		return NULL;
	n = node_new(p, kind, 1);
	n->kids[0] = a;
	return node_done(p, n);
}

static struct el_node *node2(struct parser *p, enum el_node_kind kind, int op, struct el_node *a, struct el_node *b)
{
	struct el_node *n;

	if (!a || !b)
		return NULL;
	n = node_new(p, kind, 2);
	n->op = (uint8_t)op;
	n->kids[0] = a;
	n->kids[1] = b;
	return node_done(p, n);
}

static void keep_lit(struct el_expr *x, json_t *lit)
{
	if (x->n_lits == x->cap_lits) {
		size_t cap = x->cap_lits ? x->cap_lits * 2 : 4;
		json_t **l = realloc(x->lits, cap * sizeof *l);
		if (!l)
			oom_abort("an expression's literals");
		x->lits = l;
		x->cap_lits = cap;
	}
	x->lits[x->n_lits++] = lit;
}

static struct el_node *lit_node(struct parser *p, json_t *lit)
{
	struct el_node *n;

	if (!lit)
		oom_abort("an expression's literal");
	keep_lit(p->x, lit);
	n = node_new(p, N_LIT, 0);
	n->lit = lit;
	return n;
}

static struct el_node *string_lit(struct parser *p, const struct el_token *t)
{
	const char *s = p->lx.src + t->pos + 1;
	size_t n = t->len - 2, i, o = 0;
	char *buf = pool_alloc(p->x, n + 1);

	for (i = 0; i < n; i++) {
		if (s[i] == '\\')
			i++;
		buf[o++] = s[i];
	}
	return lit_node(p, json_stringn_nocheck(buf, o));
}

static struct el_node *parse_expr(struct parser *p, int min_bp);

/* Arguments after '(' up to ')': appended after `first` reserved slots of a new node. */
struct node_vec {
	struct el_node **items;
	size_t count, cap;
};

static bool vec_push(struct node_vec *v, struct el_node *n)
{
	if (!n)
		return false;
	if (v->count == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		struct el_node **g = realloc(v->items, cap * sizeof *g);
		if (!g)
			oom_abort("an expression's list");
		v->items = g;
		v->cap = cap;
	}
	v->items[v->count++] = n;
	return true;
}

static struct el_node *parse_args(struct parser *p, enum el_node_kind kind, size_t first)
{
	struct node_vec v = {0};
	struct el_node *n = NULL;
	bool ok = true;
	size_t i;

	if (p->tok.kind != T_RPAREN) {
		do
			ok = vec_push(&v, parse_expr(p, 0));
		while (ok && accept(p, T_COMMA));
	}
	if (ok && expect(p, T_RPAREN)) {
		n = node_new(p, kind, first + v.count);
		for (i = 0; i < v.count; i++)
			n->kids[first + i] = v.items[i];
	}
	free(v.items);
	return n;
}

/* One element of a list/set, or one `key: value` pair of a map. */
static bool parse_element(struct parser *p, struct node_vec *v, bool is_map)
{
	if (!vec_push(v, parse_expr(p, 0)))
		return false;
	return !is_map || (expect(p, T_COLON) && vec_push(v, parse_expr(p, 0)));
}

/* Elements up to `close`; `first` (may be NULL) is an already parsed first element (for a
 * map: its key, the ':' consumed). */
static struct el_node *parse_elements(struct parser *p, enum el_node_kind kind, enum el_tok_kind close,
				      struct el_node *first)
{
	struct node_vec v = {0};
	struct el_node *n = NULL;
	bool is_map = kind == N_MAP, ok = true;
	size_t i;

	if (first)
		ok = vec_push(&v, first) && (!is_map || vec_push(&v, parse_expr(p, 0)));
	else if (p->tok.kind != close)
		ok = parse_element(p, &v, is_map);
	while (ok && accept(p, T_COMMA))
		ok = parse_element(p, &v, is_map);
	if (ok && expect(p, close)) {
		n = node_new(p, kind, v.count);
		for (i = 0; i < v.count; i++)
			n->kids[i] = v.items[i];
		n = node_done(p, n);
	}
	free(v.items);
	return n;
}

/* '{' already consumed: {} is an empty set, {a, b} a set, {k: v, …} a map. */
static struct el_node *parse_brace(struct parser *p)
{
	struct el_node *first;

	if (accept(p, T_RBRACE))
		return node_done(p, node_new(p, N_SET, 0));
	if (!(first = parse_expr(p, 0)))
		return NULL;
	if (accept(p, T_COLON))
		return parse_elements(p, N_MAP, T_RBRACE, first);
	return parse_elements(p, N_SET, T_RBRACE, first);
}

/* At '(' : is this `(a, b) -> …` or `() -> …`?  Scans ahead on a copy of the lexer. */
static bool lambda_ahead(const struct parser *p)
{
	struct el_lexer lx = p->lx;
	struct el_token t = p->tok;

	if (t.kind == T_RPAREN) {
		el_lex_next(&lx, &t);
		return t.kind == T_ARROW;
	}
	for (;;) {
		if (t.kind != T_IDENT)
			return false;
		el_lex_next(&lx, &t);
		if (t.kind == T_RPAREN)
			break;
		if (t.kind != T_COMMA)
			return false;
		el_lex_next(&lx, &t);
	}
	el_lex_next(&lx, &t);
	return t.kind == T_ARROW;
}

static struct el_node *parse_lambda(struct parser *p, bool parens)
{
	const char *names[64];
	size_t count = 0, i;
	struct el_node *n, *body;

	do {
		if (p->tok.kind == T_RPAREN)
			break;
		if (count == sizeof names / sizeof names[0])
			return fail_at(p, &p->tok);
		names[count++] = pool_strndup(p->x, p->lx.src + p->tok.pos, p->tok.len);
		advance(p);
	} while (parens && accept(p, T_COMMA));
	if ((parens && !expect(p, T_RPAREN)) || !expect(p, T_ARROW))
		return NULL;
	if (!(body = parse_expr(p, 1)))
		return NULL;
	n = node_new(p, N_LAMBDA, 1);
	n->kids[0] = body;
	n->n_params = (uint32_t)count;
	n->params = pool_alloc(p->x, (count ? count : 1) * sizeof *n->params);
	for (i = 0; i < count; i++)
		n->params[i] = names[i];
	return node_done(p, n);
}

static struct el_node *parse_ident(struct parser *p)
{
	struct el_token t = p->tok;
	struct el_node *n;
	struct el_lexer save = p->lx;
	struct el_token next;

	el_lex_next(&save, &next);
	if (next.kind == T_ARROW)
		return parse_lambda(p, false);
	advance(p);
	if (accept(p, T_LPAREN)) {
		if (!(n = parse_args(p, N_CALL, 0)))
			return NULL;
	} else {
		n = node_new(p, N_IDENT, 0);
	}
	n->name = pool_strndup(p->x, p->lx.src + t.pos, t.len);
	return node_done(p, n);
}

static struct el_node *parse_primary(struct parser *p)
{
	struct el_token t = p->tok;
	struct el_node *n;

	switch (t.kind) {
	case T_INT:
		advance(p);
		return lit_node(p, json_integer(t.ival));
	case T_REAL:
		advance(p);
		return lit_node(p, json_real(t.dval));
	case T_STR:
		advance(p);
		return string_lit(p, &t);
	case T_TRUE:
	case T_FALSE:
	case T_NULL:
		advance(p);
		return lit_node(p, t.kind == T_NULL ? json_null() : json_boolean(t.kind == T_TRUE));
	case T_IDENT:
		return parse_ident(p);
	case T_LBRACK:
		advance(p);
		return parse_elements(p, N_LIST, T_RBRACK, NULL);
	case T_LBRACE:
		advance(p);
		return parse_brace(p);
	case T_LPAREN:
		advance(p);
		if (lambda_ahead(p))
			return parse_lambda(p, true);
		n = parse_expr(p, 0);
		return n && expect(p, T_RPAREN) ? n : NULL;
	default:
		return fail_expecting(p, &t, expecting_expr);
	}
}

static struct el_node *parse_postfix(struct parser *p, struct el_node *n)
{
	while (n && !p->failed) {
		if (accept(p, T_DOT)) {
			struct el_token t = p->tok;
			struct el_node *m;
			if (!el_tok_is_word(t.kind))
				return fail_at(p, &t);
			advance(p);
			if (accept(p, T_LPAREN)) {
				if (!(m = parse_args(p, N_METHOD, 1)))
					return NULL;
			} else {
				m = node_new(p, N_PROP, 1);
			}
			m->kids[0] = n;
			m->name = pool_strndup(p->x, p->lx.src + t.pos, t.len);
			n = node_done(p, m);
		} else if (accept(p, T_LBRACK)) {
			struct el_node *idx = parse_expr(p, 0);
			if (!idx || !expect(p, T_RBRACK))
				return NULL;
			n = node2(p, N_INDEX, 0, n, idx);
		} else if (accept(p, T_LPAREN)) {
			struct el_node *m = parse_args(p, N_INVOKE, 1);
			if (!m)
				return NULL;
			m->kids[0] = n;
			n = node_done(p, m);
		} else {
			break;
		}
	}
	return n;
}

#define BP_UNARY 9

static struct el_node *parse_unary(struct parser *p)
{
	enum el_tok_kind k = p->tok.kind;

	if (k == T_MINUS || k == T_NOT || k == T_EMPTY) {
		advance(p);
		return node1(p, k == T_MINUS ? N_NEG : k == T_NOT ? N_NOT : N_EMPTY, parse_expr(p, BP_UNARY));
	}
	return parse_postfix(p, parse_primary(p));
}

/* Binding power of an infix token (0: not infix) and its operator. */
static int infix_bp(enum el_tok_kind k, int *op)
{
	static const struct {
		enum el_tok_kind kind;
		int bp, op;
	} table[] = {
	    {T_ASSIGN, 1, 0},	  {T_QUEST, 2, 0},	    {T_OR, 3, 0},
	    {T_AND, 4, 0},	  {T_EQ, 5, OP_EQ},	    {T_NE, 5, OP_NE},
	    {T_LT, 6, OP_LT},	  {T_GT, 6, OP_GT},	    {T_LE, 6, OP_LE},
	    {T_GE, 6, OP_GE},	  {T_CONCAT, 7, OP_CONCAT}, {T_PLUS, 8, OP_ADD},
	    {T_MINUS, 8, OP_SUB}, {T_STAR, 9, OP_MUL},	    {T_SLASH, 9, OP_DIV},
	    {T_DIV, 9, OP_DIV},	  {T_PERCENT, 9, OP_MOD},   {T_MOD, 9, OP_MOD},
	};
	size_t i;

	for (i = 0; i < sizeof table / sizeof table[0]; i++) {
		if (table[i].kind == k) {
			*op = table[i].op;
			return table[i].bp;
		}
	}
	return 0;
}

static struct el_node *parse_infix(struct parser *p, struct el_node *left, enum el_tok_kind k, int bp, int op)
{
	struct el_node *a, *b, *n;

	switch (k) {
	case T_ASSIGN:
		if (left->kind != N_IDENT && left->kind != N_PROP && left->kind != N_INDEX)
			return fail_at(p, &p->tok);
		advance(p);
		return node2(p, N_ASSIGN, 0, left, parse_expr(p, 0));
	case T_QUEST:
		advance(p);
		if (!(a = parse_expr(p, 0)) || !expect(p, T_COLON) || !(b = parse_expr(p, 1)))
			return NULL;
		n = node_new(p, N_COND, 3);
		n->kids[0] = left;
		n->kids[1] = a;
		n->kids[2] = b;
		return node_done(p, n);
	case T_OR:
	case T_AND:
		advance(p);
		return node2(p, k == T_OR ? N_OR : N_AND, 0, left, parse_expr(p, bp));
	default:
		advance(p);
		return node2(p, N_BIN, op, left, parse_expr(p, bp));
	}
}

static struct el_node *parse_expr(struct parser *p, int min_bp)
{
	struct el_node *left;
	int bp, op = 0;

	if (++p->depth > limits.flow_expr_depth)
		return fail_limit(p, "flow_expr_depth");
	left = parse_unary(p);
	while (left && !p->failed) {
		bp = infix_bp(p->tok.kind, &op);
		if (bp == 0 || bp <= min_bp)
			break;
		left = parse_infix(p, left, p->tok.kind, bp, op);
	}
	p->depth--;
	return p->failed ? NULL : left;
}

static struct el_expr *expr_new(const char *src, size_t len, bool wrap)
{
	struct el_expr *x = calloc(1, sizeof *x);
	size_t n = len + (wrap ? 3 : 0);

	if (!x)
		return NULL;
	x->src = malloc(n + 1);
	if (!x->src) {
		free(x);
		return NULL;
	}
	if (wrap) {
		memcpy(x->src, "${", 2);
		memcpy(x->src + 2, src, len);
		x->src[n - 1] = '}';
	} else {
		memcpy(x->src, src, len);
	}
	x->src[n] = '\0';
	x->src_len = n;
	return x;
}

void el_free(struct el_expr *x)
{
	struct el_chunk *c, *next;
	size_t i;

	if (!x)
		return;
	for (c = x->chunks; c; c = next) {
		next = c->next;
		free(c);
	}
	for (i = 0; i < x->n_lits; i++)
		json_decref(x->lits[i]);
	free(x->lits);
	free(x->src);
	free(x);
}

bool el_is_single(const struct el_expr *x)
{
	return x->single;
}

/* Parses one expression starting at lx.pos; stops before the token `end`. */
static const struct el_node *parse_one(struct parser *p, enum el_tok_kind end)
{
	size_t start = p->lx.pos;
	struct el_node *n;

	advance(p);
	n = parse_expr(p, 0);
	if (!n)
		return NULL;
	if (p->tok.kind != end)
		return fail_at(p, &p->tok);
	if (p->tok.pos - start > limits.flow_expr_bytes)
		return fail_limit(p, "flow_expr_bytes");
	return n;
}

struct el_expr *el_parse(const char *text, size_t len, struct err *e)
{
	struct parser p = {0};

	p.x = expr_new(text, len, true);
	if (!p.x) {
		oom_fail(e);
		return NULL;
	}
	p.e = e;
	p.lx.src = text;
	p.lx.len = len;
	p.x->parts = pool_alloc(p.x, sizeof *p.x->parts);
	p.x->n_parts = 1;
	p.x->single = true;
	if (len > limits.flow_expr_bytes)
		fail_limit(&p, "flow_expr_bytes");
	else
		p.x->parts[0].node = parse_one(&p, T_EOF);
	if (p.failed) {
		el_free(p.x);
		return NULL;
	}
	return p.x;
}

bool el_has_template(const char *s, size_t len)
{
	const char *q = s, *end = s + len;

	while (q < end && (q = memchr(q, '$', (size_t)(end - q))) != NULL) {
		if (q + 1 < end && q[1] == '{')
			return true;
		q++;
	}
	return false;
}

/* Literal text from *pos up to the next unescaped "${" (or the end); `\${` → `${`. */
static struct el_part text_part(struct parser *p, const char *s, size_t len, size_t *pos)
{
	struct el_part part = {0};
	char *buf = NULL;
	size_t i = *pos, o = 0;

	while (i < len) {
		if (s[i] == '\\' && i + 2 < len && s[i + 1] == '$' && s[i + 2] == '{') {
			if (!buf)
				buf = pool_alloc(p->x, len - *pos + 1);
			buf[o++] = '$';
			buf[o++] = '{';
			i += 3;
			continue;
		}
		if (s[i] == '$' && i + 1 < len && s[i + 1] == '{')
			break;
		if (!buf)
			buf = pool_alloc(p->x, len - *pos + 1);
		buf[o++] = s[i++];
	}
	part.text = buf ? buf : "";
	part.len = o;
	*pos = i;
	return part;
}

static int parse_parts(struct parser *p, const char *text, size_t len)
{
	struct el_part *parts = NULL;
	size_t n = 0, cap = 0, pos = 0;

	while (pos < len && !p->failed) {
		struct el_part part;
		if (text[pos] == '$' && pos + 1 < len && text[pos + 1] == '{') {
			p->lx.pos = pos + 2;
			part = (struct el_part){NULL, 0, parse_one(p, T_RBRACE)};
			pos = p->tok.pos + 1;
		} else {
			part = text_part(p, text, len, &pos);
		}
		if (n == cap) {
			struct el_part *g;
			cap = cap ? cap * 2 : 4;
			g = pool_alloc(p->x, cap * sizeof *g);
			if (n)
				memcpy(g, parts, n * sizeof *g);
			parts = g;
		}
		parts[n++] = part;
	}
	if (p->failed)
		return -1;
	p->x->parts = parts;
	p->x->n_parts = n;
	p->x->single = n == 1 && parts[0].node != NULL;
	return 0;
}

struct el_expr *el_parse_template(const char *text, size_t len, struct err *e)
{
	struct parser p = {0};

	p.x = expr_new(text, len, false);
	if (!p.x) {
		oom_fail(e);
		return NULL;
	}
	p.e = e;
	p.lx.src = text;
	p.lx.len = len;
	if (parse_parts(&p, text, len) < 0) {
		el_free(p.x);
		return NULL;
	}
	return p.x;
}
