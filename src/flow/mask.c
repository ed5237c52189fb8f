#include "flow/mask.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "base/oom.h"

/* The length of the value at p (the longest that matches), 0 when none. */
static size_t value_at(const struct mask *m, const char *p)
{
	for (size_t i = 0; i < m->n; i++)
		if (*p == m->v[i][0] && strncmp(p, m->v[i], strlen(m->v[i])) == 0)
			return strlen(m->v[i]);
	return 0;
}

bool mask_has(const struct mask *m, const char *value)
{
	for (size_t i = 0; value && i < m->n; i++)
		if (strcmp(m->v[i], value) == 0)
			return true;
	return false;
}

bool mask_add(struct mask *m, const char *value)
{
	char **grown, *copy;
	size_t j;
	if (!value || !*value || mask_has(m, value))
		return false;
	if (!(copy = strdup(value)))
		goto lost;
	if (!(grown = realloc(m->v, (m->n + 1) * sizeof *grown))) {
		sodium_memzero(copy, strlen(copy));
		free(copy);
		goto lost;
	}
	m->v = grown;
	for (j = m->n; j > 0 && strlen(m->v[j - 1]) < strlen(copy); j--)
		m->v[j] = m->v[j - 1];
	m->v[j] = copy;
	m->n++;
	return true;
lost:
	m->lost = true;
	oom_note();
	return false;
}

void mask_add_list(struct mask *m, json_t *list)
{
	size_t i;
	json_t *x;
	json_array_foreach(list, i, x) mask_add(m, json_string_value(x));
}

char *mask_text(const struct mask *m, const char *s, bool *changed)
{
	size_t n = strlen(s), len = 0, k;
	char *out;

	*changed = m->lost;
	if (m->lost)
		return NULL;
	for (const char *p = s; *p && !*changed; p++)
		*changed = value_at(m, p) != 0;
	if (!*changed)
		return NULL;
	/* Each match is at least one byte, so the result is at most 6 times as long. */
	if (!(out = malloc((n + 1) * sizeof MASK_TEXT)))
		return NULL;
	for (const char *p = s; *p;) {
		if ((k = value_at(m, p))) {
			memcpy(out + len, MASK_TEXT, sizeof MASK_TEXT - 1);
			len += sizeof MASK_TEXT - 1;
			p += k;
		} else {
			out[len++] = *p++;
		}
	}
	out[len] = 0;
	return out;
}

void mask_json(const struct mask *m, json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;
	char *t;
	bool changed;

	if (json_is_string(v)) {
		t = mask_text(m, json_string_value(v), &changed);
		if (changed)
			json_string_set(v, t ? t : MASK_TEXT);
		free(t);
	} else if (json_is_object(v)) {
		json_object_foreach(v, k, x) mask_json(m, x);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x) mask_json(m, x);
	}
}

void mask_cleanup(struct mask *m)
{
	for (size_t i = 0; i < m->n; i++) {
		sodium_memzero(m->v[i], strlen(m->v[i]));
		free(m->v[i]);
	}
	free(m->v);
	m->v = NULL;
	m->n = 0;
	m->lost = false;
}
