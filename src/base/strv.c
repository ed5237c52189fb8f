/* String lists (strv.h). */
#include "base/strv.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strv_add(struct strv *s, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int n;

	if (s->n + 2 > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		char **v = realloc(s->v, cap * sizeof *v);
		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	va_start(ap, fmt);
	n = vasprintf(&p, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	s->v[s->n++] = p;
	s->v[s->n] = NULL;
	return 0;
}

void strv_free(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof *s);
}
