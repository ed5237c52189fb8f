#ifndef ACCORD_QUEUE_ZYGOTE_H
#define ACCORD_QUEUE_ZYGOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"
#include "runner/zygote.h"

/* The server's side of the runner zygote (runner/zygote.h): starts `accord runner
 * --zygote`, asks it for runners and routes its answers (pid, later the wait status) to
 * the supervisor that asked, from one reader thread.  When the zygote dies its runners
 * die with it (their supervisors see them killed by SIGKILL); the next request starts a
 * new one (at most one attempt per second); while there is none, zygote_ask says so
 * and the supervisor starts `accord runner` itself.  Thread-safe. */

struct zygote;
struct zygote_child;

/* The zygote of exe (the accord binary; env: the zygote's environment, borrowed until
 * zygote_free), started by the first zygote_spawn.  Never NULL unless out of memory: a
 * zygote that cannot start is logged and retried on the next request. */
struct zygote *zygote_new(const char *exe, char *const *env);

/* Closes the zygote's socket (it kills what runners it still has and exits), waits for
 * it and frees z.  Call once no supervisor uses z any more.  NULL is fine. */
void zygote_free(struct zygote *z);

/* Asks for a runner in workdir with log_fd on its fd 1 and 2, ipc_fd on fd 3 and rlimits
 * (the descriptors are duplicated into the runner; the caller still closes its own), and
 * returns without waiting for the fork: the caller does other work meanwhile (the
 * RUNNING status) and collects the answer with zygote_answer.  0: asked, *child set; 1: no
 * zygote at the moment, start the runner another way; -1: e set. */
int zygote_ask(struct zygote *z, const char *workdir, int log_fd, int ipc_fd, const struct zygote_req *rlimits,
	       struct zygote_child **child, struct err *e) WUR;

/* The answer to zygote_ask.  0: *pid is the runner (its own process group), child is
 * passed to zygote_wait later; 1: the zygote died while asked, start the runner another
 * way with new descriptors (a dying fork may hold these); -1: the zygote could not fork
 * (e set).  On 1 and -1 child is freed. */
int zygote_answer(struct zygote *z, struct zygote_child *child, pid_t *pid, struct err *e) WUR;

/* Waits until the runner of child has been reaped and returns its wait status (SIGKILL
 * when the zygote died first) and its peak resident memory in KiB (0 when unknown);
 * frees child. */
int zygote_wait(struct zygote *z, struct zygote_child *child, int64_t *maxrss_kb);

/* Instead of zygote_wait, for a runner whose exit status nobody needs: child is freed (and
 * its peak memory observed, metrics_runner_rss) once its exit arrives, or now. */
void zygote_detach(struct zygote *z, struct zygote_child *child);

/* The zygote's pid (0 while there is none): for tests and the log. */
pid_t zygote_pid(struct zygote *z);

#endif
