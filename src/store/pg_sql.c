#include "store/pg_sql.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"

/* Length of the quoted string, quoted name or comment at p (0: none starts there). */
static size_t quoted_len(const char *p)
{
	const char *q = p;

	if (*p == '\'' || *p == '"') {
		for (q = p + 1; *q; q++)
			if (*q == *p && q[1] == *p)
				q++; /* a doubled quote stands for itself */
			else if (*q == *p)
				return (size_t)(q + 1 - p);
		return (size_t)(q - p);
	}
	if (p[0] == '-' && p[1] == '-')
		return strcspn(p, "\n");
	if (p[0] == '/' && p[1] == '*') {
		q = strstr(p + 2, "*/");
		return q ? (size_t)(q + 2 - p) : strlen(p);
	}
	return 0;
}

/* Whether p (after spaces) reads IS NULL or IS NOT NULL. */
static bool is_null_test(const char *p)
{
	while (*p == ' ')
		p++;
	if (strncasecmp(p, "IS ", 3) != 0)
		return false;
	for (p += 3; *p == ' '; p++)
		;
	if (strncasecmp(p, "NOT ", 4) == 0)
		for (p += 4; *p == ' '; p++)
			;
	return strncasecmp(p, "NULL", 4) == 0 && !isalnum((unsigned char)p[4]) && p[4] != '_';
}

/* Length of SQLite's index hint " INDEXED BY name" at p (0: none there). */
static size_t index_hint_len(const char *sql, const char *p)
{
	const char *q = p + 11;

	if (p == sql || p[-1] != ' ' || strncasecmp(p, "INDEXED BY ", 11) != 0)
		return 0;
	while (*q == ' ')
		q++;
	while (isalnum((unsigned char)*q) || *q == '_')
		q++;
	while (*q == ' ')
		q++;
	return (size_t)(q - p);
}

char *pg_sql_rewrite(const char *sql, int *n_params, struct err *e)
{
	struct buf b;
	int max = 0;
	const char *p = sql;

	buf_init(&b, 0);
	while (*p) {
		size_t q = quoted_len(p);
		long n;
		if (q) {
			if (buf_append(&b, p, q, e))
				goto fail;
			p += q;
			continue;
		}
		if ((q = index_hint_len(sql, p))) {
			p += q;
			continue;
		}
		if (*p != '?') {
			if (buf_append_char(&b, *p++, e))
				goto fail;
			continue;
		}
		for (n = 0, p++; isdigit((unsigned char)*p) && n <= 32767; p++)
			n = n * 10 + (*p - '0');
		if (p[-1] == '?')
			n = max + 1;
		if (n < 1 || n > 32767) {
			err_set(e, ERR_INTERNAL, "database: bad parameter number in: %.200s", sql);
			goto fail;
		}
		if (n > max)
			max = (int)n;
		if (buf_printf(&b, e, "$%ld%s", n, is_null_test(p) ? "::text" : ""))
			goto fail;
	}
	*n_params = max;
	return buf_detach(&b, NULL);
fail:
	buf_cleanup(&b);
	return NULL;
}

bool pg_sql_is_url(const char *url)
{
	if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0)
		return true;
	if (strncmp(url, "sqlite:", 7) == 0 || !strchr(url, '='))
		return false;
	for (const char *p = url; (p = strstr(p, "=")); p++) {
		const char *k = p;
		while (k > url && (isalnum((unsigned char)k[-1]) || k[-1] == '_'))
			k--;
		if ((k == url || k[-1] == ' ') &&
		    ((p - k == 4 && strncmp(k, "host", 4) == 0) || (p - k == 6 && strncmp(k, "dbname", 6) == 0)))
			return true;
	}
	return false;
}

static void copy_cut(char *out, size_t cap, const char *p, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(out, p, n);
	out[n] = '\0';
}

void pg_sql_url_password(const char *url, char *out, size_t cap)
{
	const char *p = strstr(url, "://"), *end, *at = NULL, *colon;

	if (!cap)
		return;
	out[0] = '\0';
	if (p && pg_sql_is_url(url) && strncmp(url, "postgres", 8) == 0) {
		p += 3;
		end = p + strcspn(p, "/?");
		for (const char *q = p; q < end; q++)
			if (*q == '@')
				at = q;
		if (at && (colon = memchr(p, ':', (size_t)(at - p))))
			copy_cut(out, cap, colon + 1, (size_t)(at - colon - 1));
		return;
	}
	for (p = url; (p = strstr(p, "password")); p += 8) {
		const char *v = p + 8;
		if (p > url && p[-1] != ' ')
			continue;
		while (*v == ' ')
			v++;
		if (*v++ != '=')
			continue;
		while (*v == ' ')
			v++;
		if (*v == '\'') {
			v++;
			for (end = v; *end && *end != '\''; end++)
				if (*end == '\\' && end[1])
					end++;
		} else {
			end = v + strcspn(v, " ");
		}
		copy_cut(out, cap, v, (size_t)(end - v));
		return;
	}
}

void pg_sql_clean_msg(const char *msg, const char *secret, char *out, size_t cap)
{
	size_t n = 0, slen = secret ? strlen(secret) : 0;

	if (!cap)
		return;
	for (const char *p = msg ? msg : ""; *p && n + 1 < cap;) {
		if (slen && strncmp(p, secret, slen) == 0) {
			for (const char *s = "***"; *s && n + 1 < cap; s++)
				out[n++] = *s;
			p += slen;
		} else if (isspace((unsigned char)*p)) {
			if (n && out[n - 1] != ' ')
				out[n++] = ' ';
			p++;
		} else {
			out[n++] = *p++;
		}
	}
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}
