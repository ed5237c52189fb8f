/* Compact JWTs split and decoded (jwt.h). */
#include "auth/jwt.h"

#include <stdlib.h>
#include <string.h>

#include "base/b64.h"

unsigned char *jwt_b64url_decode(const char *s, size_t len, size_t *out_len)
{
	char *std = malloc(len + 1);
	unsigned char *raw;

	if (!std)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		if (ch == '+' || ch == '/' || ch == '=') {
			free(std);
			return NULL;
		}
		std[i] = ch == '-' ? '+' : ch == '_' ? '/' : ch;
	}
	std[len] = '\0';
	raw = b64_decode(std, len, out_len, NULL);
	free(std);
	return raw;
}

int jwt_looks_like(const char *text)
{
	const char *a = strchr(text, '.'), *b = a ? strchr(a + 1, '.') : NULL;

	return a && b && !strchr(b + 1, '.') && !strpbrk(text, " \t\r\n");
}

static json_t *part_json(const char *p, size_t len)
{
	size_t n = 0;
	unsigned char *raw = jwt_b64url_decode(p, len, &n);
	json_t *v = raw ? json_loadb((const char *)raw, n, JSON_REJECT_DUPLICATES, NULL) : NULL;

	free(raw);
	if (v && !json_is_object(v)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}

int jwt_parse(const char *token, struct jwt *out, struct err *e)
{
	size_t len = strlen(token);
	const char *a, *b;

	memset(out, 0, sizeof *out);
	if (len > JWT_MAX_BYTES)
		return err_set(e, ERR_UNAUTH, "malformed token: longer than %d bytes", JWT_MAX_BYTES);
	if (!jwt_looks_like(token))
		return err_set(e, ERR_UNAUTH, "malformed token: not three parts header.payload.signature");
	a = strchr(token, '.');
	b = strchr(a + 1, '.');
	out->header = part_json(token, (size_t)(a - token));
	out->claims = part_json(a + 1, (size_t)(b - a - 1));
	out->sig = jwt_b64url_decode(b + 1, len - (size_t)(b + 1 - token), &out->sig_len);
	out->signed_len = (size_t)(b - token);
	if (!out->header || !out->claims || !out->sig || out->sig_len == 0) {
		jwt_cleanup(out);
		return err_set(e, ERR_UNAUTH, "malformed token: a part is not Base64url JSON");
	}
	return 0;
}

void jwt_cleanup(struct jwt *t)
{
	json_decref(t->header);
	json_decref(t->claims);
	free(t->sig);
	memset(t, 0, sizeof *t);
}
