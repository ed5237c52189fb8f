#include "inventory/query.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonx.h"
#include "base/limits.h"
#include "inventory/dialect.h"
#include "inventory/executor.h"

static const struct inv_executor *const executors[] = {&inv_executor_sqlite, &inv_executor_pg};

static const struct inv_executor *executor_of(struct store_conn *c, struct err *e)
{
	const char *backend = store_backend(store_conn_store(c));

	for (size_t i = 0; i < sizeof(executors) / sizeof(executors[0]); i++)
		if (strcmp(executors[i]->backend, backend) == 0)
			return executors[i];
	err_set(e, ERR_UNAVAILABLE, "inventory queries are not available on the %s store in this version", backend);
	return NULL;
}

int inv_query_compile(const char *text, size_t len, struct inv_query *out, struct err *e)
{
	struct inv_translation t;

	memset(out, 0, sizeof(*out));
	if (inv_dialect_translate(text, len, NULL, &t, e))
		return -1;
	*out = (struct inv_query){.text = text, .text_len = len, .n_params = t.n_params, .prefilter = t.prefilter};
	inv_translation_cleanup(&t);
	return 0;
}

int inv_query_check(struct store_conn *c, const struct inv_query *q, struct err *e)
{
	const struct inv_executor *x = executor_of(c, e);

	return x ? x->check(c, q, e) : -1;
}

static struct inv_run run_of(const struct inventory *inv, const char *filter)
{
	return (struct inv_run){.inventory = inv->rid,
				.inventory_id = inv->id,
				.filter = filter,
				.filter_len = filter ? strlen(filter) : 0,
				.timeout_ms = limits.query_timeout_ms,
				.max_rows = limits.query_rows};
}

int inv_query_run(struct store_conn *c, const struct inventory *inv, const struct inv_query *q, const char *filter,
		  json_t **rows, struct err *e)
{
	const struct inv_executor *x = executor_of(c, e);
	struct inv_run r = run_of(inv, filter);

	*rows = NULL;
	return x ? x->run(c, q, &r, rows, e) : -1;
}

int inv_query_run_text(struct store_conn *c, const struct inventory *inv, const struct inv_query *q,
		       const char *filter, struct buf *text, struct err *e)
{
	const struct inv_executor *x = executor_of(c, e);
	struct inv_run r = run_of(inv, filter);
	json_t *rows = NULL;
	char *s;
	int rc;

	buf_reset(text);
	if (!x)
		return -1;
	if (x->run_text)
		return x->run_text(c, q, &r, text, e);
	if ((rc = x->run(c, q, &r, &rows, e)))
		return rc;
	s = jsonx_dump(rows);
	json_decref(rows);
	if (!s)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = buf_append_str(text, s, e);
	free(s);
	return rc;
}
