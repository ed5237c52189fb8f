#ifndef ACCORD_STORE_INV_JSON_H
#define ACCORD_STORE_INV_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* JSON semantics of inventory queries: PostgreSQL's jsonb containment, the SQL functions
 * the dialect translator emits, and the scalar keys of an item that feed the key index. */

/* PostgreSQL's `a @> b` for jsonb: an object contains an object when every key of b is in a
 * with a value that contains b's value (containers) or equals it (scalars); an array
 * contains an array when every element of b is contained by some element of a (a scalar
 * element by an equal scalar element, a container by a container of the same kind); at the
 * top level only, an array contains a scalar equal to one of its elements.  Scalars are
 * equal when they have the same JSON type and value; numbers compare by value (1 = 1.0).
 * Both arguments borrowed. Thread-safe. */
bool inv_json_contains(const json_t *a, const json_t *b);

/* Registers on db the functions the translated queries call:
 *   json_contains(a, b)        a @> b on JSON texts (NULL if either is NULL; invalid JSON
 *                              is an error).  b is parsed once per statement when constant;
 *                              with b = {} a text a starting with '{' counts as an object
 *                              without being parsed (stored items are valid JSON).
 *   accord_pg_text(j)          jsonb → text as PostgreSQL's ->> gives it: a string without
 *                              quotes, JSON null as NULL, anything else as its JSON text.
 *   accord_pg_bool(x)          text → boolean as PostgreSQL's ::boolean reads it.
 *   accord_json_bool(x)        a truth value as the JSON text true/false.
 *   accord_json_value(v, t)    a json_each row (value, type) back to JSON text.
 *   accord_jsonb_typeof(j)     jsonb_typeof: object, array, string, number, boolean, null.
 * Results that are JSON carry SQLite's JSON subtype, so json_object() and friends embed
 * them as JSON.  Errors: ERR_INTERNAL with SQLite's message. */
int inv_json_register(sqlite3 *db, struct err *e) WUR;

enum inv_key_kind { INV_KEY_STRING, INV_KEY_NUMBER, INV_KEY_BOOL, INV_KEY_NULL };

/* One scalar of a JSON value at its path: object keys joined as ".key" (with '.', '[' and
 * '\' escaped by '\'), array elements as "[]" whatever their index, then ":" and the kind
 * letter (s, n, b, z).  A value contains a filter only if every key of the filter is also
 * a key of the value, which makes the keys usable as an index for @>. */
struct inv_key {
	const char *path; /* borrowed, NUL-terminated, valid during the callback */
	enum inv_key_kind kind;
	const char *str; /* INV_KEY_STRING: borrowed, str_len bytes */
	size_t str_len;
	double num;	   /* INV_KEY_NUMBER (integers converted; equal numbers give equal doubles) */
	char num_text[32]; /* INV_KEY_NUMBER: num as canonical text ("%.17g", -0 as 0), the stored form */
	bool boolean;	   /* INV_KEY_BOOL */
};

/* Strings containing NUL bytes, strings longer than this and paths longer than INV_KEY_PATH_MAX are left out of the
 * keys (so the index never promises more than it holds: a filter key that is left out is just not used to narrow the
 * search). */
#define INV_KEY_STR_MAX 200
#define INV_KEY_PATH_MAX 400

typedef int (*inv_key_fn)(void *ctx, const struct inv_key *k, struct err *e);

/* Calls fn for every scalar of v (depth first, document order; duplicates possible).
 * Stops at the first non-zero return of fn and returns it. */
int inv_json_keys(const json_t *v, inv_key_fn fn, void *ctx, struct err *e) WUR;

#endif
