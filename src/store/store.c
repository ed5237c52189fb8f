#include "store/store.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/str.h"
#include "store/pg_sql.h"
#include "store/store_impl.h"

static char *dirname_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

bool store_url_is_pg(const char *url)
{
	return pg_sql_is_url(url);
}

static struct store *open_store(const char *url, bool migrate, struct err *e)
{
	struct store *s;
	const char *path = url;
	bool pg = pg_sql_is_url(url);

	if (strncmp(url, "sqlite:", 7) == 0)
		path = url + 7;
	if (!*path) {
		err_set(e, ERR_INVALID, "database URL '%s' names no file", url);
		return NULL;
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	s->ops = pg ? &store_pg_ops : &store_sqlite_ops;
	s->policies_seen = pg ? 1 : -1;
	pthread_mutex_init(&s->lock, NULL);
	if (!(s->path = strdup(path)) || (!pg && !(s->data_dir = dirname_of(path))) ||
	    (!pg && !(s->writer = sqlite_writer_new(s)))) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (pthread_key_create(&s->key, NULL) != 0) {
		err_set(e, ERR_INTERNAL, "cannot create thread key");
		goto fail;
	}
	s->has_key = true;
	if (migrate && store_migrate(s, e))
		goto fail;
	return s;
fail:
	store_close(s);
	return NULL;
}

struct store *store_open(const char *url, struct err *e)
{
	return open_store(url, true, e);
}

struct store *store_open_as_is(const char *url, struct err *e)
{
	return open_store(url, false, e);
}

void store_close(struct store *s)
{
	if (!s)
		return;
	sqlite_writer_free(s->writer); /* its checkpoint thread, before the connections */
	for (size_t i = 0; i < s->n_conns; i++)
		s->ops->conn_close(s->conns[i]);
	if (s->has_key) /* s->key of a failed create may be another module's key */
		pthread_key_delete(s->key);
	pthread_mutex_destroy(&s->lock);
	if (s->path) /* a PostgreSQL URL may hold a password */
		explicit_bzero(s->path, strlen(s->path));
	free(s->path);
	free(s->data_dir);
	free(s);
}

struct store_conn *store_conn(struct store *s, struct err *e)
{
	struct store_conn *c = pthread_getspecific(s->key);

	if (c)
		return c;
	pthread_mutex_lock(&s->lock);
	if (s->n_idle) {
		c = s->idle[--s->n_idle];
		pthread_mutex_unlock(&s->lock);
		pthread_setspecific(s->key, c);
		return c;
	}
	if (s->n_conns == STORE_MAX_CONNS) {
		pthread_mutex_unlock(&s->lock);
		err_set(e, ERR_UNAVAILABLE, "too many database connections (%d threads)", STORE_MAX_CONNS);
		return NULL;
	}
	c = s->ops->conn_open(s, e);
	if (c)
		s->conns[s->n_conns++] = c;
	pthread_mutex_unlock(&s->lock);
	if (c)
		pthread_setspecific(s->key, c);
	return c;
}

void store_conn_release(struct store *s)
{
	struct store_conn *c = pthread_getspecific(s->key);

	if (!c || !s->ops->pooled || c->in_tx)
		return;
	pthread_setspecific(s->key, NULL);
	pthread_mutex_lock(&s->lock);
	assert(s->n_idle < STORE_MAX_CONNS);
	s->idle[s->n_idle++] = c;
	pthread_mutex_unlock(&s->lock);
}

struct store_stmt *store_prepare(struct store_conn *c, const char *sql, struct err *e)
{
	return c->store->ops->prepare(c, sql, e);
}

/* Statements carry no back-pointer to ops here; every backend statement begins with its
 * connection pointer so the wrappers can find the ops table. */
struct stmt_head {
	struct store_conn *conn;
};

#define OPS(st) (((struct stmt_head *)(st))->conn->store->ops)

void store_bind_text(struct store_stmt *st, int idx, const char *v)
{
	if (v)
		OPS(st)->bind_text(st, idx, v);
	else
		OPS(st)->bind_null(st, idx);
}

void store_bind_blob(struct store_stmt *st, int idx, const void *p, size_t n)
{
	OPS(st)->bind_blob(st, idx, p, n);
}

void store_bind_int64(struct store_stmt *st, int idx, int64_t v)
{
	OPS(st)->bind_int64(st, idx, v);
}

void store_bind_null(struct store_stmt *st, int idx)
{
	OPS(st)->bind_null(st, idx);
}

int store_step(struct store_stmt *st, struct err *e)
{
	assert(st);
	return OPS(st)->step(st, e);
}

int store_stmt_check(struct store_stmt *st, struct err *e)
{
	return OPS(st)->check(st, e);
}

const char *store_col_text(struct store_stmt *st, int idx)
{
	return OPS(st)->col_text(st, idx);
}

void store_col_copy(struct store_stmt *st, int idx, char *dst, size_t cap)
{
	const char *v = store_col_text(st, idx);

	if (str_fmt(dst, cap, "%s", v ? v : ""))
		OPS(st)->col_cut(st, idx, cap);
}

const void *store_col_blob(struct store_stmt *st, int idx, size_t *n)
{
	return OPS(st)->col_blob(st, idx, n);
}

int store_col_blob_dup(struct store_stmt *st, int idx, void **out, size_t *n, struct err *e)
{
	const void *p = store_col_blob(st, idx, n);

	if (!(*out = malloc(*n ? *n : 1))) {
		*n = 0;
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	if (*n)
		memcpy(*out, p, *n);
	return 0;
}

int64_t store_col_int64(struct store_stmt *st, int idx)
{
	return OPS(st)->col_int64(st, idx);
}

bool store_col_is_null(struct store_stmt *st, int idx)
{
	return OPS(st)->col_is_null(st, idx);
}

void store_reset(struct store_stmt *st)
{
	OPS(st)->reset(st);
}

int64_t store_changes(struct store_conn *c)
{
	return c->store->ops->changes(c);
}

int store_exec(struct store_conn *c, const char *sql, struct err *e)
{
	return c->store->ops->exec(c, sql, e);
}

/* A transaction statement (one of the constant texts here or the backend's). */
static int tx_exec(struct store_conn *c, const char *sql, struct err *e)
{
	const struct store_ops *ops = c->store->ops;

	return ops->exec_tx ? ops->exec_tx(c, sql, e) : ops->exec(c, sql, e);
}

/* Savepoint statements by depth (1-based); the same text on SQLite and PostgreSQL. */
static const char *const SAVEPOINT[STORE_TX_DEPTH_MAX + 1] = {
    NULL,	       "SAVEPOINT tx1", "SAVEPOINT tx2", "SAVEPOINT tx3", "SAVEPOINT tx4",
    "SAVEPOINT tx5", "SAVEPOINT tx6", "SAVEPOINT tx7", "SAVEPOINT tx8"};
static const char *const RELEASE[STORE_TX_DEPTH_MAX + 1] = {
    NULL,		       "RELEASE SAVEPOINT tx1", "RELEASE SAVEPOINT tx2", "RELEASE SAVEPOINT tx3",
    "RELEASE SAVEPOINT tx4", "RELEASE SAVEPOINT tx5", "RELEASE SAVEPOINT tx6", "RELEASE SAVEPOINT tx7",
    "RELEASE SAVEPOINT tx8"};
static const char *const UNDO[STORE_TX_DEPTH_MAX + 1] = {
    NULL,
    "ROLLBACK TO SAVEPOINT tx1",
    "ROLLBACK TO SAVEPOINT tx2",
    "ROLLBACK TO SAVEPOINT tx3",
    "ROLLBACK TO SAVEPOINT tx4",
    "ROLLBACK TO SAVEPOINT tx5",
    "ROLLBACK TO SAVEPOINT tx6",
    "ROLLBACK TO SAVEPOINT tx7",
    "ROLLBACK TO SAVEPOINT tx8"};

static int tx_begin(struct store_conn *c, bool rows, struct err *e)
{
	const struct store_ops *ops = c->store->ops;
	int64_t t0 = dt_mono_ns();
	int rc;

	if (c->in_tx) {
		if (c->tx_depth >= STORE_TX_DEPTH_MAX)
			return err_set(e, ERR_INTERNAL, "transactions nested deeper than %d", STORE_TX_DEPTH_MAX);
		if (c->tx_rows && !rows && ops->tx_upgrade_sql) {
			if ((rc = tx_exec(c, ops->tx_upgrade_sql, e)))
				return rc;
			c->tx_rows = false; /* held to the outermost commit */
		}
		if ((rc = tx_exec(c, SAVEPOINT[c->tx_depth + 1], e)) == 0)
			c->tx_depth++;
		return rc;
	}
	rc = tx_exec(c, rows && ops->tx_begin_rows_sql ? ops->tx_begin_rows_sql : ops->tx_begin_sql, e);
	if (rc < 0) {
		struct err ignored;
		/* PostgreSQL: BEGIN ran, taking the lock failed (a timeout, a deadlock): the
		 * transaction is open and aborted.  Where none is open, ROLLBACK only fails. */
		if (tx_exec(c, "ROLLBACK", &ignored) == 0)
			LOG_D("a failed transaction begin was rolled back");
	} else {
		c->in_tx = true;
		c->tx_rows = rows && ops->tx_begin_rows_sql;
		c->tx_start_ns = t0;
	}
	return rc;
}

int store_tx_begin(struct store_conn *c, struct err *e)
{
	return tx_begin(c, false, e);
}

int store_tx_begin_rows(struct store_conn *c, struct err *e)
{
	return tx_begin(c, true, e);
}

bool store_row_locks(struct store_conn *c)
{
	return c->store->ops->tx_begin_rows_sql != NULL;
}

int store_tx_turn(struct store_conn *c, int64_t key, struct err *e)
{
	static const char SQL[] = "SELECT pg_advisory_xact_lock(?)";
	struct store_stmt *st;
	int rc;

	if (!store_row_locks(c))
		return 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_int64(st, 1, key);
	rc = store_step(st, e);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_tx_commit(struct store_conn *c, struct err *e)
{
	int rc;

	if (c->tx_depth > 0) {
		if ((rc = tx_exec(c, RELEASE[c->tx_depth], e)) == 0)
			c->tx_depth--;
		else
			store_tx_rollback(c);
		return rc;
	}
	rc = tx_exec(c, "COMMIT", e);

	if (rc == 0) {
		c->in_tx = false;
		metrics_observe(MH_STORE_TX, (dt_mono_ns() - c->tx_start_ns) / 1000);
	} else {
		store_tx_rollback(c);
	}
	return rc;
}

struct store_conn *store_writer_enter(struct store_conn *c, struct err *e)
{
	if (!c->store->writer || c->in_tx)
		return c;
	return sqlite_writer_enter(c, e);
}

int store_writer_leave(struct store_conn *c, struct store_conn *w, int rc, struct err *e)
{
	if (w == c)
		return rc;
	return sqlite_writer_leave(w, rc, e);
}

void store_tx_rollback(struct store_conn *c)
{
	struct err ignored;

	if (c->tx_depth > 0) {
		if (tx_exec(c, UNDO[c->tx_depth], &ignored) || tx_exec(c, RELEASE[c->tx_depth], &ignored))
			LOG_E("rollback to a savepoint failed: %s", ignored.msg);
		c->tx_depth--;
		return;
	}
	if (c->in_tx && tx_exec(c, "ROLLBACK", &ignored))
		LOG_E("rollback failed: %s", ignored.msg);
	c->in_tx = false;
}

int store_step_done(struct store_stmt *st, struct err *e)
{
	int rc = store_step(st, e);

	store_reset(st);
	if (rc < 0)
		return rc;
	return 0;
}

int store_one(struct store_stmt *st, store_read_fn read, void *out, const char *what, const char *key, struct err *e)
{
	int rc = store_step(st, e);

	if (rc == STORE_ROW) {
		read(st, out);
		rc = store_stmt_check(st, e);
		store_reset(st);
		return rc;
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "%s not found: %.128s", what, key);
	return rc;
}

int store_write_one(struct store_conn *c, struct store_stmt *st, const char *what, const char *name, const char *key,
		    struct err *e)
{
	int rc = store_step_done(st, e);

	if (rc == -ERR_CONFLICT && name)
		return err_set(e, ERR_CONFLICT, "%s already exists: %.128s", what, name);
	if (rc == 0 && key && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "%s not found: %.128s", what, key);
	return rc;
}

int store_collect(struct store_stmt *st, size_t elem_size, store_read_fn read, void **out, size_t *n, struct err *e)
{
	char *arr = NULL;
	size_t len = 0, cap = 0;
	int rc;

	while ((rc = store_step(st, e)) == STORE_ROW) {
		if (len == cap) {
			size_t bytes;
			char *grown;
			cap = cap ? cap * 2 : 16;
			if (__builtin_mul_overflow(cap, elem_size, &bytes) || !(grown = realloc(arr, bytes))) {
				rc = err_set(e, ERR_INTERNAL, "out of memory");
				break;
			}
			arr = grown;
		}
		read(st, arr + len++ * elem_size);
		if ((rc = store_stmt_check(st, e)))
			break;
	}
	store_reset(st);
	if (rc < 0) {
		free(arr);
		return rc;
	}
	*out = arr;
	*n = len;
	return 0;
}

int store_collect_json(struct store_stmt *st, store_json_row_fn row, void *ctx, json_t **out, struct err *e)
{
	json_t *arr = json_array();
	int rc;

	*out = NULL;
	if (!arr) {
		store_reset(st);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	while ((rc = store_step(st, e)) == STORE_ROW) {
		if (json_array_append_new(arr, row(st, ctx))) {
			rc = err_set(e, ERR_INTERNAL, "out of memory");
			break;
		}
		if ((rc = store_stmt_check(st, e)))
			break;
	}
	store_reset(st);
	if (rc < 0) {
		json_decref(arr);
		return rc;
	}
	*out = arr;
	return 0;
}

void store_prefer_map(struct store_conn *c)
{
	if (c->store->ops->prefer_map && !c->in_tx)
		c->store->ops->prefer_map(c);
}

int store_maintain(struct store_conn *c, uint64_t wal_limit, uint64_t *wal_bytes, struct err *e)
{
	*wal_bytes = 0;
	if (!c->store->ops->maintain || c->in_tx)
		return 0;
	return c->store->ops->maintain(c, wal_limit, wal_bytes, e);
}

const char *store_backend(struct store *s)
{
	return s->ops->name;
}

struct store *store_conn_store(struct store_conn *c)
{
	return c->store;
}

void *store_native(struct store_conn *c)
{
	return c->store->ops->native(c);
}

void store_conn_reset(struct store_conn *c)
{
	assert(!c->in_tx);
	if (c->store->ops->reset_conn)
		c->store->ops->reset_conn(c);
}

bool store_auth_generation(struct store *s, uint64_t *gen)
{
	*gen = 0;
	return s->ops->auth_generation && s->ops->auth_generation(gen);
}

const char *store_data_dir(struct store *s)
{
	return s->data_dir;
}

/* An open-addressed set of interned SQL texts; never shrinks (texts live until exit). */
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static char *interned[STORE_SQL_INTERN_MAX * 2];
static size_t n_interned;

const char *store_sql_intern(const char *sql, struct err *e)
{
	const size_t cap = sizeof interned / sizeof interned[0];
	uint64_t h = 1469598103934665603ULL;
	const char *out = NULL;
	size_t i;

	for (const char *p = sql; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	pthread_mutex_lock(&intern_lock);
	for (i = (size_t)h & (cap - 1); interned[i]; i = (i + 1) & (cap - 1))
		if (strcmp(interned[i], sql) == 0) {
			out = interned[i];
			break;
		}
	if (!out && n_interned < STORE_SQL_INTERN_MAX && (interned[i] = strdup(sql))) {
		out = interned[i];
		n_interned++;
	}
	pthread_mutex_unlock(&intern_lock);
	if (!out)
		err_set(e, ERR_LIMIT, "too many distinct SQL statements (%d)", STORE_SQL_INTERN_MAX);
	return out;
}

int store_notify(struct store_conn *c, const char *channel, const char *payload, struct err *e)
{
	struct store_stmt *st;

	if (!c->store->ops->notify_sql)
		return 0;
	if (!(st = store_prepare(c, c->store->ops->notify_sql, e)))
		return -1;
	store_bind_text(st, 1, channel);
	store_bind_text(st, 2, payload);
	return store_step_done(st, e) < 0 ? -1 : 0;
}

struct store_listener *store_listen(struct store *s, const char *const *channels, size_t n, struct err *e)
{
	if (!s->ops->listen_open) {
		if (e)
			*e = (struct err){0};
		return NULL;
	}
	return s->ops->listen_open(s, channels, n, e);
}

int store_listener_wait(struct store_listener *l, int wake_fd, int timeout_ms, char *channel, size_t ccap,
			char *payload, size_t pcap, struct err *e)
{
	return l->store->ops->listen_wait(l, wake_fd, timeout_ms, channel, ccap, payload, pcap, e);
}

void store_listener_close(struct store_listener *l)
{
	if (l)
		l->store->ops->listen_close(l);
}
