#ifndef ACCORD_AUTH_PASSWORD_H
#define ACCORD_AUTH_PASSWORD_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

#define PASSWORD_HASH_MAX 128

/* User passwords: Argon2id (libsodium's crypto_pwhash_str, opslimit 2, memlimit 19 MiB —
 * OWASP's recommended minimum) in the PHC string format. */
int password_hash(const char *password, char out[PASSWORD_HASH_MAX], struct err *e) WUR;
/* Constant-time verification; false for any malformed hash. */
bool password_verify(const char *hash, const char *password);

#endif
