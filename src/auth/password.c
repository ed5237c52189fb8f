#include "auth/password.h"

#include <string.h>

#include <sodium.h>

#define OPSLIMIT 2ULL
#define MEMLIMIT (19ULL * 1024 * 1024)

int password_hash(const char *password, char out[PASSWORD_HASH_MAX], struct err *e)
{
	_Static_assert(PASSWORD_HASH_MAX >= crypto_pwhash_STRBYTES, "hash buffer too small");
	if (crypto_pwhash_str_alg(out, password, strlen(password), OPSLIMIT, MEMLIMIT, crypto_pwhash_ALG_ARGON2ID13) !=
	    0)
		return err_set(e, ERR_INTERNAL, "out of memory while hashing a password");
	return 0;
}

bool password_verify(const char *hash, const char *password)
{
	return crypto_pwhash_str_verify(hash, password, strlen(password)) == 0;
}
