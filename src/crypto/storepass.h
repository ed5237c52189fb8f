#ifndef ACCORD_CRYPTO_STOREPASS_H
#define ACCORD_CRYPTO_STOREPASS_H

#include "base/err.h"

/* Store passwords of secrets: the policy a user-chosen one must meet, and the generator
 * behind generatePassword=true.  Both follow Concord (PasswordChecker/PasswordGenerator). */

#define STOREPASS_MIN_LEN 7
#define STOREPASS_GEN_LEN 12

/* Checks the rules in this order; the first failure wins and is ERR_INVALID
 * "Invalid password: <rule>" (the message never contains the password):
 *   1. at least 7 characters (bytes of UTF-8);
 *   2. at least one upper-case ASCII letter;
 *   3. at least one lower-case ASCII letter;
 *   4. at least one digit;
 *   5. no 3 consecutive characters of `username` (ASCII case-insensitive), when given.
 * username may be NULL.  Thread-safe. */
int storepass_check(const char *password, const char *username, struct err *e) WUR;

/* Writes a new NUL-terminated 12-character password: the first 3 characters are one
 * upper-case letter, one lower-case letter and one digit in random order, the other 9 are
 * drawn uniformly from letters, digits and ~`!@#$%^&*()-_=+[{]}|,<.>/?\ .  Such a password
 * always passes rules 1-4.  Thread-safe. */
void storepass_generate(char out[STOREPASS_GEN_LEN + 1]);

#endif
