#ifndef ACCORD_CRYPTO_SERVER_KEY_H
#define ACCORD_CRYPTO_SERVER_KEY_H

#include "base/err.h"
#include "crypto/masterkey.h"
#include "store/store.h"

/* The master key of `accord serve`: loaded (ACCORD_MASTER_KEY or <data>/master.key, created
 * on first start; crypto/masterkey.h) into locked, read-only memory, and compared with the
 * database's key check (ERR_INVALID with a message naming the key's source when it does not
 * match; the check is written when the database has none, docs/security.md "The master
 * key"); then every envelope of a previous key found in ACCORD_MASTER_KEY_PREVIOUS or
 * <data>/master.key.previous is re-wrapped and the check moved to the current key in the
 * same transaction (rotation).  A master.key created by a start that fails is removed
 * again.  New key (server_key_free), or NULL with e set.  Once, at start-up. */
struct masterkey *server_key_open(struct store *store, const char *data_dir, struct err *e);

/* Wipes and frees the key; NULL is fine. */
void server_key_free(struct masterkey *mk);

#endif
