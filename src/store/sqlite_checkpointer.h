#ifndef ACCORD_STORE_SQLITE_CHECKPOINTER_H
#define ACCORD_STORE_SQLITE_CHECKPOINTER_H

/* Checkpoints of SQLite's write-ahead log on a thread of their own instead of in the
 * writer connection's commits (sqlite_checkpointer.c).  Store-internal: sqlite_writer.c
 * attaches its connection; the thread starts at the first checkpoint needed. */

struct store;
struct store_conn;
struct sqlite_checkpointer;

/* A commit that leaves the log at this many pages or more asks for a checkpoint (SQLite's
 * default: 1,000).  Every connection other than the writer's keeps SQLite's automatic
 * checkpoint at this size (store/sqlite.c). */
#define SQLITE_CHECKPOINT_PAGES 10000

/* NULL: out of memory. */
struct sqlite_checkpointer *sqlite_checkpointer_new(struct store *s);
/* From now on, writer's commits ask the thread for checkpoints instead of making them. */
void sqlite_checkpointer_attach(struct sqlite_checkpointer *k, struct store_conn *writer);
/* Stops and waits for the thread (a checkpoint under way ends first).  Before the
 * store's connections close. */
void sqlite_checkpointer_free(struct sqlite_checkpointer *k);

#endif
