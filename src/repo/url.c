/* What kind of URL a repository has, and URLs with their credentials removed. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "repo/internal.h"

enum repo_url_kind repo_url_kind(const char *url)
{
	static const char *const ssh[] = {"ssh://", "git+ssh://", "ssh+git://"};
	const char *colon, *slash;

	if (strncasecmp(url, "https://", 8) == 0 || strncasecmp(url, "http://", 7) == 0)
		return REPO_URL_HTTP;
	for (size_t i = 0; i < sizeof ssh / sizeof ssh[0]; i++)
		if (strncasecmp(url, ssh[i], strlen(ssh[i])) == 0)
			return REPO_URL_SSH;
	if (strstr(url, "://"))
		return REPO_URL_OTHER;
	/* scp-like: [user@]host:path, the host without a slash */
	colon = strchr(url, ':');
	slash = strchr(url, '/');
	if (colon && colon > url && (!slash || slash > colon))
		return REPO_URL_SSH;
	return REPO_URL_OTHER;
}

void repo_strip_url_credentials(const char *s, char *out, size_t cap)
{
	size_t o = 0;

	if (cap == 0)
		return;
	while (*s && o + 1 < cap) {
		const char *sep = strstr(s, "://");
		const char *auth, *end, *at = NULL;

		if (!sep) {
			out[o++] = *s++;
			continue;
		}
		auth = sep + 3;
		/* the authority ends at the first '/', '?', '#' or white space */
		end = auth + strcspn(auth, "/?# \t\r\n'\"");
		for (const char *p = auth; p < end; p++)
			if (*p == '@')
				at = p;
		while (s < auth && o + 1 < cap)
			out[o++] = *s++;
		if (at)
			s = at + 1;
	}
	out[o] = 0;
}
