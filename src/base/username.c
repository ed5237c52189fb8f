#include "base/username.h"

#include <stdint.h>
#include <string.h>

/* One UTF-8 sequence at s: its code point and length, or length 0 when invalid. */
static size_t utf8_next(const unsigned char *s, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t n;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xE0) == 0xC0) {
		n = 2;
		c &= 0x1F;
		min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		n = 3;
		c &= 0x0F;
		min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		n = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return n;
}

static size_t utf8_put(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xC0 | (c >> 6));
		out[1] = (char)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xE0 | (c >> 12));
		out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
		out[2] = (char)(0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
	out[3] = (char)(0x80 | (c & 0x3F));
	return 4;
}

static bool is_combining(uint32_t c)
{
	return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF) ||
	       (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE20 && c <= 0xFE2F) || (c >= 0x1100 && c <= 0x11FF);
}

/* Characters NFC replaces by another one (canonical singletons and the like). */
static bool nfc_replaces(uint32_t c)
{
	static const uint32_t single[] = {0x0374, 0x037E, 0x0387, 0x1F71, 0x1F73, 0x1F75, 0x1F77, 0x1F79,
					  0x1F7B, 0x1F7D, 0x1FBB, 0x1FBE, 0x1FC9, 0x1FCB, 0x1FD3, 0x1FDB,
					  0x1FE3, 0x1FEB, 0x1FEE, 0x1FEF, 0x1FF9, 0x1FFB, 0x1FFD, 0x2000,
					  0x2001, 0x2126, 0x212A, 0x212B, 0x2329, 0x232A};

	for (size_t i = 0; i < sizeof single / sizeof single[0]; i++)
		if (c == single[i])
			return true;
	return (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

int username_check_nfc(const char *s, struct err *e)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		uint32_t c;
		size_t n = utf8_next(p, &c);

		if (n == 0)
			return err_set(e, ERR_INVALID, "'username' is not valid UTF-8");
		if (is_combining(c) || nfc_replaces(c))
			return err_set(e, ERR_INVALID,
				       "'username' must be in Unicode normalization form NFC without combining "
				       "characters: U+%04X is not accepted (write the composed character instead)",
				       (unsigned)c);
		p += n;
	}
	return 0;
}

static uint32_t fold(uint32_t c)
{
	if (c < 0x80)
		return c >= 'A' && c <= 'Z' ? c + 32 : c;
	if (c >= 0xC0 && c <= 0xDE && c != 0xD7)
		return c + 32;
	if (c == 0xB5)
		return 0x3BC; /* micro sign: Greek mu */
	if (c >= 0x100 && c <= 0x17F) {
		if (c == 0x17F)
			return 's'; /* long s */
		if (c == 0x130 || c == 0x131 || c == 0x138 || c == 0x149)
			return c;
		if (c == 0x178)
			return 0xFF;
		if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
			return (c & 1) ? c + 1 : c;
		return (c & 1) ? c : c + 1;
	}
	if (c >= 0x391 && c <= 0x3AB && c != 0x3A2)
		return c + 32;
	if (c == 0x386)
		return 0x3AC;
	if (c >= 0x388 && c <= 0x38A)
		return c + 37;
	if (c == 0x38C)
		return 0x3CC;
	if (c == 0x38E || c == 0x38F)
		return c + 63;
	if (c == 0x3C2)
		return 0x3C3; /* final sigma */
	if (c >= 0x410 && c <= 0x42F)
		return c + 32;
	if (c >= 0x400 && c <= 0x40F)
		return c + 80;
	if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF) || (c >= 0x4D0 && c <= 0x52F))
		return (c & 1) ? c : c + 1;
	if (c == 0x4C0)
		return 0x4CF;
	if (c >= 0x4C1 && c <= 0x4CE)
		return (c & 1) ? c + 1 : c;
	if (c >= 0xFF21 && c <= 0xFF3A)
		return c + 32;
	return c;
}

void username_fold(const char *s, char *out, size_t cap)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t w = 0;

	if (cap == 0)
		return;
	while (*p) {
		char enc[4];
		uint32_t c;
		size_t n = utf8_next(p, &c), m;

		if (n == 0) {
			enc[0] = (char)*p;
			n = m = 1;
		} else {
			m = utf8_put(fold(c), enc);
		}
		if (w + m >= cap)
			break;
		memcpy(out + w, enc, m);
		w += m;
		p += n;
	}
	out[w] = '\0';
}

bool username_eq(const char *a, const char *b)
{
	char fa[1024], fb[1024];

	if (strlen(a) >= sizeof fa || strlen(b) >= sizeof fb)
		return false;
	username_fold(a, fa, sizeof fa);
	username_fold(b, fb, sizeof fb);
	return strcmp(fa, fb) == 0;
}

bool username_has_non_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return true;
	return false;
}
