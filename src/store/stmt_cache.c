#include "store/stmt_cache.h"

#include <stdint.h>
#include <stdlib.h>

static size_t slot_of(const char *sql, size_t cap)
{
	uintptr_t h = (uintptr_t)sql;
	h ^= h >> 17;
	h *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 7) & (cap - 1);
}

static size_t find(const struct stmt_cache_slot *slots, size_t cap, const char *sql)
{
	size_t j;

	for (j = slot_of(sql, cap); slots[j].sql && slots[j].sql != sql; j = (j + 1) & (cap - 1))
		;
	return j;
}

int stmt_cache_init(struct stmt_cache *c)
{
	c->cap = 64;
	c->n = 0;
	c->slots = calloc(c->cap, sizeof *c->slots);
	return c->slots ? 0 : -1;
}

void *stmt_cache_get(const struct stmt_cache *c, const char *sql)
{
	return c->slots[find(c->slots, c->cap, sql)].stmt;
}

static int grow(struct stmt_cache *c)
{
	size_t cap = c->cap * 2;
	struct stmt_cache_slot *slots = calloc(cap, sizeof *slots);

	if (!slots)
		return -1;
	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i].sql)
			slots[find(slots, cap, c->slots[i].sql)] = c->slots[i];
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
	return 0;
}

int stmt_cache_put(struct stmt_cache *c, const char *sql, void *stmt)
{
	if ((c->n + 1) * 2 > c->cap && grow(c))
		return -1;
	c->slots[find(c->slots, c->cap, sql)] = (struct stmt_cache_slot){sql, stmt};
	c->n++;
	return 0;
}

void stmt_cache_cleanup(struct stmt_cache *c, void (*free_stmt)(void *stmt))
{
	for (size_t i = 0; c->slots && i < c->cap; i++)
		if (c->slots[i].sql)
			free_stmt(c->slots[i].stmt);
	free(c->slots);
	c->slots = NULL;
	c->cap = c->n = 0;
}
