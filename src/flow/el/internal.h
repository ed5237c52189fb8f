#ifndef ACCORD_FLOW_EL_INTERNAL_H
#define ACCORD_FLOW_EL_INTERNAL_H

/* Private to src/flow/el: the lexer, the AST, and the evaluator's working values.
 * Nothing outside src/flow/el includes this header. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/el/el.h"

/* ---- lexer ---- */

enum el_tok_kind {
	T_EOF,
	T_INT,
	T_REAL,
	T_STR,
	T_IDENT,
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_LBRACE,
	T_RBRACE,
	T_DOT,
	T_COMMA,
	T_COLON,
	T_QUEST,
	T_PLUS,
	T_MINUS,
	T_STAR,
	T_SLASH,
	T_PERCENT,
	T_EQ,
	T_NE,
	T_LT,
	T_GT,
	T_LE,
	T_GE,
	T_AND,
	T_OR,
	T_NOT,
	T_EMPTY,
	T_DIV,
	T_MOD,
	T_ASSIGN,
	T_ARROW,
	T_CONCAT,
	T_TRUE,
	T_FALSE,
	T_NULL,
	T_INSTANCEOF,
	T_SEMI,
	T_BAD /* a character or literal the lexer cannot read */
};

struct el_token {
	enum el_tok_kind kind;
	size_t pos, len; /* slice of the source */
	int64_t ival;	 /* T_INT */
	double dval;	 /* T_REAL */
};

struct el_lexer {
	const char *src;
	size_t len;
	size_t pos;
};

/* Reads the next token at lx->pos (white space skipped) and advances.  Never fails: an
 * unreadable character or literal is a T_BAD token that the parser reports. */
void el_lex_next(struct el_lexer *lx, struct el_token *t);

/* True when the token is a word that may follow '.' (identifiers and keywords). */
bool el_tok_is_word(enum el_tok_kind k);

/* ---- AST ---- */

enum el_node_kind {
	N_LIT,	  /* lit */
	N_IDENT,  /* name */
	N_LIST,	  /* kids: elements */
	N_SET,	  /* kids: elements */
	N_MAP,	  /* kids: key, value, key, value, … */
	N_NEG,	  /* kids[0] */
	N_NOT,	  /* kids[0] */
	N_EMPTY,  /* kids[0] */
	N_BIN,	  /* op; kids[0], kids[1] */
	N_AND,	  /* kids[0], kids[1] */
	N_OR,	  /* kids[0], kids[1] */
	N_COND,	  /* kids[0] ? kids[1] : kids[2] */
	N_PROP,	  /* kids[0].name */
	N_INDEX,  /* kids[0][kids[1]] */
	N_METHOD, /* kids[0].name(kids[1..]) */
	N_CALL,	  /* name(kids…) */
	N_INVOKE, /* kids[0](kids[1..]) */
	N_LAMBDA, /* params -> kids[0] */
	N_ASSIGN  /* kids[0] = kids[1] */
};

enum el_binop { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE, OP_CONCAT };

struct el_node {
	uint8_t kind;
	uint8_t op;
	uint16_t depth; /* height of this subtree */
	uint32_t n_kids;
	struct el_node **kids;
	const char *name; /* NUL-terminated, owned by the expression's pool */
	json_t *lit;
	const char **params;
	uint32_t n_params;
};

struct el_part {
	const char *text; /* literal text, unescaped; NULL for an expression part */
	size_t len;
	const struct el_node *node;
};

struct el_chunk;

struct el_expr {
	char *src; /* text shown in messages (NUL-terminated) */
	size_t src_len;
	struct el_part *parts;
	size_t n_parts;
	bool single;
	struct el_chunk *chunks;
	json_t **lits;
	size_t n_lits, cap_lits;
};

/* ---- evaluation ---- */

enum el_ev_kind { EV_JSON, EV_LAMBDA, EV_STREAM, EV_OPTIONAL, EV_TASK, EV_CLASS };

enum el_class { CLS_NONE, CLS_STRING, CLS_INTEGER, CLS_LONG, CLS_DOUBLE, CLS_BOOLEAN, CLS_MATH };

struct el_scope;

/* A working value.  EV_JSON: j (owned reference).  EV_STREAM: j is an array owned by the
 * stream alone.  EV_OPTIONAL: j the value or NULL when empty.  EV_LAMBDA: node + captured
 * scope (a reference).  EV_TASK: node (the identifier).  EV_CLASS: cls. */
struct ev {
	uint8_t kind;
	uint8_t cls;
	json_t *j;
	const struct el_node *node;
	struct el_scope *sc;
};

/* Lambda parameters in force: a reference-counted chain of bindings. */
struct el_scope {
	int refs;
	struct el_scope *parent;
	const char *name;
	struct ev val;
};

struct el_ctx {
	const struct el_env *env;
	struct el_scope *scope;
	int depth;
	int max_depth;
	uint64_t steps; /* work done, see el_budget */
	bool thrown;
	struct err *e;
};

/* An env callback returned rc < 0: notes EL_THROWN, makes sure there is a message;
 * returns -1. */
int el_callback_failed(struct el_ctx *c, int rc);

/* Sets the cause of a failure (unprefixed) and returns -1. */
int el_fail(struct el_ctx *c, enum err_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct ev el_ev_json(json_t *j); /* takes the reference */
void el_scope_release(struct el_scope *s);
void el_ev_release(struct ev *v);
struct ev el_ev_copy(const struct ev *v); /* a new reference to the same value */
/* Converts to a JSON value (takes v): Optional → value/null, stream → list; lambdas,
 * tasks, classes fail. */
int el_ev_take_json(struct el_ctx *c, struct ev *v, json_t **out);
/* Borrowed JSON view of v or NULL when it is not JSON (fails with a message). */
json_t *el_ev_json_of(struct el_ctx *c, const struct ev *v);
/* Builds a JSON value from a literal scalar or error code (new reference, never NULL unless OOM). */
json_t *el_new_real(struct el_ctx *c, double d);

int el_eval_node(struct el_ctx *c, const struct el_node *n, struct ev *out);

/* Operators on JSON values (ops.c).  Results are new references. */
int el_op_binary(struct el_ctx *c, int op, json_t *a, json_t *b, json_t **out);
int el_op_neg(struct el_ctx *c, json_t *a, json_t **out);
int el_op_equals(struct el_ctx *c, json_t *a, json_t *b, bool *out);
/* < 0 error; else *out is -1, 0, 1.  Null operands are handled by the caller. */
int el_op_compare(struct el_ctx *c, json_t *a, json_t *b, int *out);
int el_to_bool(struct el_ctx *c, const json_t *v, bool *out);
int el_to_long(struct el_ctx *c, const json_t *v, int64_t *out);
int el_to_double(struct el_ctx *c, const json_t *v, double *out);
/* Arithmetic number coercion used by sum/average: *is_real tells which of *l / *d is set. */
int el_to_number(struct el_ctx *c, const json_t *v, bool *is_real, int64_t *l, double *d);
/* EL string coercion (null → ""): new string json. */
json_t *el_to_string(struct el_ctx *c, const json_t *v);
/* Natural order of sorted()/min()/max(): numbers, strings, booleans. */
int el_natural_compare(struct el_ctx *c, json_t *a, json_t *b, int *out);
/* Refuses values that would create a cycle when stored into container. */
int el_check_store(struct el_ctx *c, json_t *container, json_t *v);

/* Methods (methods.c): target.name(args) for every kind of target. */
int el_call_method(struct el_ctx *c, struct ev *target, const char *name, struct ev *args, size_t n, struct ev *out);
int el_string_method(struct el_ctx *c, json_t *s, const char *name, struct ev *args, size_t n, struct ev *out);

/* Regular expressions, Java syntax mapped onto POSIX ERE (regex.c). */
int el_re_matches(struct el_ctx *c, const char *s, size_t len, const char *re, bool *out);
int el_re_replace_all(struct el_ctx *c, const char *s, size_t len, const char *re, const char *repl, json_t **out);
int el_re_split(struct el_ctx *c, const char *s, size_t len, const char *re, json_t **out);

/* Streams, Optionals and lambdas (stream.c). */
int el_lambda_call(struct el_ctx *c, const struct ev *lambda, struct ev *args, size_t n, struct ev *out);
int el_stream_method(struct el_ctx *c, struct ev *stream, const char *name, struct ev *args, size_t n, struct ev *out);
int el_optional_method(struct el_ctx *c, struct ev *opt, const char *name, struct ev *args, size_t n, struct ev *out);

/* Functions and classes (funcs.c). */
int el_call_function(struct el_ctx *c, const char *name, struct ev *args, size_t n, struct ev *out);
enum el_class el_class_by_name(const char *name);
int el_static_call(struct el_ctx *c, enum el_class cls, const char *name, struct ev *args, size_t n, struct ev *out);
int el_static_field(struct el_ctx *c, enum el_class cls, const char *name, struct ev *out);

/* Strings produced by one operation are capped (replace, concat, split). */
#define EL_STR_MAX (16u * 1024 * 1024)

/* Work of one evaluation: node evaluations, collection elements visited or produced,
 * and KiB of strings built.  Past EL_STEPS_MAX the evaluation fails with ERR_LIMIT, so
 * no expression can run away with time or memory (nested flatMap, distinct on big
 * lists, chains of replace).  Returns 0 or -1. */
#define EL_STEPS_MAX 5000000u
int el_budget(struct el_ctx *c, size_t n);
/* el_fail with ERR_INTERNAL "out of memory", the failure counted (base/oom.h oom_fail). */
int el_no_memory(struct el_ctx *c);

#endif
