#ifndef ACCORD_RUNNER_CONFINE_H
#define ACCORD_RUNNER_CONFINE_H

#include <stddef.h>

#include "base/err.h"

/* Confinement of `accord runner`, the child that executes one process (docs/security.md,
 * "Confinement of a flow").  The runner calls these first thing, before it loads the flow
 * and before it starts any thread. */

/* Sets PR_SET_NO_NEW_PRIVS, then, where the kernel offers Landlock, restricts the calling
 * process and every child it starts for good: read and execute on a short list of system
 * paths (programs, libraries, CA certificates, resolver and time-zone files, /dev/null,
 * /dev/urandom, /proc/self), read-write on workdir, nothing else on the file system.  Uses
 * the highest Landlock ABI the kernel offers; rights an ABI does not know are left out.
 * From ABI 6 on, signals and abstract UNIX sockets outside the domain are refused too.
 *
 * workdir: absolute path of the process's working directory (borrowed).  desc receives a
 * one-line, NUL-terminated account of what is active for the log, e.g. "landlock ABI 7:
 * read-only system paths, read-write working directory, signals and abstract sockets
 * scoped" or "landlock unavailable (kernel lacks it): working-directory path checks only".
 *
 * Returns 1 when Landlock is enforced, 0 when the kernel has none (not an error: the
 * resolver in base/path.h still confines the tasks' file access), < 0 with e set when
 * something failed after Landlock was found (the runner must then not run the flow).
 * Only the calling thread and its later children are restricted: call it before threads. */
int confine_runner(const char *workdir, char *desc, size_t desc_cap, struct err *e) WUR;

/* Opens the system paths confine_runner grants once (O_PATH descriptors kept open), so
 * that confine_runner in a forked child only adds its rules (and opens /proc/self, which
 * names the process that opens it, itself): for the runner zygote
 * (runner/zygote.h), before it forks.  The child must call confine_runner before
 * confine_close_fds. */
void confine_preload(void);

/* What confine_runner would enforce on this kernel, without restricting anything (for the
 * server's start-up log): the Landlock ABI, or 0 when there is none; desc as above. */
int confine_probe(char *desc, size_t desc_cap);

/* For the server's start-up: ERR_INVALID when dir (an existing folder) lies beneath a path
 * confine_runner grants the runners (/usr, /dev/shm, …), or holds one: their flows could
 * then open its files by name.  Both are compared resolved (realpath), so /lib's link into
 * /usr and a link to the folder count.  what names dir in the message ("data folder"). */
int confine_check_out_of_reach(const char *dir, const char *what, struct err *e) WUR;

/* Closes every file descriptor above keep_max (close_range, or a loop where the kernel
 * lacks it), so the runner holds nothing the supervisor did not mean to give it. */
int confine_close_fds(int keep_max, struct err *e) WUR;

#endif
