#include "base/oom.h"

#include <jansson.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_uint_fast64_t failures;

void oom_note(void)
{
	atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
}

int oom_fail(struct err *e)
{
	oom_note();
	return err_set(e, ERR_INTERNAL, "out of memory");
}

void oom_abort(const char *what)
{
	fprintf(stderr, "Out of memory: %s could not be allocated, the process stops\n", what);
	abort();
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
