#include "flow/el/internal.h"

#include <math.h>
#include <string.h>

static bool is_ident_start(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' || ch == '$' || ch >= 0x80;
}

static bool is_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

bool el_tok_is_word(enum el_tok_kind k)
{
	switch (k) {
	case T_IDENT:
	case T_AND:
	case T_OR:
	case T_NOT:
	case T_EQ:
	case T_NE:
	case T_LT:
	case T_GT:
	case T_LE:
	case T_GE:
	case T_TRUE:
	case T_FALSE:
	case T_NULL:
	case T_INSTANCEOF:
	case T_EMPTY:
	case T_DIV:
	case T_MOD:
		return true;
	default:
		return false;
	}
}

static const struct {
	const char *word;
	enum el_tok_kind kind;
} keywords[] = {
    {"and", T_AND},
    {"or", T_OR},
    {"not", T_NOT},
    {"eq", T_EQ},
    {"ne", T_NE},
    {"lt", T_LT},
    {"gt", T_GT},
    {"le", T_LE},
    {"ge", T_GE},
    {"true", T_TRUE},
    {"false", T_FALSE},
    {"null", T_NULL},
    {"instanceof", T_INSTANCEOF},
    {"empty", T_EMPTY},
    {"div", T_DIV},
    {"mod", T_MOD},
};

static void lex_word(struct el_lexer *lx, struct el_token *t)
{
	size_t i;

	while (lx->pos < lx->len &&
	       (is_ident_start((unsigned char)lx->src[lx->pos]) || is_digit((unsigned char)lx->src[lx->pos])))
		lx->pos++;
	t->len = lx->pos - t->pos;
	t->kind = T_IDENT;
	for (i = 0; i < sizeof keywords / sizeof keywords[0]; i++) {
		if (strlen(keywords[i].word) == t->len && memcmp(keywords[i].word, lx->src + t->pos, t->len) == 0) {
			t->kind = keywords[i].kind;
			return;
		}
	}
}

static size_t skip_digits(const struct el_lexer *lx, size_t p)
{
	while (p < lx->len && is_digit((unsigned char)lx->src[p]))
		p++;
	return p;
}

/* Integer: digits.  Real: digits '.' digits* exp? | '.' digits exp? | digits exp. */
static void lex_number(struct el_lexer *lx, struct el_token *t)
{
	const char *s = lx->src;
	size_t p = skip_digits(lx, lx->pos), q;
	bool real = false;
	char tmp[400];

	if (p < lx->len && s[p] == '.') {
		real = true;
		p = skip_digits(lx, p + 1);
	}
	if (p < lx->len && (s[p] == 'e' || s[p] == 'E')) {
		q = p + 1;
		if (q < lx->len && (s[q] == '+' || s[q] == '-'))
			q++;
		if (q < lx->len && is_digit((unsigned char)s[q])) {
			real = true;
			p = skip_digits(lx, q);
		}
	}
	t->len = p - t->pos;
	lx->pos = p;
	t->kind = T_BAD;
	if (t->len >= sizeof tmp)
		return;
	memcpy(tmp, s + t->pos, t->len);
	tmp[t->len] = '\0';
	if (real) {
		t->dval = strtod(tmp, NULL);
		if (isfinite(t->dval))
			t->kind = T_REAL;
		return;
	}
	t->ival = 0;
	for (q = 0; q < t->len; q++) {
		int d = tmp[q] - '0';
		if (t->ival > (INT64_MAX - d) / 10)
			return;
		t->ival = t->ival * 10 + d;
	}
	t->kind = T_INT;
}

/* Strings: escapes only \\ \' \" (anything else after a backslash is an error). */
static void lex_string(struct el_lexer *lx, struct el_token *t)
{
	char q = lx->src[lx->pos++];

	t->kind = T_BAD;
	while (lx->pos < lx->len) {
		char ch = lx->src[lx->pos++];
		if (ch == q) {
			t->kind = T_STR;
			break;
		}
		if (ch == '\\') {
			if (lx->pos >= lx->len || !strchr("\\'\"", lx->src[lx->pos]) || lx->src[lx->pos] == '\0')
				break;
			lx->pos++;
		}
	}
	t->len = lx->pos - t->pos;
}

static bool two(struct el_lexer *lx, char a, char b)
{
	return lx->src[lx->pos] == a && lx->pos + 1 < lx->len && lx->src[lx->pos + 1] == b;
}

static enum el_tok_kind lex_punct2(struct el_lexer *lx)
{
	static const struct {
		char a, b;
		enum el_tok_kind kind;
	} ops[] = {
	    {'=', '=', T_EQ},  {'!', '=', T_NE}, {'<', '=', T_LE},    {'>', '=', T_GE},
	    {'&', '&', T_AND}, {'|', '|', T_OR}, {'-', '>', T_ARROW}, {'+', '=', T_CONCAT},
	};
	size_t i;

	for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if (two(lx, ops[i].a, ops[i].b))
			return ops[i].kind;
	return T_BAD;
}

static enum el_tok_kind lex_punct1(char ch)
{
	switch (ch) {
	case '(':
		return T_LPAREN;
	case ')':
		return T_RPAREN;
	case '[':
		return T_LBRACK;
	case ']':
		return T_RBRACK;
	case '{':
		return T_LBRACE;
	case '}':
		return T_RBRACE;
	case '.':
		return T_DOT;
	case ',':
		return T_COMMA;
	case ':':
		return T_COLON;
	case '?':
		return T_QUEST;
	case '+':
		return T_PLUS;
	case '-':
		return T_MINUS;
	case '*':
		return T_STAR;
	case '/':
		return T_SLASH;
	case '%':
		return T_PERCENT;
	case '<':
		return T_LT;
	case '>':
		return T_GT;
	case '!':
		return T_NOT;
	case '=':
		return T_ASSIGN;
	case ';':
		return T_SEMI;
	default:
		return T_BAD;
	}
}

void el_lex_next(struct el_lexer *lx, struct el_token *t)
{
	unsigned char ch;
	enum el_tok_kind k;

	while (lx->pos < lx->len && strchr(" \t\r\n", lx->src[lx->pos]) && lx->src[lx->pos] != '\0')
		lx->pos++;
	t->pos = lx->pos;
	t->len = 0;
	if (lx->pos >= lx->len) {
		t->kind = T_EOF;
		return;
	}
	ch = (unsigned char)lx->src[lx->pos];
	if (is_ident_start(ch)) {
		lex_word(lx, t);
		return;
	}
	if (is_digit(ch) || (ch == '.' && lx->pos + 1 < lx->len && is_digit((unsigned char)lx->src[lx->pos + 1]))) {
		lex_number(lx, t);
		return;
	}
	if (ch == '\'' || ch == '"') {
		lex_string(lx, t);
		return;
	}
	k = lex_punct2(lx);
	if (k != T_BAD) {
		t->kind = k;
		t->len = 2;
		lx->pos += 2;
		return;
	}
	t->kind = lex_punct1((char)ch);
	t->len = 1;
	lx->pos++;
}
