#ifndef ACCORD_CRYPTO_KEYPAIR_H
#define ACCORD_CRYPTO_KEYPAIR_H

#include <stdatomic.h>
#include <stddef.h>

#include "base/err.h"

/* SSH key-pair generation with libssh.
 *
 *   KEYPAIR_RSA      RSA of limits.secret_key_bits (--secret-key-bits; default 4096, as
 *                    Concord's secretStore.keySize).  Private key in PEM as written by
 *                    libssh's OpenSSL backend ("-----BEGIN PRIVATE KEY-----", PKCS#8,
 *                    unencrypted); public key "ssh-rsa <base64> concord-server\n".
 *   KEYPAIR_ED25519  Ed25519.  libssh writes Ed25519 private keys only in the OpenSSH
 *                    format ("-----BEGIN OPENSSH PRIVATE KEY-----"); public key
 *                    "ssh-ed25519 <base64> concord-server\n".
 *
 * The public-key comment and trailing newline match what Concord returns.  Generation is
 * CPU-bound (RSA 4096 takes about a second, see bench/RESULTS.md); callers on a request
 * thread of a thread pool only stall their own request.  Thread-safe. */

enum keypair_type { KEYPAIR_RSA, KEYPAIR_ED25519 };

#define KEYPAIR_COMMENT "concord-server"

struct keypair {
	char *public_key; /* NUL-terminated OpenSSH line */
	size_t public_len;
	char *private_key; /* NUL-terminated PEM / OpenSSH armour */
	size_t private_len;
};

/* Loads libssh (crypto/ssh_api.h: it is not linked) and initialises it and its crypto
 * library on the calling thread by generating and exporting a small throw-away RSA key
 * (a few milliseconds), so that the library's lazily built global state is created once,
 * here, and not first inside a worker thread.  Call from the main thread at start-up,
 * before threads generate keys. */
int keypair_init(struct err *e) WUR;

/* "rsa" or "ed25519" (ASCII case-insensitive); otherwise ERR_INVALID naming the value. */
int keypair_type_parse(const char *s, enum keypair_type *out, struct err *e) WUR;
const char *keypair_type_name(enum keypair_type t);

/* Generates a pair into *kp (owned by the caller: keypair_cleanup).  ERR_INTERNAL when
 * libssh fails or cannot be loaded ("cannot load libssh.so.4 (package libssh-4): ..."). */
int keypair_generate(enum keypair_type t, struct keypair *kp, struct err *e) WUR;

/* As keypair_generate, for a caller that may have to stop it (crypto/keypool.c at the
 * server's stop): an RSA generation runs through libcrypto, whose progress callback checks
 * *cancel (borrowed; set from another thread) for every prime candidate and test round,
 * so it ends within milliseconds of CPU once *cancel is true, with ERR_UNAVAILABLE "key
 * pair generation cancelled" and nothing in *kp.  Where libssh is not built on libcrypto
 * (crypto/ssh_api.h) it is keypair_generate and runs to its end. */
int keypair_generate_cancellable(enum keypair_type t, const atomic_bool *cancel, struct keypair *kp, struct err *e) WUR;

/* Wipes the private key and frees both strings; kp may be NULL or zeroed. */
void keypair_cleanup(struct keypair *kp);

#endif
