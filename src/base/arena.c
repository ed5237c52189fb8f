#include "base/arena.h"
#include "base/oom.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

#define ARENA_BLOCK 8192

void arena_init(struct arena *a)
{
	a->head = NULL;
}

void arena_cleanup(struct arena *a)
{
	struct arena_block *b = a->head;

	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	a->head = NULL;
}

void *arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;
	size_t need = (n + 15) & ~(size_t)15;
	void *p;

	if (need < n)
		abort();
	if (!b || b->cap - b->used < need) {
		size_t cap = need > ARENA_BLOCK ? need : ARENA_BLOCK;
		b = malloc(sizeof *b + cap);
		if (!b)
			oom_abort("an arena block");
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	p = b->data + b->used;
	b->used += need;
	memset(p, 0, n);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

char *arena_printf(struct arena *a, const char *fmt, ...)
{
	va_list ap, ap2;
	int n;
	char *p;

	va_start(ap, fmt);
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	p = arena_alloc(a, (size_t)n + 1);
	if (vsnprintf(p, (size_t)n + 1, fmt, ap2) != n)
		abort();
	va_end(ap2);
	return p;
}
