#include "base/i64_list.h"

#include <stdbool.h>
#include <stdlib.h>

int i64_list_push(struct i64_list *l, int64_t id, struct err *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		int64_t *v = cap > SIZE_MAX / sizeof(*v) ? NULL : realloc(l->v, cap * sizeof(*v));
		if (!v)
			return err_set(e, ERR_INTERNAL, "out of memory");
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = id;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

void i64_list_sort(struct i64_list *l)
{
	size_t k = 0;

	if (l->n < 2)
		return;
	qsort(l->v, l->n, sizeof(*l->v), cmp_id);
	for (size_t i = 1; i < l->n; i++)
		if (l->v[i] != l->v[k])
			l->v[++k] = l->v[i];
	l->n = k + 1;
}

/* The first index i >= from of b with b[i] >= x (n when none): doubling steps, then a
 * binary search inside the last step. */
static size_t gallop(const int64_t *b, size_t n, size_t from, int64_t x)
{
	size_t lo = from, step = 1, hi;

	while (lo + step < n && b[lo + step] < x)
		step *= 2;
	hi = lo + step < n ? lo + step : n;
	if (lo < n && b[lo] >= x)
		return lo;
	while (lo + 1 < hi) { /* b[lo] < x, and b[hi] >= x or hi == n */
		size_t mid = lo + (hi - lo) / 2;
		if (b[mid] < x)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

void i64_list_intersect(struct i64_list *a, const struct i64_list *b)
{
	size_t k = 0, j = 0;
	bool galloping = b->n / 16 > a->n;

	for (size_t i = 0; i < a->n && j < b->n; i++) {
		int64_t x = a->v[i];
		if (galloping)
			j = gallop(b->v, b->n, j, x);
		else
			while (j < b->n && b->v[j] < x)
				j++;
		if (j < b->n && b->v[j] == x)
			a->v[k++] = x;
	}
	a->n = k;
}

void i64_list_clear(struct i64_list *l)
{
	l->n = 0;
}

void i64_list_cleanup(struct i64_list *l)
{
	free(l->v);
	*l = (struct i64_list){0};
}
