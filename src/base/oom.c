#include "base/oom.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdlib.h>

static atomic_uint_fast64_t failures;

void oom_note(void)
{
	atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
}

uint64_t oom_count(void)
{
	return (uint64_t)atomic_load_explicit(&failures, memory_order_relaxed);
}

static void *counting_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		oom_note();
	return p;
}

void oom_watch_json(void)
{
	json_set_alloc_funcs(counting_malloc, free);
}
