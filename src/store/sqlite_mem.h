#ifndef ACCORD_STORE_SQLITE_MEM_H
#define ACCORD_STORE_SQLITE_MEM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* A memory budget for the SQLite work of one thread (the inventory query sandbox).
 *
 * SQLite's own limits are process-wide (sqlite3_memory_used, sqlite3_soft_heap_limit64,
 * sqlite3_hard_heap_limit64), so a query measured by them pays for every other thread's
 * allocations; sqlite3_db_status counts the page caches of one connection but not sorter
 * lists, function results or value buffers.  Instead, SQLite's allocator is wrapped once
 * (SQLITE_CONFIG_MALLOC) and every allocation made by a thread while a budget is attached
 * to it is charged to that budget, every free by that thread credited: the budget counts
 * the net heap growth of exactly the SQLite work done on that thread, i.e. of the one
 * connection the sandbox opens and uses on it.  An allocation that would take the budget
 * past its limit fails (SQLite answers SQLITE_NOMEM) and sets `refused`, so the bound is
 * hard: the query never holds more than `limit` bytes (sizes as the allocator reports
 * them, headers included).  Threads without a budget (every store connection) are not
 * affected beyond one thread-local read per allocation. */

struct sqlite_mem_budget {
	int64_t limit; /* bytes */
	int64_t used;  /* net bytes allocated by the thread since attached (may dip below 0) */
	int64_t peak;
	bool refused; /* an allocation was refused */
};

/* Loads SQLite (store/sqlite_api.h) and wraps its allocator.  Must run before SQLite is
 * first used (store_open calls it); later calls do nothing and return the first call's
 * result.  ERR_INTERNAL when SQLite cannot be loaded or was already initialised.
 * Thread-safe. */
int sqlite_mem_install(struct err *e) WUR;

/* Attaches b (borrowed until sqlite_mem_detach) to the calling thread, after setting
 * b->used/peak to 0 and b->refused to false.  One budget per thread at a time; requires a
 * successful sqlite_mem_install. */
void sqlite_mem_attach(struct sqlite_mem_budget *b);
void sqlite_mem_detach(void);

#endif
