#ifndef ACCORD_BASE_OOM_H
#define ACCORD_BASE_OOM_H

#include <stdint.h>

#include "base/err.h"

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

/* For code that checks its own allocations (the runner's, base/buf.c): counts one failed
 * allocation (oom_note), so that the VM fails the step even when the error is caught on the
 * way, and sets e to ERR_INTERNAL "out of memory".  Returns -ERR_INTERNAL. */
int oom_fail(struct err *e);

/* For code that cannot go on without the memory (the arenas, the expression parser's pool,
 * the VM's tables: DESIGN.md "Out of memory"): writes "Out of memory: <what> could not
 * be allocated, the process stops" to stderr — the runner's stderr is the process log —
 * and aborts. */
_Noreturn void oom_abort(const char *what);

/* The failed allocations counted so far. */
uint64_t oom_count(void);

#endif
