/* /api/v1/process and /api/v2/process: start, status, stop, list, count.  The log,
 * attachment and event endpoints live in their own files. */
#include <stdio.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/process_json.h"
#include "api/process_routes.h"
#include "api/routes.h"
#include "base/str.h"
#include "queue/queue.h"

static int status(struct api_call *c, unsigned includes)
{
	struct process p;
	json_t *v;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_READ, &p)))
		return rc;
	rc = api_process_json(c, &p, includes, &v);
	store_process_cleanup(&p);
	return rc ? rc : api_reply(c, v);
}

static int status_v2(struct api_call *c)
{
	unsigned includes;
	int rc = api_process_includes(c, &includes);

	return rc ? rc : status(c, includes);
}

static int status_v1(struct api_call *c)
{
	return status(c, 0);
}

/* Stop (reference §6.8, DESIGN.md §2): a process that is not running is cancelled at once;
 * a running one is stopped by its supervisor wherever it runs (SIGTERM, SIGKILL after the
 * grace period) and the answer comes once it is CANCELLED; a finished one is left as it
 * is.  204 in all three cases, as Concord. */
static int stop(struct api_call *c)
{
	struct process p;
	char why[200];
	struct err e;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_KILL, &p)))
		return rc;
	str_fmt_cut(why, sizeof why, "Process cancelled by %s", c->who.user.username);
	rc = queue_stop(c->app->queue, c->db, p.instance_id, why, queue_stop_wait_ms(c->app->queue), &e);
	store_process_cleanup(&p);
	if (rc && e.code != ERR_UNAVAILABLE) /* still stopping: it will be CANCELLED shortly */
		return api_fail(c, e.code, "%s", e.msg);
	http_resp_bytes(c->resp, 204, "", NULL, 0);
	return 0;
}

#define DOC_LIST_FILTERS                                                                                               \
	{"orgId", "string", "only processes of this organization (id)"},                                               \
	    {"orgName", "string", "only processes of this organization (name)"},                                       \
	    {"projectId", "string", "only processes of this project (id)"},                                            \
	    {"projectName", "string", "only processes of this project (name; with orgName)"},                          \
	    {"status", "string", "only processes in this status"},                                                     \
	    {"initiator", "string", "only processes started by this user"},                                            \
	    {"parentInstanceId", "string", "only children of this process"},                                           \
	    {"tags", "string", "only processes with this tag (repeatable)"},                                           \
	    {"entryPoint", "string", "only processes started at this flow"},                                           \
	    {"minRuntimeMs", "integer", "only processes that ran at least this long (totalRuntimeMs)"},                \
	    {"afterCreatedAt", "string", "only processes created after this time (ISO-8601)"},                         \
	{                                                                                                              \
		"beforeCreatedAt", "string", "only processes created before this time (ISO-8601)"                      \
	}

static const struct api_doc doc_start = {
    .summary = "Start a process: a payload archive, a flow file, a repository of a project, arguments (meta.x, "
	       "arguments, request), tags, startAt, timeouts",
    .body = "{'type':'object','properties':{'archive':{'type':'string','format':'binary'},'org':{'type':'string'},"
	    "'orgId':" SCHEMA_UUID ",'project':{'type':'string'},'projectId':" SCHEMA_UUID ",'repo':{'type':'string'},"
	    "'repoId':" SCHEMA_UUID ",'repoBranchOrTag':{'type':'string'},'repoCommitId':{'type':'string'},"
	    "'entryPoint':{'type':'string'},'activeProfiles':{'type':'string'},'tags':{'type':'string'},"
	    "'startAt':" SCHEMA_DATE ",'processTimeout':{'type':'string'},'suspendTimeout':{'type':'string'},"
	    "'parentInstanceId':" SCHEMA_UUID ",'out':{'type':'string'},'request':{'type':'string',"
	    "'description':'a JSON object of the start configuration'}},"
	    "'additionalProperties':{'type':'string','format':'binary','description':'a file of the payload'}}",
    .body_type = "multipart/form-data",
    .response = "{'type':'object','required':['ok','instanceId'],'properties':{'ok':{'type':'boolean'},"
		"'instanceId':" SCHEMA_UUID "}}",
    .errors = "400 403 404 413 415",
    .audit = {"PROCESS", "START", NULL},
};
static const struct api_doc doc_status_v1 = {
    .summary = "A process (v1 entry)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = SCHEMA_PROCESS,
    .errors = "403 404",
};
static const struct api_doc doc_stop = {
    .summary = "Stop a process: cancelled at once when not running, else its runner is stopped (204 in every case)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .status = 204,
    .errors = "403 404",
    .audit = {"PROCESS", "STOP", NULL},
};
static const struct api_doc doc_list = {
    .summary = "Processes the caller can see, newest first (without meta.out unless include=out)",
    .params = (const struct api_param_doc[]){DOC_LIST_FILTERS,
					     DOC_PAGING,
					     {"include", "string",
					      "checkpoints, history, childrenIds, out (meta.out; repeatable)"},
					     {0}},
    .response = "{'type':'array','items':" SCHEMA_PROCESS "}",
    .errors = "400 403 404 413",
};
static const struct api_doc doc_count = {
    .summary = "How many processes match the filters of the list",
    .params = (const struct api_param_doc[]){DOC_LIST_FILTERS, {0}},
    .response = "{'type':'integer'}",
    .errors = "400 403 404",
};
static const struct api_doc doc_status_v2 = {
    .summary = "A process (v2 entry; include=checkpoints, history, childrenIds)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID,
					     {"include", "string", "checkpoints, history, childrenIds (repeatable)"},
					     {0}},
    .response = SCHEMA_PROCESS,
    .errors = "400 403 404",
};

const struct api_route api_process_routes[] = {
    {"POST", "/api/v1/process", api_process_start, 0, &doc_start},
    /* API_SLOW: answers that carry meta (out variables up to limit-out-bytes) are built on
     * a worker, never on the event-loop thread. */
    {"GET", "/api/v1/process/{id}", status_v1, API_SLOW, &doc_status_v1},
    {"DELETE", "/api/v1/process/{id}", stop, 0, &doc_stop},
    {"GET", "/api/v2/process", api_process_list, API_SLOW, &doc_list},
    {"GET", "/api/v2/process/count", api_process_count, 0, &doc_count},
    {"GET", "/api/v2/process/{id}", status_v2, API_SLOW, &doc_status_v2},
    {0},
};
