#include "base/ldap_filter.h"

#include <stdbool.h>
#include <stdio.h>

int ldap_filter_escape(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		bool plain = *p >= 0x20 && *p < 0x7f && *p != '*' && *p != '(' && *p != ')' && *p != '\\';
		if (o + (plain ? 1 : 3) >= cap)
			return -1;
		if (plain)
			out[o++] = (char)*p;
		else
			o += (size_t)snprintf(out + o, cap - o, "\\%02x", *p);
	}
	if (o >= cap)
		return -1;
	out[o] = '\0';
	return 0;
}
