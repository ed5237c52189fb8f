#ifndef ACCORD_BASE_OOM_H
#define ACCORD_BASE_OOM_H

#include <stdint.h>

/* Failed allocations, counted, so that code which cannot see each one (jansson's setters
 * and appenders return -1, and most callers of a flow's value operations ignore it) can
 * still tell that one happened while it worked: compare oom_count() before and after
 * (flow/vm.c fails the step then, issue 23 item 11).  Thread-safe; the count never goes
 * down. */

/* Makes jansson allocate through a malloc that counts its failures (json_set_alloc_funcs:
 * call before the first JSON value of the process, or at least before any is freed
 * through other functions — both use malloc and free). */
void oom_watch_json(void);

/* Counts one failed allocation (for allocators other than jansson's, e.g. a test's). */
void oom_note(void);

/* The failed allocations counted so far. */
uint64_t oom_count(void);

#endif
