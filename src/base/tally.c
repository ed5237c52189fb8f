#include "base/tally.h"

#include <stdlib.h>
#include <string.h>

static struct tally_entry *find(const struct tally *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].key, key) == 0)
			return &t->v[i];
	return NULL;
}

unsigned tally_get(const struct tally *t, const char *key)
{
	const struct tally_entry *x = find(t, key);

	return x ? x->n : 0;
}

int tally_add(struct tally *t, const char *key, struct err *e)
{
	struct tally_entry *x = find(t, key);
	size_t len = strlen(key);

	if (x) {
		x->n++;
		return 0;
	}
	if (len >= TALLY_KEY_MAX)
		return err_set(e, ERR_INVALID, "key too long: %.60s", key);
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		struct tally_entry *grown = realloc(t->v, cap * sizeof *grown);

		if (!grown)
			return err_set(e, ERR_INTERNAL, "out of memory");
		t->v = grown;
		t->cap = cap;
	}
	x = &t->v[t->n++];
	memcpy(x->key, key, len + 1);
	x->n = 1;
	return 0;
}

void tally_sub(struct tally *t, const char *key)
{
	struct tally_entry *x = find(t, key);

	if (x && --x->n == 0)
		*x = t->v[--t->n];
}

void tally_cleanup(struct tally *t)
{
	free(t->v);
	*t = (struct tally){0};
}
