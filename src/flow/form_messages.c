#include "flow/form_messages.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/path.h"
#include "base/properties.h"
#include "base/str.h"

#define MESSAGES_FILE "locale.properties"
#define MESSAGES_MAX_BYTES (256u << 10)
#define MESSAGES_MAX_KEYS 1000
#define MESSAGE_MAX_BYTES 2048

json_t *form_messages_load(const struct flow_host *h, const char *form, struct err *e)
{
	char own[600];
	const char *paths[2] = {own, MESSAGES_FILE};
	json_t *out = NULL;

	if (!h || !h->workdir || flow_host_files(h, e) < 0)
		return NULL;
	if (str_fmt(own, sizeof own, "forms/%s/" MESSAGES_FILE, form))
		paths[0] = MESSAGES_FILE;
	for (size_t i = 0; i < 2 && !out; i++) {
		size_t len;
		char *text;
		int rc = path_exists_beneath(h->workdir, paths[i], e);
		if (rc < 0)
			return NULL;
		if (rc == 0)
			continue;
		if (!(text = path_read_beneath(h->workdir, paths[i], MESSAGES_MAX_BYTES, &len, e))) {
			err_prefix(e, "form '%s': %s", form, paths[i]);
			return NULL;
		}
		out = properties_parse(text, len, MESSAGES_MAX_KEYS, e);
		free(text);
		if (!out) {
			err_prefix(e, "form '%s': %s", form, paths[i]);
			return NULL;
		}
	}
	return out;
}

/* java.text.MessageFormat's text of pattern p: {i} (or {i,…}) is args[i], a quote starts
 * and ends literal text, two quotes are one; a placeholder past the arguments, or one that
 * does not close, stays as it is written. */
static int format(const char *p, const char *const *args, size_t n, struct buf *b, struct err *e)
{
	bool quoted = false;

	while (*p) {
		if (*p == '\'') {
			if (p[1] == '\'') {
				if (buf_append_char(b, '\'', e) < 0)
					return -1;
				p += 2;
			} else {
				quoted = !quoted;
				p++;
			}
			continue;
		}
		if (*p == '{' && !quoted) {
			const char *d = p + 1, *close = strchr(p, '}');
			size_t i = 0;
			while (*d >= '0' && *d <= '9' && i <= n)
				i = i * 10 + (size_t)(*d++ - '0');
			if (d > p + 1 && close && (*d == '}' || *d == ',') && i < n) {
				if (buf_append_str(b, args[i] ? args[i] : "null", e) < 0)
					return -1;
				p = close + 1;
				continue;
			}
		}
		if (buf_append_char(b, *p++, e) < 0)
			return -1;
	}
	return 0;
}

int form_message(const json_t *messages, const char *field, const char *kind, const char *const *args, size_t n,
		 json_t **msg)
{
	char key[300];
	const char *pattern = NULL;
	struct buf b;
	struct err e;

	if (!messages)
		return 0;
	if (!str_fmt(key, sizeof key, "%s.%s", field, kind))
		pattern = json_string_value(json_object_get(messages, key));
	if (!pattern)
		pattern = json_string_value(json_object_get(messages, kind));
	if (!pattern)
		return 0;
	buf_init(&b, MESSAGE_MAX_BYTES);
	/* a message cut at the cap is still the form's message */
	(void)format(pattern, args, n, &b, &e);
	*msg = json_stringn(b.data ? b.data : "", b.len);
	buf_cleanup(&b);
	if (!*msg)
		*msg = json_string(pattern);
	return 1;
}
