#include "auth/console_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/cookie.h"
#include "base/datetime.h"
#include "base/rand.h"
#include "base/str.h"

#define TOKEN_BYTES 32
#define CSRF_BYTES 24

_Static_assert(CONSOLE_SESSION_HASH_LEN == crypto_hash_sha256_BYTES, "a session hash is SHA-256");

static int unauth(struct err *e)
{
	return err_set(e, ERR_UNAUTH, "the console session has expired or was logged out: log in again");
}

static void token_hash(const char *token, uint8_t hash[CONSOLE_SESSION_HASH_LEN])
{
	crypto_hash_sha256(hash, (const unsigned char *)token, strlen(token));
}

/* n random bytes as URL-safe Base64 into out (cap bytes). */
static int random_text(size_t n, char *out, size_t cap, struct err *e)
{
	uint8_t raw[TOKEN_BYTES];
	char *s;
	int rc;

	rand_bytes(raw, n);
	s = b64_encode(raw, n, B64_URL_NOPAD);
	sodium_memzero(raw, sizeof raw);
	if (!s)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = str_fmt(out, cap, "%s", s);
	sodium_memzero(s, strlen(s));
	free(s);
	return rc ? err_set(e, ERR_INTERNAL, "a random token does not fit its field") : 0;
}

int console_session_create(struct store_conn *c, const char *user_id, int64_t idle_ms, struct console_login *out,
			   struct err *e)
{
	struct console_session s = {0};
	uint8_t hash[CONSOLE_SESSION_HASH_LEN];
	int64_t now = dt_now_ms();
	int rc;

	_Static_assert(TOKEN_BYTES * 4 / 3 + 1 < CONSOLE_TOKEN_LEN, "a token fits");
	_Static_assert(CSRF_BYTES * 4 / 3 + 1 < CONSOLE_CSRF_MAX, "a CSRF token fits");
	memset(out, 0, sizeof *out);
	if ((rc = store_console_session_purge(c, now - idle_ms, NULL, e)) ||
	    (rc = random_text(TOKEN_BYTES, out->token, sizeof out->token, e)) ||
	    (rc = random_text(CSRF_BYTES, out->csrf, sizeof out->csrf, e)))
		goto out;
	if (str_fmt(s.user_id, sizeof s.user_id, "%s", user_id) || str_fmt(s.csrf, sizeof s.csrf, "%s", out->csrf)) {
		rc = err_set(e, ERR_INTERNAL, "a user id or CSRF token does not fit its field");
		goto out;
	}
	s.created_at = now;
	token_hash(out->token, hash);
	rc = store_console_session_insert(c, hash, &s, e);
out:
	if (rc)
		sodium_memzero(out, sizeof *out);
	return rc;
}

static bool is_token(struct str v)
{
	if (v.len != CONSOLE_TOKEN_LEN - 1)
		return false;
	for (size_t i = 0; i < v.len; i++) {
		char ch = v.p[i];
		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
		      ch == '_'))
			return false;
	}
	return true;
}

bool console_session_cookie(const char *header, char token[CONSOLE_TOKEN_LEN])
{
	struct str v;

	token[0] = '\0';
	if (!cookie_value(header, CONSOLE_COOKIE, &v) || !is_token(v))
		return false;
	memcpy(token, v.p, v.len);
	token[v.len] = '\0';
	return true;
}

int console_session_auth(struct store_conn *c, const char *token, int64_t idle_ms, bool may_write,
			 struct principal *out, struct err *e)
{
	uint8_t hash[CONSOLE_SESSION_HASH_LEN];
	struct console_session s;
	struct err dbe;
	int64_t now = dt_now_ms(), refresh = idle_ms / 2 < CONSOLE_REFRESH_MS ? idle_ms / 2 : CONSOLE_REFRESH_MS;
	int rc;

	memset(out, 0, sizeof *out);
	if (!is_token(str_from(token)))
		return unauth(e);
	token_hash(token, hash);
	rc = store_console_session_find_user(c, hash, &s, &out->user, &dbe);
	if (rc == -ERR_NOT_FOUND)
		return unauth(e);
	if (rc)
		return err_set(e, dbe.code, "%s", dbe.msg);
	/* An expired row stays until the next login purges it: a read never has to write. */
	if (now - s.last_seen_at > idle_ms || out->user.disabled) {
		memset(out, 0, sizeof *out);
		return unauth(e);
	}
	if (now - s.last_seen_at >= refresh) {
		if (!may_write) {
			memset(out, 0, sizeof *out);
			return CONSOLE_SESSION_REFRESH;
		}
		if (store_console_session_touch(c, hash, now, e))
			return -1;
	}
	out->method = AUTH_CONSOLE;
	memcpy(out->csrf_token, s.csrf, sizeof out->csrf_token);
	return 0;
}

int console_session_end(struct store_conn *c, const char *token, struct err *e)
{
	uint8_t hash[CONSOLE_SESSION_HASH_LEN];

	if (!is_token(str_from(token)))
		return 0;
	token_hash(token, hash);
	return store_console_session_delete(c, hash, NULL, e);
}

void console_session_id(const uint8_t hash[CONSOLE_SESSION_HASH_LEN], char id[CONSOLE_SESSION_ID_LEN])
{
	static const char label[] = "accord console session id";
	uint8_t d[(CONSOLE_SESSION_ID_LEN - 1) / 2];

	crypto_generichash(d, sizeof d, hash, CONSOLE_SESSION_HASH_LEN, (const unsigned char *)label, sizeof label - 1);
	sodium_bin2hex(id, CONSOLE_SESSION_ID_LEN, d, sizeof d);
}

bool console_session_cookie_hash(const char *header, uint8_t hash[CONSOLE_SESSION_HASH_LEN])
{
	char token[CONSOLE_TOKEN_LEN];
	bool found = console_session_cookie(header, token);

	if (found)
		token_hash(token, hash);
	sodium_memzero(token, sizeof token);
	return found;
}

bool console_session_csrf_ok(const struct principal *who, const char *header)
{
	size_t n;

	if (who->method != AUTH_CONSOLE || !header || !who->csrf_token[0])
		return false;
	n = strlen(who->csrf_token);
	/* The length of a CSRF token is no secret (it is always the same). */
	return strlen(header) == n && sodium_memcmp(header, who->csrf_token, n) == 0;
}
