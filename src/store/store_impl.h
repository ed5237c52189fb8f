#ifndef ACCORD_STORE_STORE_IMPL_H
#define ACCORD_STORE_STORE_IMPL_H

/* Shared between store.c and the backends only. */

#include <pthread.h>

#include "store/migrations.h"
#include "store/store.h"

#define STORE_MAX_CONNS 256

struct store {
	const struct store_ops *ops;
	char *path;	/* backend-specific location (SQLite file, PostgreSQL URL: a secret) */
	char *data_dir; /* folder of the database file, if any */
	pthread_key_t key;
	bool has_key; /* key was created (and is ours to delete) */
	pthread_mutex_t lock;
	struct store_conn *conns[STORE_MAX_CONNS];
	size_t n_conns;
	/* Connections given back by their threads (store_conn_release), for the next thread
	 * that has none: only where ops->pooled. */
	struct store_conn *idle[STORE_MAX_CONNS];
	size_t n_idle;
	/* Whether any policy may apply (policies.c): -1 not known yet, 0 no policy link and no
	 * process policy exists, 1 some may.  Only SQLite keeps it (one server per data folder
	 * writes the links); PostgreSQL starts at 1, since other nodes link policies. */
	int policies_seen;
	/* SQLite's writer connection with group commit (sqlite_writer.c; NULL: none). */
	struct store_writer *writer;
};

/* Every backend connection starts with this header. */
struct store_conn {
	struct store *store;
	bool in_tx;
	bool tx_rows;	     /* the open transaction is a row transaction (store_tx_begin_rows) */
	int tx_depth;	     /* transactions begun inside the open one (savepoints) */
	int64_t tx_start_ns; /* BEGIN of the open transaction (metrics) */
};

/* Every backend listener starts with this header. */
struct store_listener {
	struct store *store;
};

extern const struct store_ops store_sqlite_ops;
extern const struct store_ops store_pg_ops;

int store_migrate(struct store *s, struct err *e) WUR;

/* sqlite_writer.c, behind store_writer_enter/leave (store.h). */
struct store_writer *sqlite_writer_new(struct store *s);
void sqlite_writer_free(struct store_writer *w);
struct store_conn *sqlite_writer_enter(struct store_conn *c, struct err *e);
int sqlite_writer_leave(struct store_conn *wc, int rc, struct err *e);

#endif
