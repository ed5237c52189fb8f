/* GET /api/v1/process/{id}/attachment[/{name*}]: the files a process left in
 * _attachments/.  See docs/api.md "Process attachments". */
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/routes.h"
#include "store/process_attachments.h"

/* A relative path of non-empty segments, none of them "." or "..". */
static bool name_ok(const char *name)
{
	const char *seg = name;

	if (!*name)
		return false;
	for (;;) {
		size_t n = strcspn(seg, "/");
		if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return false;
		if (!seg[n])
			return true;
		seg += n + 1;
	}
}

static int list(struct api_call *c)
{
	const char *id = api_param(c, "id");
	struct process p;
	json_t *names;
	int rc;

	if ((rc = api_process_load(c, id, PROC_READ, &p)))
		return rc;
	store_process_cleanup(&p);
	if ((rc = store_process_attachment_list(c->db, id, &names, &c->err)))
		return rc;
	return api_reply(c, names);
}

static int get(struct api_call *c)
{
	const char *id = api_param(c, "id"), *name = api_param(c, "name");
	struct process p;
	void *data;
	size_t len;
	bool slash;
	int rc;

	if ((rc = api_process_load(c, id, PROC_READ, &p)))
		return rc;
	store_process_cleanup(&p);
	/* The router forgives one trailing slash; a name never ends with one. */
	slash = c->req->path[strlen(c->req->path) - 1] == '/';
	if (!name_ok(name) || slash)
		return api_fail(c, ERR_INVALID, "Invalid attachment name: %.256s%s", name, slash ? "/" : "");
	if ((rc = store_process_attachment_get(c->db, id, name, &data, &len, &c->err)))
		return rc;
	http_resp_take(c->resp, 200, "application/octet-stream", data, len);
	return 0;
}

static const struct api_doc doc_list = {
    .summary = "The names of a process's attachments",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = SCHEMA_STRINGS,
    .errors = "403 404",
};
static const struct api_doc doc_get = {
    .summary = "One attachment of a process",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {"name", "string", "the attachment's name"}, {0}},
    .response = "{'type':'string','format':'binary'}",
    .response_type = "application/octet-stream",
    .errors = "403 404",
};

const struct api_route api_process_attachment_routes[] = {
    {"GET", "/api/v1/process/{id}/attachment", list, 0, &doc_list},
    {"GET", "/api/v1/process/{id}/attachment/{name*}", get, 0, &doc_get},
    {0},
};
