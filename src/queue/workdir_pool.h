#ifndef ACCORD_QUEUE_WORKDIR_POOL_H
#define ACCORD_QUEUE_WORKDIR_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "base/err.h"

/* Empty working folders kept for the next process of this node, so that a process whose
 * files stay in memory (queue/start_staged.h) costs no mkdir and no rmdir: each inode
 * made and removed costs a scan of recently removed ones on an ext4 without a journal
 * (bench/RESULTS.md).
 *
 * A folder goes back to the pool only when the process that had it never touched it: the
 * same inode, still a folder with no entry, its ctime and mtime those it had when it was
 * handed out (an entry made or removed changes them, and no one can set a ctime back).
 * A folder is taken out by one rename, under the pool's lock, so two live processes never
 * share one.  The folders are <work>/work/.free-<n>; start-up empties work/ (queue.c).
 * Thread-safe. */

#define WORKDIR_POOL_MAX 64

struct workdir_pool {
	pthread_mutex_t lock;
	unsigned free[WORKDIR_POOL_MAX]; /* the numbers of the folders in the pool */
	size_t n, cap;
	unsigned next; /* the number of the next folder put in */
};

/* cap: how many folders are kept at most (<= WORKDIR_POOL_MAX). */
void workdir_pool_init(struct workdir_pool *p, size_t cap);
void workdir_pool_cleanup(struct workdir_pool *p);

/* Renames a folder of the pool to workdir (which must not exist): 1 when one was (its owner
 * and mode still those it was first handed out with: nothing to give again), 0 when the
 * pool had none (the caller makes the folder). */
int workdir_pool_take(struct workdir_pool *p, const char *work_dir, const char *workdir);

/* Puts workdir back when it is as it was handed out (handed: its lstat then) and the pool
 * has room: true when it is in the pool now (the caller removes nothing). */
bool workdir_pool_give(struct workdir_pool *p, const char *work_dir, const char *workdir, const struct stat *handed);

#endif
