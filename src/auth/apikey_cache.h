#ifndef ACCORD_AUTH_APIKEY_CACHE_H
#define ACCORD_AUTH_APIKEY_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "store/apikeys.h"
#include "store/users.h"

/* Verified API keys remembered in memory, so that a client sending the same key again does
 * not cost a database read (bench/api; docs/security.md "API keys").  An entry is the key
 * row and its user row as store_apikey_find_user read them, keyed by the key's SHA-256 (the
 * value the database holds, never the key), and stands only while
 *   - the store's authentication generation (store.h store_auth_generation) is the one read
 *     before that database read: any committed change of a user or an API key on this node
 *     ends every entry, so a deleted key, a disabled or deleted user, changed roles count
 *     from the next request on;
 *   - the key has not expired (its expiry is checked on every hit), and
 *   - APIKEY_CACHE_SECONDS have not passed since it was read.
 * A store that cannot give a generation (PostgreSQL: other nodes change the rows) is never
 * cached for: the caller does not call these functions.  Only keys that were found are
 * kept; a wrong key always reaches the database.  Fixed size (older entries are replaced),
 * thread-safe. */

#define APIKEY_CACHE_SECONDS 60

/* Fills k and u and returns true when hash has an entry that stands at generation and
 * now_ms; false (k and u untouched) otherwise. */
bool apikey_cache_get(const uint8_t hash[APIKEY_HASH_LEN], uint64_t generation, int64_t now_ms, struct apikey *k,
		      struct user *u);

/* Remembers k and u for hash, read at generation (the value read before the database
 * read).  Copies; nothing is kept of the arguments. */
void apikey_cache_put(const uint8_t hash[APIKEY_HASH_LEN], uint64_t generation, int64_t now_ms, const struct apikey *k,
		      const struct user *u);

/* Forgets every entry (and wipes them): at the end of a server's life. */
void apikey_cache_clear(void);

#endif
