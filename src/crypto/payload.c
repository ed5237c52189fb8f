#include "crypto/payload.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

void payload_free(void *p, size_t len)
{
	if (!p)
		return;
	sodium_memzero(p, len);
	free(p);
}

static void put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

int payload_keypair_encode(struct str pub, struct str priv, unsigned char **out, size_t *out_len, struct err *e)
{
	unsigned char *p;

	*out = NULL;
	if (pub.len > PAYLOAD_KEY_MAX)
		return err_set(e, ERR_INVALID, "public key is larger than %d bytes", PAYLOAD_KEY_MAX);
	if (priv.len > PAYLOAD_KEY_MAX)
		return err_set(e, ERR_INVALID, "private key is larger than %d bytes", PAYLOAD_KEY_MAX);
	p = malloc(8 + pub.len + priv.len);
	if (!p)
		return err_set(e, ERR_INTERNAL, "out of memory");
	put_u32(p, (uint32_t)pub.len);
	if (pub.len)
		memcpy(p + 4, pub.p, pub.len);
	put_u32(p + 4 + pub.len, (uint32_t)priv.len);
	if (priv.len)
		memcpy(p + 8 + pub.len, priv.p, priv.len);
	*out = p;
	*out_len = 8 + pub.len + priv.len;
	return 0;
}

/* Reads int32BE len ‖ bytes at *off, checking len against max and the input. */
static int take(const unsigned char *p, size_t len, size_t *off, size_t max, struct str *out, const char *what,
		struct err *e)
{
	uint32_t n;

	if (len - *off < 4)
		return err_set(e, ERR_INVALID, "%s: truncated length", what);
	n = get_u32(p + *off);
	if (n > max || n > len - *off - 4)
		return err_set(e, ERR_INVALID, "%s: invalid length %u", what, n);
	out->p = (const char *)p + *off + 4;
	out->len = n;
	*off += 4 + n;
	return 0;
}

int payload_keypair_decode(const unsigned char *p, size_t len, struct str *pub, struct str *priv, struct err *e)
{
	size_t off = 0;
	int rc;

	rc = take(p, len, &off, PAYLOAD_KEY_MAX, pub, "public key", e);
	if (rc == 0)
		rc = take(p, len, &off, PAYLOAD_KEY_MAX, priv, "private key", e);
	if (rc == 0 && off != len)
		rc = err_set(e, ERR_INVALID, "key pair: %zu trailing bytes", len - off);
	return rc;
}

/* Strict UTF-8 decode of one code point at s[*i]; -1 when invalid. */
static int32_t utf8_next(const unsigned char *s, size_t len, size_t *i)
{
	unsigned char c = s[*i];
	size_t n;
	uint32_t cp, min;

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if ((c & 0xE0) == 0xC0) {
		n = 1, cp = c & 0x1F, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		n = 2, cp = c & 0x0F, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		n = 3, cp = c & 0x07, min = 0x10000;
	} else {
		return -1;
	}
	if (len - *i <= n)
		return -1;
	for (size_t k = 1; k <= n; k++) {
		if ((s[*i + k] & 0xC0) != 0x80)
			return -1;
		cp = cp << 6 | (s[*i + k] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*i += n + 1;
	return (int32_t)cp;
}

static size_t put_unit(unsigned char *o, uint32_t u)
{
	if (u != 0 && u < 0x80) {
		o[0] = (unsigned char)u;
		return 1;
	}
	if (u < 0x800) {
		o[0] = (unsigned char)(0xC0 | u >> 6);
		o[1] = (unsigned char)(0x80 | (u & 0x3F));
		return 2;
	}
	o[0] = (unsigned char)(0xE0 | u >> 12);
	o[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
	o[2] = (unsigned char)(0x80 | (u & 0x3F));
	return 3;
}

/* UTF-8 → Java modified UTF-8 into o (which has room for 2 * len bytes); -1 if invalid. */
static int to_modified_utf8(struct str s, unsigned char *o, size_t *n)
{
	const unsigned char *p = (const unsigned char *)s.p;
	size_t i = 0, k = 0;

	while (i < s.len) {
		int32_t cp = utf8_next(p, s.len, &i);
		if (cp < 0)
			return -1;
		if (cp >= 0x10000) {
			uint32_t v = (uint32_t)cp - 0x10000;
			k += put_unit(o + k, 0xD800 + (v >> 10));
			k += put_unit(o + k, 0xDC00 + (v & 0x3FF));
		} else {
			k += put_unit(o + k, (uint32_t)cp);
		}
	}
	*n = k;
	return 0;
}

int payload_userpass_encode(struct str username, struct str password, unsigned char **out, size_t *out_len,
			    struct err *e)
{
	unsigned char *p = NULL;
	size_t ulen = 0, cap;

	*out = NULL;
	if (username.len > PAYLOAD_UTF_MAX)
		return err_set(e, ERR_INVALID, "username is longer than %d bytes", PAYLOAD_UTF_MAX);
	if (password.len > INT32_MAX - 16)
		return err_set(e, ERR_INVALID, "password is too long");
	/* Modified UTF-8 is at most 2x the UTF-8 length (a NUL doubles, a 4-byte char becomes 6). */
	cap = 2 + 2 * username.len + 4 + password.len;
	p = malloc(cap);
	if (!p)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (to_modified_utf8(username, p + 2, &ulen) != 0) {
		payload_free(p, cap);
		return err_set(e, ERR_INVALID, "username is not valid UTF-8");
	}
	if (ulen > PAYLOAD_UTF_MAX) {
		payload_free(p, cap);
		return err_set(e, ERR_INVALID, "username is longer than %d bytes", PAYLOAD_UTF_MAX);
	}
	p[0] = (unsigned char)(ulen >> 8);
	p[1] = (unsigned char)ulen;
	put_u32(p + 2 + ulen, (uint32_t)password.len);
	if (password.len)
		memcpy(p + 6 + ulen, password.p, password.len);
	*out = p;
	*out_len = 6 + ulen + password.len;
	return 0;
}

/* One modified-UTF-8 unit at p[*i] (1 to 3 bytes); -1 when malformed. */
static int32_t mutf8_unit(const unsigned char *p, size_t len, size_t *i)
{
	unsigned char c = p[*i];

	if (c < 0x80) {
		(*i)++;
		return c;
	}
	if ((c & 0xE0) == 0xC0 && len - *i >= 2 && (p[*i + 1] & 0xC0) == 0x80) {
		*i += 2;
		return (int32_t)((c & 0x1F) << 6 | (p[*i - 1] & 0x3F));
	}
	if ((c & 0xF0) == 0xE0 && len - *i >= 3 && (p[*i + 1] & 0xC0) == 0x80 && (p[*i + 2] & 0xC0) == 0x80) {
		*i += 3;
		return (int32_t)((c & 0x0F) << 12 | (p[*i - 2] & 0x3F) << 6 | (p[*i - 1] & 0x3F));
	}
	return -1;
}

static size_t put_utf8(unsigned char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x10000)
		return put_unit(o, cp);
	o[0] = (unsigned char)(0xF0 | cp >> 18);
	o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* Modified UTF-8 → UTF-8; a lone surrogate is kept as its 3-byte form (as Java would keep
 * it in a String).  The output is never longer than the input. */
static int from_modified_utf8(const unsigned char *p, size_t len, unsigned char *o, size_t *n)
{
	size_t i = 0, k = 0;

	while (i < len) {
		int32_t u = mutf8_unit(p, len, &i);
		if (u < 0)
			return -1;
		if (u >= 0xD800 && u <= 0xDBFF && i < len) {
			size_t j = i;
			int32_t lo = mutf8_unit(p, len, &j);
			if (lo >= 0xDC00 && lo <= 0xDFFF) {
				i = j;
				u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
			}
		}
		k += put_utf8(o + k, (uint32_t)u);
	}
	*n = k;
	return 0;
}

int payload_userpass_decode(const unsigned char *p, size_t len, char **username, size_t *username_len,
			    struct str *password, struct err *e)
{
	size_t ulen, off, n = 0;
	unsigned char *u;
	int rc;

	*username = NULL;
	if (len < 2)
		return err_set(e, ERR_INVALID, "username: truncated length");
	ulen = (size_t)p[0] << 8 | p[1];
	if (ulen > len - 2)
		return err_set(e, ERR_INVALID, "username: invalid length %zu", ulen);
	u = malloc(ulen + 1);
	if (!u)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (from_modified_utf8(p + 2, ulen, u, &n) != 0) {
		payload_free(u, ulen + 1);
		return err_set(e, ERR_INVALID, "username: malformed modified UTF-8");
	}
	u[n] = '\0';
	off = 2 + ulen;
	rc = take(p, len, &off, INT32_MAX, password, "password", e);
	if (rc == 0 && off != len)
		rc = err_set(e, ERR_INVALID, "username/password: %zu trailing bytes", len - off);
	if (rc < 0) {
		payload_free(u, ulen + 1);
		return rc;
	}
	*username = (char *)u;
	*username_len = n;
	return 0;
}
