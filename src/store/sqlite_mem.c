#include "store/sqlite_mem.h"

#include <assert.h>
#include <pthread.h>
#include <stddef.h>

#include <sqlite3.h>

static sqlite3_mem_methods real;
static _Thread_local struct sqlite_mem_budget *current;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_rc = -1;

static bool charge(struct sqlite_mem_budget *b, int64_t n)
{
	if (n > 0 && b->used + n > b->limit) {
		b->refused = true;
		return false;
	}
	b->used += n;
	if (b->used > b->peak)
		b->peak = b->used;
	return true;
}

static void *budget_malloc(int n)
{
	struct sqlite_mem_budget *b = current;
	void *p;

	/* real.xRoundup(n) is what xSize will report for the block. */
	if (b && !charge(b, real.xRoundup(n)))
		return NULL;
	p = real.xMalloc(n);
	if (b && !p)
		b->used -= real.xRoundup(n);
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
	int64_t delta;
	void *q;

	if (!b)
		return real.xRealloc(p, n);
	delta = (int64_t)real.xRoundup(n) - (p ? real.xSize(p) : 0);
	if (!charge(b, delta))
		return NULL;
	if (!(q = real.xRealloc(p, n)))
		b->used -= delta;
	return q;
}

static void install(void)
{
	sqlite3_mem_methods m;

	if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real) != SQLITE_OK)
		return;
	m = real;
	m.xMalloc = budget_malloc;
	m.xFree = budget_free;
	m.xRealloc = budget_realloc;
	if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) == SQLITE_OK)
		install_rc = 0;
}

int sqlite_mem_install(struct err *e)
{
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
