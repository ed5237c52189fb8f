#include "crypto/storepass.h"

#include <ctype.h>
#include <string.h>

#include "base/rand.h"

static const char upper[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
static const char lower[] = "abcdefghijklmnopqrstuvwxyz";
static const char digits[] = "0123456789";
static const char any[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789~`!@#$%^&*()-_=+[{]}|,<.>/?\\";

static int has_class(const char *s, int (*cls)(int))
{
	for (; *s; s++)
		if (cls((unsigned char)*s))
			return 1;
	return 0;
}

static int contains_username_part(const char *password, const char *username)
{
	size_t ulen = strlen(username), plen = strlen(password);

	if (ulen < 3 || plen < 3)
		return 0;
	for (size_t i = 0; i + 3 <= ulen; i++)
		for (size_t j = 0; j + 3 <= plen; j++)
			if (strncasecmp(username + i, password + j, 3) == 0)
				return 1;
	return 0;
}

int storepass_check(const char *password, const char *username, struct err *e)
{
	if (strlen(password) < STOREPASS_MIN_LEN)
		return err_set(e, ERR_INVALID, "Invalid password: Password must be at least seven (7) characters");
	if (!has_class(password, isupper))
		return err_set(e, ERR_INVALID,
			       "Invalid password: Password must contain at least one upper case character");
	if (!has_class(password, islower))
		return err_set(e, ERR_INVALID,
			       "Invalid password: Password must contain at least one lower case character");
	if (!has_class(password, isdigit))
		return err_set(e, ERR_INVALID, "Invalid password: Password must contain at least one digit");
	if (username && contains_username_part(password, username))
		return err_set(e, ERR_INVALID,
			       "Invalid password: Password must not contain 3 or more consecutive characters of the "
			       "username");
	return 0;
}

static char pick(const char *set, size_t n)
{
	return set[rand_uniform((uint32_t)n)];
}

void storepass_generate(char out[STOREPASS_GEN_LEN + 1])
{
	out[0] = pick(upper, sizeof upper - 1);
	out[1] = pick(lower, sizeof lower - 1);
	out[2] = pick(digits, sizeof digits - 1);
	for (int i = 2; i > 0; i--) {
		int j = (int)rand_uniform((uint32_t)i + 1);
		char t = out[i];
		out[i] = out[j];
		out[j] = t;
	}
	for (int i = 3; i < STOREPASS_GEN_LEN; i++)
		out[i] = pick(any, sizeof any - 1);
	out[STOREPASS_GEN_LEN] = '\0';
}
