#ifndef ACCORD_CLI_DATALOCK_H
#define ACCORD_CLI_DATALOCK_H

#include "base/err.h"

/* The lock of a data folder: <data>/accord.pid, held with flock(LOCK_EX) by `accord
 * serve` for as long as it runs (and by `accord restore` while it restores), with the
 * holder's pid written in it.  The kernel drops the lock when its holder exits, however
 * it exits, so a stale file never blocks a start. */

#define DATALOCK_FILE "accord.pid"

/* Takes the lock of the existing folder dir and writes our pid into the file.  Returns
 * the open descriptor (keep it open; datalock_release or exit drops the lock), or
 * -ERR_CONFLICT "… is in use by accord (pid N) …" when another process holds it. */
int datalock_take(const char *dir, const char *holder_hint, struct err *e) WUR;

/* Drops the lock taken by datalock_take (fd < 0: nothing). */
void datalock_release(int fd);

#endif
