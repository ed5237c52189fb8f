#ifndef ACCORD_FLOW_EL_EL_H
#define ACCORD_FLOW_EL_EL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

/* The expression language of flows (Jakarta EL 3.0 as Concord uses it, reference §4).
 *
 * Parse once, evaluate many times: el_parse / el_parse_template build an immutable
 * `struct el_expr` that the VM caches per step.  Evaluating never changes the expression,
 * so one expression may be evaluated by several threads at once (each with its own env);
 * literal scalars of the expression, and integer results of arithmetic between -128 and
 * 1023 (one json_t per value for the life of the process), may be shared (by reference
 * count) with results, so callers must never modify a scalar json_t in place
 * (json_integer_set and friends) that anything else holds.
 *
 * Values are jansson values.  Integers are 64-bit (Java Long), reals are Java Doubles.
 * Results that have no JSON form are converted on the way out: an Optional becomes its
 * value (or null when empty), a stream becomes a list; a lambda, a task or a class used
 * as a value is an error.
 *
 * Return codes of every fallible function here:
 *   0           success;
 *   EL_THROWN   a user error raised by `throw('msg')` (or by an env callback that returns
 *               EL_THROWN): e->msg is exactly the user's message, nothing prepended;
 *   other < 0   an error; e->msg is the Concord text of reference §4.6 without location:
 *               "while parsing expression '<src>': Encountered …" or
 *               "while evaluating expression '<src>': <cause>".  e->code is ERR_LIMIT
 *               when a limit (limits.flow_expr_bytes, limits.flow_expr_depth) was hit,
 *               and the message names the limit.
 * Limits: parsing refuses expressions longer than limits.flow_expr_bytes or nesting deeper
 * than limits.flow_expr_depth (ERR_LIMIT, message names the limit); one evaluation may do
 * at most 5,000,000 steps (node evaluations, collection elements visited or produced, KiB
 * of strings built) and build strings of at most 16 MiB per operation (ERR_LIMIT).
 * limits_defaults() (or the configuration) must have set `limits` before parsing.
 * Nothing crashes on any input; out of memory in the parser aborts (arena rule). */

#define EL_THROWN (-1000)

struct el_expr; /* opaque, immutable after parsing */

/* Callbacks through which an expression reaches the VM.  Names are NUL-terminated and
 * borrowed for the duration of the call.  Any callback may be NULL (then: no variables,
 * no assignment, no tasks, no VM functions).  A callback that fails returns < 0 with e
 * set; return EL_THROWN to have its message passed through unprefixed. */
struct el_env {
	void *ctx;

	/* Variable read through the frames (reference §3, §4.5).  Returns 1 and sets *out to
	 * a BORROWED value that must stay valid until the evaluation returns when the
	 * variable is defined (a variable defined as null gives json_null()), 0 when it is
	 * not defined, < 0 on error.  Like Concord, `${list.add(x)}`, `${m.put(k, v)}` and
	 * `${m.k = v}` change the looked-up list or map in place. */
	int (*lookup)(void *ctx, const char *name, json_t **out, struct err *e);

	/* `${name = value}`: writes a variable (into the nearest ROOT frame).  value is
	 * BORROWED (json_incref to keep it).  Returns 0 or < 0. */
	int (*assign)(void *ctx, const char *name, json_t *value, struct err *e);

	/* True when name is a task that can be called as `name.method(args)`.  Consulted only
	 * for identifiers that are not variables (a variable hides a task). */
	bool (*is_task)(void *ctx, const char *name);

	/* `task.method(args…)`.  args is a BORROWED array of the evaluated arguments; on
	 * success *out is a NEW reference (json_null() for void methods).  Returns 0 or < 0. */
	int (*call_task)(void *ctx, const char *task, const char *method, json_t *args, json_t **out, struct err *e);

	/* Function calls `name(args…)` (reference §4.4).  Consulted first for every call
	 * whose arguments are all values, so the VM provides the functions that need its
	 * state (allVariables, currentFlowName, hasFlow, evalAsMap, isDebug, isDryRun,
	 * sensitive, …) and may override the others.  args is a BORROWED array; env is the
	 * env of the running evaluation (so evalAsMap can call el_json_eval_value with it).
	 * Returns 1 with *out a NEW reference when it handled the call, 0 when it does not
	 * know the name, < 0 on error.  Names it does not know fall back to the evaluator's
	 * own hasVariable, hasNonNullVariable, orDefault (through lookup and dotted paths),
	 * uuid and throw; anything else is the error "Function 'name' not found". */
	int (*call_function)(void *ctx, const struct el_env *env, const char *name, json_t *args, json_t **out,
			     struct err *e);
};

/* Parses one bare expression, e.g. "i + 1" (the text between `${` and `}`).  Messages
 * show it as '${text}'.  Returns a new expression (free with el_free) or NULL. */
struct el_expr *el_parse(const char *text, size_t len, struct err *e) WUR;

/* Parses a template: literal text with embedded `${expr}` parts; `\${` is a literal `${`.
 * A template that is exactly one `${expr}` evaluates to the typed value of expr; any other
 * template evaluates to a string: the literal text and each part's EL string form (null →
 * "", doubles as Java prints them, maps as {k=v}) concatenated.  A template without any
 * `${` evaluates to itself.  Messages show the whole template text.  New or NULL. */
struct el_expr *el_parse_template(const char *text, size_t len, struct err *e) WUR;

void el_free(struct el_expr *x);

/* True when the template is exactly one `${expr}` (its result is typed). */
bool el_is_single(const struct el_expr *x);

/* True when s contains `${` anywhere (also escaped): such a string is a template that
 * must go through el_parse_template / el_eval (reference §4.1).  Cheap; no allocation. */
bool el_has_template(const char *s, size_t len);

/* Evaluates x in env.  On success *out is a NEW reference.  Thread-safe for distinct
 * envs (and for one env whose callbacks are). */
int el_eval(const struct el_expr *x, const struct el_env *env, json_t **out, struct err *e) WUR;

/* EL coercion of the result to boolean (for `if`, `switch` conditions, reference §2.6):
 * null and "" are false, strings are true only when equal to "true" ignoring case,
 * other non-booleans are an error "Cannot convert [v] of type [class …] to [class
 * java.lang.Boolean]" (prefixed like an evaluation error). */
int el_eval_bool(const struct el_expr *x, const struct el_env *env, bool *out, struct err *e) WUR;

/* One-shot parse + evaluate of a template string (no caching). */
int el_eval_template(const char *text, size_t len, const struct el_env *env, json_t **out, struct err *e) WUR;

/* A JSON value whose strings (and, with EL_JSON_KEYS, object keys) are templates: the
 * `in:`, `set:`, `arguments` and `out:` values of steps.  Compile once per step, evaluate
 * many times.  Strings without `${` and other scalars are shared with the compiled value
 * (not copied); containers are rebuilt on each evaluation, keeping object order.  Keys
 * that evaluate to non-strings are printed as EL strings. */
#define EL_JSON_KEYS 1u

struct el_json; /* opaque, immutable after compilation */

/* v is BORROWED (the compiled form keeps its own references).  New or NULL. */
struct el_json *el_json_compile(json_t *v, unsigned flags, struct err *e) WUR;
void el_json_free(struct el_json *c);
/* *out is a NEW reference. */
int el_json_eval(const struct el_json *c, const struct el_env *env, json_t **out, struct err *e) WUR;

/* One-shot: compiles and evaluates v (BORROWED); *out is a NEW reference. */
int el_json_eval_value(json_t *v, unsigned flags, const struct el_env *env, json_t **out, struct err *e) WUR;

/* Walks a dotted path "a.b.c" as hasVariable/orDefault do: the first segment through
 * env->lookup, the rest through nested objects.  Returns 1 with *out BORROWED when the
 * whole path exists (the value may be null), 0 when it does not, < 0 on error. */
int el_path_lookup(const struct el_env *env, const char *path, size_t len, json_t **out, struct err *e) WUR;

/* Java's Pattern.compile(re).matcher(s).matches(), with the syntax `${s.matches(re)}`
 * takes (POSIX ERE underneath): *matched, and *group1 NEW with Java's group(1) of a match
 * (NULL when there was none, the pattern has no group, or the group did not take part).
 * Fails with e set on a pattern Accord cannot take. */
int el_regex_match(const char *re, const char *s, bool *matched, char **group1, struct err *e) WUR;

#endif
