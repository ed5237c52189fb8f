#ifndef ACCORD_BASE_UTF8_H
#define ACCORD_BASE_UTF8_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at s (s[0] >= 0x80), or 0: no overlong
 * forms, no surrogates, nothing above U+10FFFF — what jansson's utf8_check_full allows.
 * Shared by base/json_fast.c (reading) and base/json_dump.c (writing): both accept exactly
 * the strings jansson does. */
static inline size_t utf8_valid_len(const unsigned char *s, const unsigned char *end)
{
	unsigned lo = 0x80, hi = 0xBF;
	size_t n;

	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4;
	else
		return 0;
	if (s[0] == 0xE0)
		lo = 0xA0;
	else if (s[0] == 0xED)
		hi = 0x9F;
	else if (s[0] == 0xF0)
		lo = 0x90;
	else if (s[0] == 0xF4)
		hi = 0x8F;
	if ((size_t)(end - s) < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

#endif
