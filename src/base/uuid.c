#include "base/uuid.h"

#include <stdint.h>
#include <time.h>

#include "base/rand.h"

static void format(const uint8_t b[16], char out[UUID_STR_LEN])
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < 16; i++) { /* 8-4-4-4-12 hex digits: 36 characters */
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[b[i] >> 4];
		out[o++] = hex[b[i] & 15];
	}
	out[o] = '\0';
}

void uuid_v4(char out[UUID_STR_LEN])
{
	uint8_t b[16];

	rand_bytes(b, sizeof b);
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	format(b, out);
}

void uuid_v7(char out[UUID_STR_LEN])
{
	struct timespec ts;
	uint64_t ms;
	uint8_t b[16];

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	rand_bytes(b, sizeof b);
	for (int i = 0; i < 6; i++)
		b[i] = (uint8_t)(ms >> (40 - 8 * i));
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x70);
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
	format(b, out);
}

bool uuid_valid(const char *s, size_t len)
{
	if (len != 36)
		return false;
	for (size_t i = 0; i < 36; i++) {
		char c = s[i];
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (c != '-')
				return false;
		} else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
			return false;
		}
	}
	return true;
}
