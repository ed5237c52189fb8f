/* Cookies of a Cookie header (cookie.h). */
#include "base/cookie.h"

#include <string.h>

bool cookie_value(const char *header, const char *name, struct str *out)
{
	struct str rest = str_from(header);
	size_t k = strlen(name);

	while (rest.len) {
		const char *semi = memchr(rest.p, ';', rest.len);
		size_t n = semi ? (size_t)(semi - rest.p) : rest.len;
		struct str pair = str_trim((struct str){rest.p, n});

		rest.p += n + (semi != NULL);
		rest.len -= n + (semi != NULL);
		if (pair.len <= k || memcmp(pair.p, name, k) != 0 || pair.p[k] != '=')
			continue;
		pair.p += k + 1;
		pair.len -= k + 1;
		if (pair.len >= 2 && pair.p[0] == '"' && pair.p[pair.len - 1] == '"') {
			pair.p++;
			pair.len -= 2;
		}
		*out = pair;
		return true;
	}
	return false;
}
