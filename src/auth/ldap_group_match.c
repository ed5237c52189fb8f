#include "auth/ldap_group_match.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"

#define PATTERN_MAX 1024

static const char *skip_blanks(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static bool is_dn_pattern(const char *s)
{
	return strncasecmp(skip_blanks(s), "CN=", 3) == 0;
}

/* The value of the first "CN=…," in s (Concord's "CN=(.*?),"), or all of s. */
static void first_cn(const char *s, const char **p, size_t *len)
{
	for (const char *q = s; *q; q++) {
		if (strncasecmp(q, "CN=", 3) == 0) {
			const char *comma = strchr(q + 3, ',');
			if (comma) {
				*p = q + 3;
				*len = (size_t)(comma - (q + 3));
				return;
			}
			break;
		}
	}
	*p = s;
	*len = strlen(s);
}

static bool regex_matches_all(const char *pattern, const char *dn)
{
	char anchored[PATTERN_MAX];
	regex_t re;
	bool hit;

	if (str_fmt(anchored, sizeof anchored, "^(%s)$", pattern))
		return false;
	if (regcomp(&re, anchored, REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0)
		return false;
	hit = regexec(&re, dn, 0, NULL, 0) == 0;
	regfree(&re);
	return hit;
}

bool ldap_group_matches(const char *pattern, const char *dn)
{
	const char *a, *b;
	size_t a_len, b_len;

	if (is_dn_pattern(pattern) && is_dn_pattern(dn))
		return regex_matches_all(pattern, dn);
	first_cn(pattern, &a, &a_len);
	first_cn(dn, &b, &b_len);
	return a_len == b_len && strncasecmp(a, b, a_len) == 0;
}
