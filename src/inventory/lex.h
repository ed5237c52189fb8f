#ifndef ACCORD_INVENTORY_LEX_H
#define ACCORD_INVENTORY_LEX_H

#include <stddef.h>

#include "base/err.h"
#include "base/str.h"

/* The tokenizer of inventory query texts (PostgreSQL dialect, the subset described in
 * docs/inventory.md).  Comments and white space are dropped; every other byte of the input
 * belongs to exactly one token.  Anything the translator could not pass on safely is
 * refused here with the line and column of the offending character: dollar quoting, $n
 * parameters, E'' / B'' / X'' / U& literals, named parameters (:x, @x), bytes outside
 * printable ASCII except in literals and identifiers.  Not thread-safe per object. */

enum inv_tok_kind {
	INV_TOK_END,	/* end of input (always the last token) */
	INV_TOK_WORD,	/* unquoted identifier or keyword */
	INV_TOK_QIDENT, /* "quoted identifier" (text includes the quotes) */
	INV_TOK_STRING, /* 'string literal' (text includes the quotes, '' kept) */
	INV_TOK_NUMBER, /* 12, 1.5, .5, 1e-3 */
	INV_TOK_PARAM,	/* ? */
	INV_TOK_OP,	/* operators: :: -> ->> @> <@ = <> != < > <= >= || + - * / % #> #>> ^ ~ */
	INV_TOK_LPAREN,
	INV_TOK_RPAREN,
	INV_TOK_COMMA,
	INV_TOK_DOT,
	INV_TOK_SEMI,
	INV_TOK_LBRACKET,
	INV_TOK_RBRACKET,
};

struct inv_tok {
	enum inv_tok_kind kind;
	struct str text;    /* borrowed from the input */
	unsigned line, col; /* 1-based position of the first byte */
};

struct inv_toks {
	struct inv_tok *v; /* owned */
	size_t n, cap;
};

/* Upper bound on the number of tokens of one query text. */
#define INV_LEX_MAX_TOKENS 100000

/* Splits src into tokens.  On success out holds at least the END token; the tokens borrow
 * from src, which must outlive them.  Errors: ERR_INVALID naming the problem, line and
 * column; ERR_TOO_LARGE past INV_LEX_MAX_TOKENS; ERR_INTERNAL out of memory. */
int inv_lex(struct str src, struct inv_toks *out, struct err *e) WUR;

void inv_toks_cleanup(struct inv_toks *t);

/* Short printable description of a token for error messages ("'FROM'", "end of input"),
 * written into out (NUL-terminated, truncated to cap). */
void inv_tok_describe(const struct inv_tok *t, char *out, size_t cap);

#endif
