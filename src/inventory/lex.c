#include "inventory/lex.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

struct lexer {
	const char *p, *end;
	unsigned line, col;
	struct inv_toks *out;
	struct err *e;
};

static bool is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_char(unsigned char c)
{
	return is_ident_start(c) || is_digit(c);
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void advance(struct lexer *l, size_t n)
{
	for (size_t i = 0; i < n && l->p < l->end; i++, l->p++) {
		if (*l->p == '\n') {
			l->line++;
			l->col = 1;
		} else {
			l->col++;
		}
	}
}

static int fail(struct lexer *l, const char *what)
{
	return err_set(l->e, ERR_INVALID, "%s at line %u, column %u", what, l->line, l->col);
}

static int push(struct lexer *l, enum inv_tok_kind kind, size_t len)
{
	struct inv_toks *t = l->out;

	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct inv_tok *v;
		if (t->n >= INV_LEX_MAX_TOKENS)
			return err_set(l->e, ERR_TOO_LARGE, "query text has more than %d tokens", INV_LEX_MAX_TOKENS);
		v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return err_set(l->e, ERR_INTERNAL, "out of memory");
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct inv_tok){kind, {l->p, len}, l->line, l->col};
	advance(l, len);
	return 0;
}

/* Skips white space and comments; PostgreSQL block comments nest. */
static int skip_blank(struct lexer *l)
{
	while (l->p < l->end) {
		if (is_space((unsigned char)*l->p)) {
			advance(l, 1);
		} else if (l->end - l->p >= 2 && l->p[0] == '-' && l->p[1] == '-') {
			while (l->p < l->end && *l->p != '\n')
				advance(l, 1);
		} else if (l->end - l->p >= 2 && l->p[0] == '/' && l->p[1] == '*') {
			unsigned line = l->line, col = l->col;
			size_t depth = 0;
			do {
				if (l->end - l->p >= 2 && l->p[0] == '/' && l->p[1] == '*') {
					depth++;
					advance(l, 2);
				} else if (l->end - l->p >= 2 && l->p[0] == '*' && l->p[1] == '/') {
					depth--;
					advance(l, 2);
				} else if (l->p < l->end) {
					advance(l, 1);
				} else {
					return err_set(l->e, ERR_INVALID,
						       "unterminated comment starting at line %u, column %u", line,
						       col);
				}
			} while (depth > 0);
		} else {
			break;
		}
	}
	return 0;
}

/* A quoted run ('…' or "…") with the quote doubled inside; returns its length. */
static int quoted_len(struct lexer *l, char q, size_t *len)
{
	const char *s = l->p + 1;

	for (;;) {
		if (s >= l->end)
			return fail(l, q == '\'' ? "unterminated string literal" : "unterminated quoted identifier");
		if (*s == '\0')
			return fail(l, "NUL byte inside a quoted text");
		if (*s == q) {
			if (s + 1 < l->end && s[1] == q) {
				s += 2;
				continue;
			}
			break;
		}
		s++;
	}
	*len = (size_t)(s + 1 - l->p);
	if (q == '"' && *len == 2)
		return fail(l, "zero-length quoted identifier");
	return 0;
}

static size_t number_len(const char *p, const char *end)
{
	const char *s = p;

	while (s < end && is_digit((unsigned char)*s))
		s++;
	if (s < end && *s == '.') {
		s++;
		while (s < end && is_digit((unsigned char)*s))
			s++;
	}
	if (s < end && (*s == 'e' || *s == 'E')) {
		const char *x = s + 1;
		if (x < end && (*x == '+' || *x == '-'))
			x++;
		if (x < end && is_digit((unsigned char)*x)) {
			while (x < end && is_digit((unsigned char)*x))
				x++;
			s = x;
		}
	}
	return (size_t)(s - p);
}

static const char *const ops[] = {"->>", "#>>", "::", "->", "@>", "<@", "<=", ">=", "<>", "!=", "||",
				  "#>",	 "=",	"<",  ">",  "+",  "-",	"*",  "/",  "%",  "^",	"~"};

static size_t op_len(const char *p, const char *end)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i]);
		if ((size_t)(end - p) >= n && memcmp(p, ops[i], n) == 0)
			return n;
	}
	return 0;
}

static int prefixed_literal(struct lexer *l)
{
	char c = *l->p;
	bool quote_next = l->end - l->p >= 2 && l->p[1] == '\'';

	if (quote_next && (c == 'e' || c == 'E'))
		return fail(l, "escape string constants (E'...') are not supported");
	if (quote_next && (c == 'b' || c == 'B' || c == 'x' || c == 'X'))
		return fail(l, "bit and hex string constants are not supported");
	if ((c == 'u' || c == 'U') && l->end - l->p >= 3 && l->p[1] == '&')
		return fail(l, "Unicode escape literals (U&'...') are not supported");
	return 0;
}

static int lex_one(struct lexer *l)
{
	unsigned char c = (unsigned char)*l->p;
	size_t n = 0;

	if (is_ident_start(c)) {
		if (prefixed_literal(l))
			return -1;
		for (n = 1; l->p + n < l->end && is_ident_char((unsigned char)l->p[n]); n++)
			;
		return push(l, INV_TOK_WORD, n);
	}
	if (is_digit(c) || (c == '.' && l->end - l->p >= 2 && is_digit((unsigned char)l->p[1]))) {
		n = number_len(l->p, l->end);
		if (l->p + n < l->end && is_ident_start((unsigned char)l->p[n]))
			return fail(l, "a number must not run into a name");
		return push(l, INV_TOK_NUMBER, n);
	}
	switch (c) {
	case '\'':
	case '"':
		if (quoted_len(l, (char)c, &n))
			return -1;
		return push(l, c == '\'' ? INV_TOK_STRING : INV_TOK_QIDENT, n);
	case '?':
		if (l->end - l->p >= 2 && (l->p[1] == '|' || l->p[1] == '&'))
			return fail(l, "the jsonb operators ?| and ?& are not supported");
		return push(l, INV_TOK_PARAM, 1);
	case '(':
		return push(l, INV_TOK_LPAREN, 1);
	case ')':
		return push(l, INV_TOK_RPAREN, 1);
	case ',':
		return push(l, INV_TOK_COMMA, 1);
	case '.':
		return push(l, INV_TOK_DOT, 1);
	case ';':
		return push(l, INV_TOK_SEMI, 1);
	case '[':
		return push(l, INV_TOK_LBRACKET, 1);
	case ']':
		return push(l, INV_TOK_RBRACKET, 1);
	case '$':
		return fail(l, "'$' is not supported (no dollar quoting, no $n parameters; use ? for the parameter)");
	case ':':
		if (l->end - l->p >= 2 && l->p[1] == ':')
			return push(l, INV_TOK_OP, 2);
		return fail(l, "named parameters (:name) are not supported; use ? for the parameter");
	default:
		break;
	}
	n = op_len(l->p, l->end);
	if (n)
		return push(l, INV_TOK_OP, n);
	if (c >= 0x21 && c < 0x7f) {
		char msg[64];
		str_fmt_cut(msg, sizeof(msg), "unexpected character '%c'", c);
		return fail(l, msg);
	}
	return fail(l, "unexpected byte outside a string literal or name");
}

int inv_lex(struct str src, struct inv_toks *out, struct err *e)
{
	struct lexer l = {src.p, src.p + src.len, 1, 1, out, e};

	out->n = 0;
	for (;;) {
		if (skip_blank(&l))
			return -1;
		if (l.p >= l.end)
			break;
		if (lex_one(&l))
			return -1;
	}
	return push(&l, INV_TOK_END, 0);
}

void inv_toks_cleanup(struct inv_toks *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

void inv_tok_describe(const struct inv_tok *t, char *out, size_t cap)
{
	int len;

	if (t->kind == INV_TOK_END) {
		str_fmt_cut(out, cap, "end of input");
		return;
	}
	len = t->text.len > 40 ? 40 : (int)t->text.len;
	str_fmt_cut(out, cap, "'%.*s%s'", len, t->text.p, t->text.len > 40 ? "..." : "");
}
