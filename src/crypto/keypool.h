#ifndef ACCORD_CRYPTO_KEYPOOL_H
#define ACCORD_CRYPTO_KEYPOOL_H

#include <stddef.h>

#include "base/err.h"
#include "crypto/keypair.h"

/* RSA key pairs generated ahead of demand.  An RSA-4096 pair costs about a second of CPU;
 * libmicrohttpd serves several connections on each pool thread, so generating it inside a
 * request would hold up the other connections of that thread.  A background thread
 * (scheduled at nice +10) keeps up to `target` pairs ready instead; a request takes one in
 * microseconds and the thread makes the next.  Ready pairs live only in memory and are
 * wiped when taken over or at keypool_stop.  Thread-safe. */

#define KEYPOOL_MAX 64

/* Starts the generator thread (target 0: no thread, keypool_take always fails).  Once
 * after start-up; ERR_INVALID past KEYPOOL_MAX, ERR_INTERNAL when the thread cannot
 * start. */
int keypool_start(size_t target, struct err *e) WUR;

/* Moves a ready RSA pair into *kp and returns 0, or returns -1 when none is ready (the
 * caller then generates one itself). */
int keypool_take(struct keypair *kp);

/* Number of pairs ready now (for logs and tests). */
size_t keypool_ready(void);

/* Stops the thread and wipes the ready pairs.  A generation in progress is cancelled
 * (keypair_generate_cancellable), not waited for: at nice +10 on a busy machine one can
 * take tens of seconds, which the server's stop would wait (docs/operations.md). */
void keypool_stop(void);

#endif
