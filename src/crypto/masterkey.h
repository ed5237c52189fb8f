#ifndef ACCORD_CRYPTO_MASTERKEY_H
#define ACCORD_CRYPTO_MASTERKEY_H

#include <stdbool.h>

#include "base/err.h"

/* The server's master key: 32 random bytes that wrap the data key of every secret that
 * has no store password (see crypto/seal.h and docs/security.md).
 *
 * Sources, first match wins:
 *   1. ACCORD_MASTER_KEY: the standard Base64 encoding (padded or not) of exactly 32 bytes,
 *      e.g. the output of `head -c 32 /dev/urandom | base64`.
 *   2. <data>/master.key: exactly 32 raw bytes, a regular file (not a symlink) whose mode
 *      grants nothing to group or others (0600 or 0400).  When the file does not exist it is
 *      created with mode 0600 and fresh random bytes.
 * A key of the wrong size, a file with looser permissions or one that cannot be read is a
 * start-up error with a message naming the problem (never the key). */

#define MASTERKEY_BYTES 32
#define MASTERKEY_ID_BYTES 8
#define MASTERKEY_FILE "master.key"

struct masterkey {
	unsigned char key[MASTERKEY_BYTES];
	/* A public identifier derived from the key (keyed BLAKE2b of a constant), recorded in
	 * every envelope so a wrong or rotated key is recognised before any decryption. */
	unsigned char id[MASTERKEY_ID_BYTES];
};

enum masterkey_source { MASTERKEY_FROM_ENV, MASTERKEY_FROM_FILE, MASTERKEY_CREATED };

/* Loads the master key into *mk.  env_b64 is the value of ACCORD_MASTER_KEY (NULL or ""
 * means unset); data_dir must exist.  *src (may be NULL) says where the key came from.
 * Errors: ERR_INVALID for a malformed key or file, ERR_INTERNAL for I/O failures.
 * Not thread-safe: call once at start-up. */
int masterkey_load(const char *env_b64, const char *data_dir, struct masterkey *mk, enum masterkey_source *src,
		   struct err *e) WUR;

/* Loads a key from an existing file with the same checks as above, never creating it
 * (used for <data>/master.key.previous during rotation).  ERR_NOT_FOUND when absent. */
int masterkey_load_file(const char *path, struct masterkey *mk, struct err *e) WUR;

/* The key check of a database (docs/security.md "The master key"): "v1:" and the hex of
 * BLAKE2b-256 keyed with the master key over the constant "accord master key check v1".  A
 * keyed BLAKE2b is a PRF: the value says nothing about the key but whether a given key is
 * the one; its own context keeps it apart from the envelope key id.  out gets
 * MASTERKEY_CHECK_LEN characters and a NUL.  Thread-safe. */
#define MASTERKEY_CHECK_LEN (3 + 64)
void masterkey_check(const struct masterkey *mk, char out[MASTERKEY_CHECK_LEN + 1]);

/* True when check (NUL-terminated, e.g. read from the database) is mk's key check; compared
 * in constant time. */
bool masterkey_check_matches(const struct masterkey *mk, const char *check);

/* Sets *mk from 32 raw bytes (tests, tools). */
void masterkey_from_bytes(struct masterkey *mk, const unsigned char key[MASTERKEY_BYTES]);

/* Wipes the key material. */
void masterkey_wipe(struct masterkey *mk);

#endif
