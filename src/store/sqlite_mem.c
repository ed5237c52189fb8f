#include "store/sqlite_mem.h"

#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#include "store/sqlite_api.h"

static sqlite3_mem_methods real;
static _Thread_local struct sqlite_mem_budget *current;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_rc = -1;

/* Refuses what would take b past its limit: n, the size an allocation will have
 * (rounded up as the allocator rounds), replacing old bytes. */
static bool fits(struct sqlite_mem_budget *b, int64_t old, int n)
{
	if (b->used - old + real.xRoundup(n) > b->limit) {
		b->refused = true;
		return false;
	}
	return true;
}

/* Charges the size the allocator reports for the block (malloc_usable_size where SQLite
 * uses it), so that a block's free credits exactly what its allocation charged. */
static void charge(struct sqlite_mem_budget *b, int64_t n)
{
	b->used += n;
	if (b->used > b->peak)
		b->peak = b->used;
}

static void *budget_malloc(int n)
{
	struct sqlite_mem_budget *b = current;
	void *p;

	if (b && !fits(b, 0, n))
		return NULL;
	p = real.xMalloc(n);
	if (b && p)
		charge(b, real.xSize(p));
	return p;
}

static void budget_free(void *p)
{
	struct sqlite_mem_budget *b = current;

	if (b && p)
		b->used -= real.xSize(p);
	real.xFree(p);
}

static void *budget_realloc(void *p, int n)
{
	struct sqlite_mem_budget *b = current;
	int64_t old;
	void *q;

	if (!b)
		return real.xRealloc(p, n);
	old = p ? real.xSize(p) : 0;
	if (!fits(b, old, n))
		return NULL;
	if ((q = real.xRealloc(p, n)))
		charge(b, real.xSize(q) - old);
	return q;
}

static void install(void)
{
	sqlite3_mem_methods m;

	if (sqlite.config(SQLITE_CONFIG_GETMALLOC, &real) != SQLITE_OK)
		return;
	/* No process-wide memory counters: nothing reads them (sqlite3_memory_used, the heap
	 * limits; the budgets here count what the sandbox needs), and keeping them took SQLite's
	 * global memory mutex twice for every allocation and free (~2,000 a process; ~5% of the
	 * server's instructions, bench/RESULTS.md). */
	if (sqlite.config(SQLITE_CONFIG_MEMSTATUS, 0) != SQLITE_OK)
		return;
	m = real;
	m.xMalloc = budget_malloc;
	m.xFree = budget_free;
	m.xRealloc = budget_realloc;
	if (sqlite.config(SQLITE_CONFIG_MALLOC, &m) == SQLITE_OK)
		install_rc = 0;
}

int sqlite_mem_install(struct err *e)
{
	if (sqlite_api_load(e))
		return -1;
	pthread_once(&once, install);
	if (install_rc)
		return err_set(e, ERR_INTERNAL,
			       "cannot install the SQLite memory accounting: SQLite was used before the store was "
			       "opened");
	return 0;
}

void sqlite_mem_attach(struct sqlite_mem_budget *b)
{
	assert(install_rc == 0 && !current);
	b->used = b->peak = 0;
	b->refused = false;
	current = b;
}

void sqlite_mem_detach(void)
{
	current = NULL;
}
