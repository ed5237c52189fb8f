#ifndef ACCORD_STORE_INVENTORY_KEYS_H
#define ACCORD_STORE_INVENTORY_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* The keys of an inventory item: every scalar of its JSON value at its path, and every object
 * or array below the top, each hashed into one posting of inventory_postings
 * (schema/041_inventory_postings.sql, store/inventory_postings.h).  The item writes store
 * them with the item; the query sandbox (inventory/sandbox.h) looks a filter's keys up in
 * them to narrow `item_data @> ?` to the items that can contain the filter.  Pure functions
 * over jansson values, no SQL. */

enum inv_key_kind { INV_KEY_STRING, INV_KEY_NUMBER, INV_KEY_BOOL, INV_KEY_NULL, INV_KEY_OBJECT, INV_KEY_ARRAY };

/* One scalar of a JSON value at its path, or one object or array below the top (its
 * presence, whatever it holds): object keys joined as ".key" (with '.', '[', ':' and '\'
 * escaped by '\'), array elements as "[]" whatever their index, then ":" and the kind letter
 * (s, n, b, z, o, a).  A value contains a filter only if every key of the filter is also a
 * key of the value (an empty object or array in the filter needs one at its path), which
 * makes the keys usable as an index for @>. */
struct inv_key {
	const char *path; /* borrowed, NUL-terminated, valid during the callback */
	enum inv_key_kind kind;
	const char *str; /* INV_KEY_STRING: borrowed, str_len bytes */
	size_t str_len;
	double num;	   /* INV_KEY_NUMBER (integers converted; equal numbers give equal doubles) */
	char num_text[32]; /* INV_KEY_NUMBER: num as canonical text ("%.17g", -0 as 0), the stored form */
	bool boolean;	   /* INV_KEY_BOOL */
	bool empty;	   /* INV_KEY_OBJECT, INV_KEY_ARRAY: it holds nothing (else its own keys imply it) */
};

/* Strings containing NUL bytes, strings longer than this and paths longer than INV_KEY_PATH_MAX are left out of the
 * keys (so the index never promises more than it holds: a filter key that is left out is just not used to narrow the
 * search). */
#define INV_KEY_STR_MAX 200
#define INV_KEY_PATH_MAX 400

typedef int (*inv_key_fn)(void *ctx, const struct inv_key *k, struct err *e);

/* Calls fn for every key of v (depth first, document order, a container before what it
 * holds; duplicates possible).  Stops at the first non-zero return of fn and returns it. */
int inv_keys_each(const json_t *v, inv_key_fn fn, void *ctx, struct err *e) WUR;

/* The posting of k: a 64-bit hash (FNV-1a, then a finalizing mix) of its path, kind and
 * value, as stored in inventory_postings.hash.  Equal keys give equal hashes; two different
 * keys may collide, which only lets an item through to the exact containment check. */
int64_t inv_key_hash(const struct inv_key *k);

/* The postings of v: *out (new, free()) holds the distinct inv_key_hash of its keys in
 * ascending order, *n of them.  ERR_INTERNAL when out of memory. */
int inv_keys_postings(const json_t *v, int64_t **out, size_t *n, struct err *e) WUR;

#endif
