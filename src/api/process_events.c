/* GET /api/v1/process/{id}/event: a process's events in order, filtered as Concord's
 * (reference §6.9).  See docs/api.md "Process events". */
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/routes.h"
#include "base/datetime.h"
#include "base/str.h"
#include "store/process_events.h"

#define EVENT_LIMIT_MAX 100000

static int parse_filter(struct api_call *c, struct event_filter *f)
{
	const char *after = http_query(c->req, "after"), *from = http_query(c->req, "fromId");
	const char *phase = http_query(c->req, "eventPhase"), *limit = http_query(c->req, "limit");
	const char *type = http_query(c->req, "type"), *corr = http_query(c->req, "eventCorrelationId");

	memset(f, 0, sizeof *f);
	f->type = type && *type ? type : NULL;
	f->correlation_id = corr && *corr ? corr : NULL;
	if (after && *after && dt_parse_iso(after, strlen(after), true, &f->after, "after", &c->err))
		return -ERR_INVALID;
	if (from && *from && str_to_i64(str_from(from), 0, INT64_MAX, &f->from_id, "fromId", &c->err))
		return -ERR_INVALID;
	if (phase && *phase) {
		if (cstr_ieq(phase, "pre"))
			f->phase = "PRE";
		else if (cstr_ieq(phase, "post"))
			f->phase = "POST";
		else
			return api_fail(c, ERR_INVALID, "Invalid eventPhase: '%.32s' (expected pre or post)", phase);
	}
	f->limit = -1;
	if (limit && *limit) {
		if (str_to_i64(str_from(limit), -1, EVENT_LIMIT_MAX, &f->limit, "limit", &c->err))
			return -ERR_INVALID;
		if (f->limit == 0)
			return api_fail(c, ERR_INVALID, "limit must be -1 (all) or 1..%d, got 0", EVENT_LIMIT_MAX);
	}
	return api_query_bool(c, "includeAll", &f->include_all);
}

static int list(struct api_call *c)
{
	const char *id = api_param(c, "id");
	struct event_filter f;
	struct process p;
	json_t *events;
	int rc;

	if ((rc = api_process_load(c, id, PROC_READ, &p)))
		return rc;
	rc = parse_filter(c, &f);
	if (!rc && f.include_all)
		rc = api_process_check(c, &p, PROC_WRITE);
	store_process_cleanup(&p);
	if (rc || (rc = store_process_event_list(c->db, id, &f, &events, &c->err)))
		return rc;
	return api_reply(c, events);
}

static const struct api_doc doc_list = {
    .summary = "The events of a process, oldest first",
    .params =
	(const struct api_param_doc[]){DOC_PROCESS_ID,
				       {"type", "string", "only events of this type (e.g. ELEMENT, PROCESS_STATUS)"},
				       {"after", "string", "only events after this time (ISO-8601 with offset)"},
				       {"fromId", "integer", "only events with a larger sequence id"},
				       {"eventCorrelationId", "string", "only events of this correlation id"},
				       {"eventPhase", "string", "only events of this phase (PRE or POST)"},
				       {"includeAll", "boolean", "include the events' full data"},
				       {"limit", "integer", "at most this many events"},
				       {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'id':" SCHEMA_UUID
		",'seqId':{'type':'integer'},'eventType':{'type':'string'},'data':" SCHEMA_OBJECT
		",'eventDate':" SCHEMA_DATE "}}}",
    .errors = "400 403 404",
};

const struct api_route api_process_event_routes[] = {
    {"GET", "/api/v1/process/{id}/event", list, 0, &doc_list},
    {0},
};
