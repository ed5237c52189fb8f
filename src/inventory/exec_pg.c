/* The PostgreSQL executor of inventory queries: the checked text runs natively, as it was
 * written, against the view inventory_data of migration 014 (store/schema_pg), in a sandbox
 * as strict as SQLite's (docs/security.md, "Inventory query sandbox"):
 *
 *  - its own READ ONLY transaction on the calling connection, always rolled back;
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
#include <libpq-fe.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"
#include "base/str.h"
#include "inventory/dialect.h"
#include "inventory/executor.h"
#include "inventory/lex.h"
#include "inventory/sandbox.h"

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

/* Maps a failed result to the SQLite executor's messages. */
static int result_error(PGconn *pg, const PGresult *r, const char *prefix, const struct inv_run *in, struct err *e)
{
	const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	if (PQstatus(pg) != CONNECTION_OK || !state)
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s", PQerrorMessage(pg));
	if (strcmp(state, "57014") == 0 && in && in->timeout_ms)
		return err_set(e, ERR_INVALID, "query stopped after %u ms (limit query_timeout_ms)", in->timeout_ms);
	if (strcmp(state, "22P02") == 0 && msg && strstr(msg, "type json"))
		return err_set(e, ERR_INVALID, "%s: malformed JSON: %s", prefix, msg);
	return err_set(e, ERR_INVALID, "%s: %s", prefix, msg ? msg : state);
}

static int exec_simple(PGconn *pg, const char *sql, struct err *e)
{
	PGresult *r = PQexec(pg, sql);
	int rc = 0;

	if (PQresultStatus(r) != PGRES_COMMAND_OK)
		rc = err_set(e, ERR_INTERNAL, "inventory query: %s: %s", sql, PQerrorMessage(pg));
	PQclear(r);
	return rc;
}

/* Opens the sandbox: BEGIN READ ONLY and the transaction-local settings of the top of this
 * file.  filter: the containment view's filter, or NULL for the plain view. */
static int sandbox_begin(PGconn *pg, int64_t inventory, const char *filter, unsigned timeout_ms, struct err *e)
{
	static const char SQL[] =
	    "SELECT set_config('accord.inventory', $1, true), set_config('accord.filter', $2, true),"
	    " set_config('statement_timeout', $3, true), set_config('search_path', $4, true),"
	    " set_config('role', 'accord_inv_' || (SELECT oid FROM pg_database WHERE datname = current_database()), "
	    "true)";
	char rid[24], ms[24];
	const char *vals[4] = {rid, filter ? filter : "", ms,
			       filter ? "accord_inv_filter, pg_catalog, pg_temp" : "accord_inv, pg_catalog, pg_temp"};
	PGresult *r;
	int rc = 0;

	if (PQstatus(pg) != CONNECTION_OK)
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s", PQerrorMessage(pg));
	if (PQtransactionStatus(pg) != PQTRANS_IDLE)
		return err_set(e, ERR_INTERNAL, "inventory query: the connection is inside a transaction");
	if (str_fmt(rid, sizeof(rid), "%lld", (long long)inventory) || str_fmt(ms, sizeof(ms), "%u", timeout_ms))
		return err_set(e, ERR_INTERNAL, "inventory query: a setting is too long");
	if (exec_simple(pg, "BEGIN READ ONLY", e))
		return -1;
	r = PQexecParams(pg, SQL, 4, NULL, vals, NULL, NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK)
		rc = err_set(e, ERR_INTERNAL, "inventory query: the sandbox could not be set up: %s",
			     PQerrorMessage(pg));
	PQclear(r);
	return rc;
}

static void sandbox_end(PGconn *pg)
{
	struct err ignored;

	if (PQtransactionStatus(pg) != PQTRANS_IDLE && exec_simple(pg, "ROLLBACK", &ignored))
		PQreset(pg);
}

static int one_column(int n, struct err *e)
{
	return n == 1 ? 0 : err_set(e, ERR_INVALID, "a query must return exactly one column, this one returns %d", n);
}

static int pg_check(struct store_conn *c, const struct inv_query *q, struct err *e)
{
	PGconn *pg = store_native(c);
	struct buf sql = {0};
	PGresult *r = NULL;
	int rc = -1;

	if (pg_text(q, &sql, e) || sandbox_begin(pg, 0, NULL, 0, e))
		goto out;
	r = PQprepare(pg, "", sql.data, (int)q->n_params, NULL);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		result_error(pg, r, "invalid query", NULL, e);
		goto out;
	}
	PQclear(r);
	r = PQdescribePrepared(pg, "");
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		result_error(pg, r, "invalid query", NULL, e);
		goto out;
	}
	rc = one_column(PQnfields(r), e);
out:
	PQclear(r);
	sandbox_end(pg);
	buf_cleanup(&sql);
	return rc;
}

/* The value of a row's one column: NULL as null, booleans as booleans, everything else as
 * its text parsed as JSON (as the SQLite executor reads text). */
static int row_value(const PGresult *r, size_t *bytes, size_t max_bytes, json_t **out, struct err *e)
{
	const char *s = PQgetvalue(r, 0, 0);
	size_t n = (size_t)PQgetlength(r, 0, 0);

	if (PQgetisnull(r, 0, 0))
		*out = json_null();
	else if (PQftype(r, 0) == OID_BOOL)
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

/* Stops the running statement after an error of ours and reads what is left. */
static void cancel_and_drain(PGconn *pg)
{
	PGcancel *cancel = PQgetCancel(pg);
	char msg[256];
	PGresult *r;

	if (cancel) {
		(void)PQcancel(cancel, msg, sizeof(msg));
		PQfreeCancel(cancel);
	}
	while ((r = PQgetResult(pg)))
		PQclear(r);
}

/* Reads the rows of the statement sent in single-row mode into rows. */
static int fetch_all(PGconn *pg, const struct inv_run *in, json_t *rows, struct err *e)
{
	size_t bytes = 0, max_bytes = in->max_memory ? in->max_memory : INV_QUERY_MEMORY_BYTES;
	PGresult *r;
	int rc = 0;

	while (rc == 0 && (r = PQgetResult(pg))) {
		json_t *v;
		ExecStatusType st = PQresultStatus(r);
		if (st == PGRES_SINGLE_TUPLE || st == PGRES_TUPLES_OK)
			rc = one_column(PQnfields(r), e);
		else
			rc = result_error(pg, r, "query failed", in, e);
		if (rc == 0 && st == PGRES_SINGLE_TUPLE) {
			if (in->max_rows && json_array_size(rows) >= in->max_rows)
				rc = err_set(e, ERR_INVALID, "query returned more than %zu rows (limit query_rows)",
					     in->max_rows);
			else if ((rc = row_value(r, &bytes, max_bytes, &v, e)) == 0 && json_array_append_new(rows, v))
				rc = err_set(e, ERR_INTERNAL, "out of memory");
		}
		PQclear(r);
	}
	if (rc)
		cancel_and_drain(pg);
	return rc;
}

static int pg_run(struct store_conn *c, const struct inv_query *q, const struct inv_run *in, json_t **rows,
		  struct err *e)
{
	PGconn *pg = store_native(c);
	struct buf sql = {0};
	const char *params[1] = {in->filter};
	int rc = -1;

	if (q->n_params > 0 && !in->filter)
		return err_set(e, ERR_INVALID, "the query has a ? placeholder: send a JSON object as the request body");
	if (pg_text(q, &sql, e) ||
	    sandbox_begin(pg, in->inventory, q->prefilter && in->filter ? in->filter : NULL, in->timeout_ms, e))
		goto out;
	if (!PQsendQueryParams(pg, sql.data, (int)q->n_params, NULL, params, NULL, NULL, 0) ||
	    !PQsetSingleRowMode(pg)) {
		err_set(e, ERR_INTERNAL, "inventory query: %s", PQerrorMessage(pg));
		cancel_and_drain(pg);
		goto out;
	}
	if (!(*rows = json_array())) {
		err_set(e, ERR_INTERNAL, "out of memory");
		cancel_and_drain(pg);
		goto out;
	}
	rc = fetch_all(pg, in, *rows, e);
out:
	sandbox_end(pg);
	buf_cleanup(&sql);
	if (rc) {
		json_decref(*rows);
		*rows = NULL;
	}
	return rc;
}

const struct inv_executor inv_executor_pg = {.backend = "postgresql", .check = pg_check, .run = pg_run};
