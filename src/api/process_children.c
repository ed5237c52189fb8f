/* GET /api/v1/process/{id}/subprocess[?tags=]: the children of a process (reference §6.4),
 * oldest first, each as the process status (docs/api.md "Subprocesses"). */
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/process_json.h"
#include "api/routes.h"
#include "store/processes.h"

#define SUBPROCESS_MAX 10000

struct tags_ctx {
	struct api_call *c;
	struct process_filter *f;
	int rc;
};

static int tag_param(void *ctx, const char *key, const char *value)
{
	struct tags_ctx *t = ctx;

	if (strcmp(key, "tags") != 0 || !*value)
		return 0;
	if (t->f->n_tags >= PROCESS_FILTER_MAX_TAGS)
		return t->rc =
			   api_fail(t->c, ERR_INVALID, "too many tags filters (at most %d)", PROCESS_FILTER_MAX_TAGS);
	t->f->tags[t->f->n_tags++] = value;
	return 0;
}

static int subprocesses(struct api_call *c)
{
	const char *id = api_param(c, "id");
	struct process_filter f = {.status = -1};
	struct tags_ctx t = {c, &f, 0};
	struct process parent, *list = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	if (store_process_get(c->db, id, &parent, &c->err))
		return c->err.code == ERR_NOT_FOUND ? api_fail(c, ERR_INVALID, "Unknown instance ID: %.64s", id) : -1;
	store_process_cleanup(&parent);
	if ((rc = api_process_load(c, id, PROC_READ, &parent)))
		return rc;
	f.parent_instance_id = parent.instance_id;
	http_query_each(c->req, tag_param, &t);
	if (t.rc || (rc = store_process_list(c->db, &f, SUBPROCESS_MAX, 0, &list, &n, &c->err))) {
		store_process_cleanup(&parent);
		return t.rc ? t.rc : rc;
	}
	arr = json_array();
	for (size_t i = n; i > 0 && rc == 0; i--) {
		json_t *one = NULL;
		if ((rc = api_process_json(c, &list[i - 1], 0, &one)) == 0)
			json_array_append_new(arr, one);
	}
	store_process_list_free(list, n);
	store_process_cleanup(&parent);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	return api_reply(c, arr);
}

static const struct api_doc doc_children = {
    .summary = "The child processes of a process",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {"tags", "string", "only children with this tag"}, {0}},
    .response = "{'type':'array','items':" SCHEMA_PROCESS "}",
    .errors = "403 404",
};

const struct api_route api_process_children_routes[] = {
    {"GET", "/api/v1/process/{id}/subprocess", subprocesses, API_SLOW, &doc_children},
    {0},
};
