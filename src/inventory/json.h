#ifndef ACCORD_INVENTORY_JSON_H
#define ACCORD_INVENTORY_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"

/* PostgreSQL's jsonb on SQLite, for the SQLite executor of inventory queries: jsonb
 * containment, and the SQL functions the dialect translator (dialect.h) emits.  The keys of
 * an item that feed the key index are storage: store/inventory_keys.h. */

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
 *                              without being parsed (stored items are valid JSON), and a
 *                              b is decided on a's text when it can (json_text.h).
 *   accord_pg_text(j)          jsonb → text as PostgreSQL's ->> gives it: a string without
 *                              quotes, JSON null as NULL, anything else as its JSON text.
 *   accord_pg_bool(x)          text → boolean as PostgreSQL's ::boolean reads it.
 *   accord_json_bool(x)        a truth value as the JSON text true/false.
 *   accord_json_value(v, t)    a json_each row (value, type) back to JSON text.
 *   accord_jsonb_typeof(j)     jsonb_typeof: object, array, string, number, boolean, null.
 * Results that are JSON carry SQLite's JSON subtype, so json_object() and friends embed
 * them as JSON.  Errors: ERR_INTERNAL with SQLite's message. */
int inv_json_register(sqlite3 *db, struct err *e) WUR;

#endif
