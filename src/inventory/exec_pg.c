/* The PostgreSQL executor of inventory queries: the checked text runs natively, as it was
 * written, against the view inventory_data of migration 014 (store/schema/014_inventory_jsonb.pg.sql)
 * or json_store_data of migration 032 (the same rows under Concord's names), in a sandbox
 * as strict as SQLite's (docs/security.md, "Inventory query sandbox"):
 *
 *  - its own READ ONLY transaction on the calling connection, always rolled back, sent with
 *    the settings and the query in one flight (struct sandbox below);
 *  - SET LOCAL (set_config(…, true)) of: accord.inventory (the rows the views show),
 *    accord.filter (the filter, for the containment view), statement_timeout (the run's
 *    time limit), search_path (the view's schema, then pg_catalog and pg_temp: the query's
 *    inventory_data is the view, and it cannot name another schema: the dialect refuses
 *    qualified names), and last role, the database's query role accord_inv_<oid>, which may
 *    read the two views and nothing else;
 *  - the text has passed the dialect check (one SELECT over inventory_data and its own WITH
 *    queries); here every function it calls must also be on an allow-list of side-effect-free
 *    functions (set_config, current_setting, pg_sleep, lo_*, pg_read_file, … are not);
 *  - rows are fetched one by one (single-row mode): past the row limit, the result-size
 *    limit or the memory budget the statement is cancelled and the run fails.
 *
 * All SQL here is built from constants and the checked text; values are bound. */
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "inventory/query.h"
#include "base/str.h"
#include "inventory/dialect.h"
#include "inventory/executor.h"
#include "inventory/lex.h"
#include "inventory/sandbox.h"
#include "store/pq_api.h"

#define OID_BOOL 16

/* The functions a query may call by name on PostgreSQL: the dialect's JSON functions and the
 * common side-effect-free ones SQLite also has (docs/inventory.md), plus the keywords that
 * look like calls. */
static bool allowed_function(const char *name)
{
	static const char *const ok[] = {
	    "to_json", "to_jsonb", "json_build_object", "jsonb_build_object", "json_build_array", "jsonb_build_array",
	    "json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "json_array_length", "jsonb_array_length",
	    "json_typeof", "jsonb_typeof", "jsonb_array_elements", "json_array_elements", "jsonb_array_elements_text",
	    "json_array_elements_text", "jsonb_each", "json_each", "jsonb_each_text", "json_each_text",
	    "jsonb_object_keys", "json_object_keys", "string_agg", "abs", "avg", "coalesce", "count", "length", "lower",
	    "upper", "ltrim", "rtrim", "trim", "max", "min", "nullif", "replace", "round", "substr", "substring", "sum",
	    "greatest", "least",
	    /* keywords followed by a parenthesis */
	    "cast", "exists", "in", "any", "all", "some", "array", "row", "filter", "over", "values", "select", "from",
	    "where", "and", "or", "not", "on", "join", "lateral", "union", "intersect", "except", "by", "when", "then",
	    "else", "case", "distinct", "having", "limit", "offset", "is", "between", "like", "ilike", "as", "with",
	    "recursive", "using", "end", "null"};

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcasecmp(name, ok[i]) == 0)
			return true;
	return false;
}

static const struct inv_tok *matching_paren(const struct inv_tok *t)
{
	int depth = 0;

	for (; t->kind != INV_TOK_END; t++) {
		depth += t->kind == INV_TOK_LPAREN;
		depth -= t->kind == INV_TOK_RPAREN;
		if (depth == 0)
			return t;
	}
	return t;
}

/* True when the name at w (followed by '(') is not a call: a column list after an alias
 * (`AS x(a)`, `… ) x(a)`) or a WITH query's name (`r(n) AS (`). */
static bool column_list(const struct inv_tok *w, bool first)
{
	const struct inv_tok *close = matching_paren(w + 1);

	if (!first && (w[-1].kind == INV_TOK_RPAREN || (w[-1].kind == INV_TOK_WORD && str_ieq_cstr(w[-1].text, "as"))))
		return true;
	return close->kind == INV_TOK_RPAREN && close[1].kind == INV_TOK_WORD && str_ieq_cstr(close[1].text, "as") &&
	       close[2].kind == INV_TOK_LPAREN;
}

/* Refuses a call of a function outside allowed_function, a quoted or schema-qualified one. */
static int check_calls(const struct inv_toks *toks, struct err *e)
{
	char name[64];

	for (size_t i = 0; i + 1 < toks->n; i++) {
		const struct inv_tok *w = &toks->v[i];
		if (toks->v[i + 1].kind != INV_TOK_LPAREN || (w->kind != INV_TOK_WORD && w->kind != INV_TOK_QIDENT))
			continue;
		if (column_list(w, i == 0))
			continue;
		bool cut = str_fmt(name, sizeof(name), "%.*s", (int)w->text.len, w->text.p) != 0;
		if (cut || w->kind == INV_TOK_QIDENT || (i > 0 && toks->v[i - 1].kind == INV_TOK_DOT) ||
		    !allowed_function(name))
			return err_set(e, ERR_INVALID, "invalid query: not allowed: function %s at line %u, column %u",
				       name, w->line, w->col);
	}
	return 0;
}

/* The text to send: q's text with its ? placeholder written $1, after check_calls. */
static int pg_text(const struct inv_query *q, struct buf *out, struct err *e)
{
	struct inv_toks toks = {0};
	const char *from = q->text;
	int rc = -1;

	if (inv_lex((struct str){q->text, q->text_len}, &toks, e) || check_calls(&toks, e))
		goto out;
	buf_init(out, INV_DIALECT_MAX_TEXT * 2);
	for (size_t i = 0; i < toks.n; i++) {
		const struct inv_tok *t = &toks.v[i];
		if (t->kind != INV_TOK_PARAM)
			continue;
		if (buf_append(out, from, (size_t)(t->text.p - from), e) || buf_append(out, "$1", 2, e))
			goto out;
		from = t->text.p + t->text.len;
	}
	if (buf_append(out, from, (size_t)(q->text + q->text_len - from), e))
		goto out;
	rc = 0;
out:
	inv_toks_cleanup(&toks);
	return rc;
}

/* True when r failed because the session is gone or going (as the store's pg.c reads it). */
static bool session_lost(PGconn *pg, const PGresult *r)
{
	const char *state = r ? pq.result_error_field(r, PG_DIAG_SQLSTATE) : NULL;

	return pq.status(pg) != CONNECTION_OK || !state || strncmp(state, "08", 2) == 0 ||
	       strncmp(state, "57P", 3) == 0;
}

/* Maps a failed result to the SQLite executor's messages. */
static int result_error(PGconn *pg, const PGresult *r, const char *prefix, const struct inv_run *in, struct err *e)
{
	const char *state = r ? pq.result_error_field(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? pq.result_error_field(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	if (session_lost(pg, r))
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s", msg ? msg : pq.error_message(pg));
	if (strcmp(state, "57014") == 0 && in && in->timeout_ms)
		return err_set(e, ERR_INVALID, "query stopped after %u ms (limit query_timeout_ms)", in->timeout_ms);
	if (strcmp(state, "22P02") == 0 && msg && strstr(msg, "type json"))
		return err_set(e, ERR_INVALID, "%s: malformed JSON: %s", prefix, msg);
	return err_set(e, ERR_INVALID, "%s: %s", prefix, msg ? msg : state);
}

/* The sandbox on pg, sent in one flight (libpq's pipeline mode): BEGIN READ ONLY, the
 * settings of the top of this file, the caller's statements, ROLLBACK and a Sync; then the
 * results are read in that order.  After an error the server skips every message up to the
 * Sync, so the caller's statements never run without the settings before them, and the
 * server reads each message after the one before has run (the query's names resolve under
 * the new search_path and role).  One round trip instead of four. */
struct sandbox {
	struct store_conn *c;
	PGconn *pg; /* NULL: not open */
	bool synced;
};

static int send_failed(PGconn *pg, struct err *e)
{
	if (pq.status(pg) != CONNECTION_OK)
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s", pq.error_message(pg));
	return err_set(e, ERR_INTERNAL, "inventory query: %s", pq.error_message(pg));
}

/* The query role's name as the settings last set it on this thread's session: later runs on
 * the same session send the name instead of looking the database's oid up (a catalog scan
 * and its plan: a fifth of the sandbox's time on the server).  A session is its connection
 * and its backend's pid (a reconnect changes the pid). */
static _Thread_local struct {
	const PGconn *pg;
	int pid;
	char name[64];
} role_cache;

#define SETTINGS                                                                                                       \
	"SELECT set_config('accord.inventory', $1, true), set_config('accord.filter', $2, true),"                      \
	" set_config('statement_timeout', $3, true), set_config('search_path', $4, true), "

/* Opens the sandbox: pipeline mode, then BEGIN READ ONLY and the settings (not sent yet).
 * filter: the containment view's filter, or NULL for the plain view. */
static int sandbox_open(struct sandbox *sb, struct store_conn *c, int64_t inventory, const char *filter,
			unsigned timeout_ms, struct err *e)
{
	static const char LOOKUP[] = SETTINGS "set_config('role', 'accord_inv_' || (SELECT oid FROM pg_database"
					      " WHERE datname = current_database()), true)";
	static const char KNOWN[] = SETTINGS "set_config('role', $5, true)";
	PGconn *pg = store_native(c);
	bool known = role_cache.pg == pg && role_cache.pid == pq.backend_pid(pg);
	char rid[24], ms[24];
	const char *vals[5] = {rid, filter ? filter : "", ms,
			       filter ? "accord_inv_filter, pg_catalog, pg_temp" : "accord_inv, pg_catalog, pg_temp",
			       role_cache.name};

	*sb = (struct sandbox){.c = c};
	if (pq.status(pg) != CONNECTION_OK)
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s", pq.error_message(pg));
	if (pq.transaction_status(pg) != PQTRANS_IDLE || pq.pipeline_status(pg) != PQ_PIPELINE_OFF)
		return err_set(e, ERR_INTERNAL, "inventory query: the connection is inside a transaction");
	if (str_fmt(rid, sizeof(rid), "%lld", (long long)inventory) || str_fmt(ms, sizeof(ms), "%u", timeout_ms))
		return err_set(e, ERR_INTERNAL, "inventory query: a setting is too long");
	if (!pq.enter_pipeline_mode(pg))
		return send_failed(pg, e);
	sb->pg = pg;
	if (!pq.send_query_params(pg, "BEGIN READ ONLY", 0, NULL, NULL, NULL, NULL, 0) ||
	    !pq.send_query_params(pg, known ? KNOWN : LOOKUP, known ? 5 : 4, NULL, vals, NULL, NULL, 0))
		return send_failed(pg, e);
	return 0;
}

/* Remembers the role the settings r set on pg's session (role_cache). */
static void role_remember(PGconn *pg, const PGresult *r)
{
	static const char PREFIX[] = "accord_inv_";
	const char *name = pq.nfields(r) == 5 && pq.ntuples(r) == 1 ? pq.getvalue(r, 0, 4) : "";

	role_cache.pg = NULL;
	if (strncmp(name, PREFIX, sizeof(PREFIX) - 1) != 0 ||
	    str_fmt(role_cache.name, sizeof(role_cache.name), "%s", name))
		return;
	role_cache.pg = pg;
	role_cache.pid = pq.backend_pid(pg);
}

/* Reads the results of the next statement in the pipeline: one of status want (kept in *out
 * when out is not NULL), then the NULL that ends it.  prefix: the error message's for the
 * query's own statements; NULL for the sandbox's (whose failure is not the query's). */
static int next_result(PGconn *pg, ExecStatusType want, const char *prefix, PGresult **out, struct err *e)
{
	PGresult *r = pq.get_result(pg);
	int rc = 0;

	if (!r)
		return send_failed(pg, e);
	if (pq.result_status(r) != want) {
		if (prefix || session_lost(pg, r))
			rc = result_error(pg, r, prefix, NULL, e);
		else
			rc = err_set(e, ERR_INTERNAL, "inventory query: the sandbox could not be set up: %s",
				     pq.result_error_message(r));
		pq.clear(r);
		return rc;
	}
	if (out)
		*out = r;
	else
		pq.clear(r);
	if ((r = pq.get_result(pg))) {
		pq.clear(r);
		return err_set(e, ERR_INTERNAL, "inventory query: more results than statements");
	}
	return 0;
}

/* After the caller's statements: sends ROLLBACK and the Sync, then reads the results of
 * BEGIN and the settings.  0: the caller's results are next. */
static int sandbox_go(struct sandbox *sb, struct err *e)
{
	PGresult *r = NULL;

	if (!pq.send_query_params(sb->pg, "ROLLBACK", 0, NULL, NULL, NULL, NULL, 0) || !pq.pipeline_sync(sb->pg))
		return send_failed(sb->pg, e);
	sb->synced = true;
	if (next_result(sb->pg, PGRES_COMMAND_OK, NULL, NULL, e) || next_result(sb->pg, PGRES_TUPLES_OK, NULL, &r, e))
		return -1;
	role_remember(sb->pg, r);
	pq.clear(r);
	return 0;
}

/* Reads what is left up to the Sync, leaves pipeline mode and rolls back what a failed
 * statement left of the transaction, so that the connection goes back to the store as it
 * came: idle, its own role and settings.  A session it cannot bring back is replaced. */
static void sandbox_close(struct sandbox *sb)
{
	PGconn *pg = sb->pg;
	PGresult *r;
	int nulls = 0;

	if (!pg)
		return;
	if (!sb->synced && pq.status(pg) == CONNECTION_OK)
		sb->synced = pq.pipeline_sync(pg) == 1;
	/* two NULLs in a row: nothing is queued any more (each statement's results end in one) */
	while (sb->synced && pq.status(pg) == CONNECTION_OK && nulls < 2) {
		if (!(r = pq.get_result(pg))) {
			nulls++;
			continue;
		}
		nulls = 0;
		if (pq.result_status(r) == PGRES_PIPELINE_SYNC) {
			pq.clear(r);
			break;
		}
		pq.clear(r);
	}
	if (pq.status(pg) != CONNECTION_OK)
		return; /* the store reconnects on the next use */
	if (sb->synced && pq.exit_pipeline_mode(pg) && pq.transaction_status(pg) != PQTRANS_IDLE)
		pq.clear(pq.exec(pg, "ROLLBACK"));
	if (pq.pipeline_status(pg) != PQ_PIPELINE_OFF || pq.transaction_status(pg) != PQTRANS_IDLE)
		store_conn_reset(sb->c);
	sb->pg = NULL;
}

static int one_column(int n, struct err *e)
{
	return n == 1 ? 0 : err_set(e, ERR_INVALID, INV_ONE_COLUMN_FMT, n);
}

static int pg_check(struct store_conn *c, const struct inv_query *q, struct err *e)
{
	struct sandbox sb = {0};
	struct buf sql = {0};
	PGresult *r = NULL;
	int rc = -1;

	if (pg_text(q, &sql, e) || sandbox_open(&sb, c, 0, NULL, 0, e))
		goto out;
	if (!pq.send_prepare(sb.pg, "", sql.data, (int)q->n_params, NULL) || !pq.send_describe_prepared(sb.pg, "")) {
		send_failed(sb.pg, e);
		goto out;
	}
	if (sandbox_go(&sb, e) || next_result(sb.pg, PGRES_COMMAND_OK, "invalid query", NULL, e) ||
	    next_result(sb.pg, PGRES_COMMAND_OK, "invalid query", &r, e))
		goto out;
	rc = 0; /* any number of columns (`select *`), as Concord saves it; running needs one */
out:
	pq.clear(r);
	sandbox_close(&sb);
	buf_cleanup(&sql);
	return rc;
}

/* The value of a row's one column: NULL as null, booleans as booleans, everything else as
 * its text parsed as JSON (as the SQLite executor reads text). */
static int row_value(const PGresult *r, size_t *bytes, size_t max_bytes, json_t **out, struct err *e)
{
	const char *s = pq.getvalue(r, 0, 0);
	size_t n = (size_t)pq.getlength(r, 0, 0);

	if (pq.getisnull(r, 0, 0))
		*out = json_null();
	else if (pq.ftype(r, 0) == OID_BOOL)
		*out = json_boolean(s[0] == 't');
	else {
		*bytes += n;
		if (*bytes > INV_QUERY_RESULT_BYTES)
			return err_set(e, ERR_INVALID, "query result is larger than %u bytes", INV_QUERY_RESULT_BYTES);
		if (*bytes > max_bytes)
			return err_set(e, ERR_INVALID, "query stopped: it needed more than %zu bytes of memory",
				       max_bytes);
		if (!(*out = json_loadb(s, n, JSON_DECODE_ANY, NULL)))
			return err_set(e, ERR_INVALID, "Invalid JSON value: %.100s", s);
		return 0;
	}
	return *out ? 0 : err_set(e, ERR_INTERNAL, "out of memory");
}

/* Stops the statement still running after an error of ours (sandbox_close reads the rest). */
static void cancel(PGconn *pg)
{
	PGcancel *cancel = pq.get_cancel(pg);
	char msg[256];

	if (cancel) {
		(void)pq.cancel(cancel, msg, sizeof(msg));
		pq.free_cancel(cancel);
	}
}

/* Reads the rows of the statement into rows, one by one (single-row mode). */
static int fetch_all(PGconn *pg, const struct inv_run *in, json_t *rows, struct err *e)
{
	size_t bytes = 0, max_bytes = in->max_memory ? in->max_memory : INV_QUERY_MEMORY_BYTES;
	ExecStatusType st = PGRES_EMPTY_QUERY;
	PGresult *r;
	int rc = 0;

	if (!pq.set_single_row_mode(pg)) {
		cancel(pg);
		return err_set(e, ERR_INTERNAL, "inventory query: single-row mode: %s", pq.error_message(pg));
	}
	while (rc == 0 && (r = pq.get_result(pg))) {
		json_t *v;
		st = pq.result_status(r);
		if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK)
			rc = one_column(pq.nfields(r), e);
		else
			rc = result_error(pg, r, "query failed", in, e);
		if (rc == 0 && st == PGRES_SINGLE_TUPLE) {
			if (in->max_rows && json_array_size(rows) >= in->max_rows)
				rc = err_set(e, ERR_INVALID, "query returned more than %zu rows (limit query_rows)",
					     in->max_rows);
			else if ((rc = row_value(r, &bytes, max_bytes, &v, e)) == 0 && json_array_append_new(rows, v))
				rc = err_set(e, ERR_INTERNAL, "out of memory");
		}
		pq.clear(r);
	}
	if (rc && st == PGRES_SINGLE_TUPLE) /* stopped by us: more rows may be on their way */
		cancel(pg);
	return rc;
}

/* True when filter is the JSON object {} (white space aside): it matches every object, so
 * the GIN index cannot narrow it down and the plain view's scan is the cheaper one (the
 * query's own containment still decides each row). */
static bool empty_object(const char *filter)
{
	const char *p = filter + strspn(filter, " \t\r\n");

	if (*p++ != '{')
		return false;
	p += strspn(p, " \t\r\n");
	if (*p++ != '}')
		return false;
	return p[strspn(p, " \t\r\n")] == '\0';
}

static int pg_run(struct store_conn *c, const struct inv_query *q, const struct inv_run *in, json_t **rows,
		  struct err *e)
{
	struct sandbox sb = {0};
	struct buf sql = {0};
	const char *params[1] = {in->filter}, *view_filter = NULL;
	int rc = -1;

	if (q->n_params > 0 && !in->filter)
		return err_set(e, ERR_INVALID, "the query has a ? placeholder: send a JSON object as the request body");
	if (!(*rows = json_array()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (q->prefilter && in->filter && !empty_object(in->filter))
		view_filter = in->filter;
	if (pg_text(q, &sql, e) || sandbox_open(&sb, c, in->inventory, view_filter, in->timeout_ms, e))
		goto out;
	if (!pq.send_query_params(sb.pg, sql.data, (int)q->n_params, NULL, params, NULL, NULL, 0)) {
		send_failed(sb.pg, e);
		goto out;
	}
	if (sandbox_go(&sb, e) == 0)
		rc = fetch_all(sb.pg, in, *rows, e);
out:
	sandbox_close(&sb);
	buf_cleanup(&sql);
	if (rc) {
		json_decref(*rows);
		*rows = NULL;
	}
	return rc;
}

const struct inv_executor inv_executor_pg = {.backend = "postgresql", .check = pg_check, .run = pg_run};
