/* ssh host keys checked against a known_hosts file (--git-known-hosts).
 *
 * libgit2 1.5 looks keys up in ~/.ssh/known_hosts only and, for the key types it does not
 * map, never finds a match; so the fetch child compares the raw host key the server
 * presented with the file itself.  Lines are OpenSSH's: "hosts keytype base64-key
 * [comment]", hosts a comma-separated list of names or patterns (*, ?), "[host]:port" for
 * a port other than 22; lines starting with '#', markers (@cert-authority, @revoked) and
 * hashed names (|1|…, `ssh-keyscan -H`) are not used. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/b64.h"
#include "base/str.h"
#include "repo/internal.h"

/* OpenSSH's patterns know * and ? only: brackets ("[host]:port") are literal. */
static bool wildcard(const char *pattern, const char *name)
{
	char esc[2100];
	size_t o = 0;

	for (const char *p = pattern; *p && o + 2 < sizeof esc; p++) {
		if (*p == '[' || *p == ']' || *p == '\\')
			esc[o++] = '\\';
		esc[o++] = *p;
	}
	esc[o] = 0;
	return fnmatch(esc, name, FNM_CASEFOLD) == 0;
}

static bool host_matches(const char *hosts, const char *name)
{
	char buf[1024], *save = NULL;

	if (snprintf(buf, sizeof buf, "%s", hosts) >= (int)sizeof buf)
		return false;
	for (char *h = strtok_r(buf, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
		if (h[0] == '!' || h[0] == '|')
			continue;
		if (strcasecmp(h, name) == 0 || (strpbrk(h, "*?") && wildcard(h, name)))
			return true;
	}
	return false;
}

int repo_known_host(const char *file, const char *host, int port, const void *key, size_t key_len)
{
	char name[600], line[16384];
	FILE *f = fopen(file, "re");
	int found = 0;

	if (!f)
		return -1;
	/* a name too long to write is in no file this reader can read: not known */
	if (port > 0 && port != 22 ? str_fmt(name, sizeof name, "[%s]:%d", host, port)
				   : str_fmt(name, sizeof name, "%s", host)) {
		fclose(f);
		return 0;
	}
	while (!found && fgets(line, sizeof line, f)) {
		char *save = NULL, *hosts = strtok_r(line, " \t\r\n", &save), *type, *b64;
		unsigned char *raw;
		size_t raw_len = 0;

		if (!hosts || hosts[0] == '#' || hosts[0] == '@')
			continue;
		type = strtok_r(NULL, " \t\r\n", &save);
		b64 = strtok_r(NULL, " \t\r\n", &save);
		if (!type || !b64 || !host_matches(hosts, name))
			continue;
		if ((raw = b64_decode(b64, strlen(b64), &raw_len, NULL))) {
			found = raw_len == key_len && memcmp(raw, key, key_len) == 0;
			free(raw);
		}
	}
	fclose(f);
	return found;
}

int repo_url_port(const char *url)
{
	const char *p = strstr(url, "://"), *end, *colon, *at;

	if (!p)
		return 22; /* scp-like */
	p += 3;
	end = p + strcspn(p, "/?#");
	at = memchr(p, '@', (size_t)(end - p));
	if (at)
		p = at + 1;
	if (*p == '[') { /* [v6 address]:port */
		const char *close = memchr(p, ']', (size_t)(end - p));
		p = close ? close + 1 : p;
	}
	colon = memchr(p, ':', (size_t)(end - p));
	if (colon && colon + 1 < end) {
		int64_t port;
		struct err ignored;
		if (str_to_i64((struct str){colon + 1, (size_t)(end - colon - 1)}, 1, 65535, &port, "port", &ignored) == 0)
			return (int)port;
	}
	return 22;
}
