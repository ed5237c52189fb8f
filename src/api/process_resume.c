/* Resume (reference §6.7, issue 9): POST /api/v1/process/{id}/resume/{eventName}. */
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/process_routes.h"
#include "http/request.h"
#include "queue/queue.h"
#include "store/processes.h"

#define SAVE_AS_DEPTH 16

/* The body nested under the dotted path saveAs ("a.b" → {"a":{"b":body}}). */
static json_t *nest(struct api_call *c, json_t *body, const char *save_as)
{
	char path[256], *parts[SAVE_AS_DEPTH], *p, *save = NULL;
	size_t n = 0;
	json_t *v = body;

	if (strlen(save_as) >= sizeof path || !*save_as) {
		api_fail(c, ERR_INVALID, "'saveAs' must be a dotted path of at most %zu characters", sizeof path - 1);
		return NULL;
	}
	memcpy(path, save_as, strlen(save_as) + 1); /* the length was checked above */
	for (p = strtok_r(path, ".", &save); p; p = strtok_r(NULL, ".", &save)) {
		if (n == SAVE_AS_DEPTH) {
			api_fail(c, ERR_INVALID, "'saveAs' has more than %d parts", SAVE_AS_DEPTH);
			return NULL;
		}
		parts[n++] = p;
	}
	if (n == 0) {
		api_fail(c, ERR_INVALID, "'saveAs' must name a path such as arguments.answer");
		return NULL;
	}
	json_incref(v);
	while (n--) {
		json_t *o = json_object();
		json_object_set_new(o, parts[n], v);
		v = o;
	}
	return v;
}

/* The arguments a resume passes: the body's `arguments` (after saveAs), or none. */
static int resume_args(struct api_call *c, json_t **args)
{
	const char *save_as = http_query(c->req, "saveAs");
	json_t *body = NULL, *cfg, *a;
	int rc;

	*args = NULL;
	if (c->req->body.len == 0) {
		body = json_object();
	} else if ((rc = http_body_json(c->req, &body, &c->err))) {
		return rc;
	}
	if (!save_as && !json_is_object(body)) {
		json_decref(body);
		return api_fail(c, ERR_INVALID, "the resume body must be a JSON object such as {\"arguments\": {...}}");
	}
	cfg = save_as ? nest(c, body, save_as) : json_incref(body);
	json_decref(body);
	if (!cfg)
		return -1;
	a = json_object_get(cfg, "arguments");
	if (a && !json_is_object(a) && !json_is_null(a)) {
		json_decref(cfg);
		return api_fail(c, ERR_INVALID, "'arguments' must be a JSON object");
	}
	*args = json_is_object(a) ? json_incref(a) : json_object();
	json_decref(cfg);
	return 0;
}

/* A pending form is answered through the form API only, which validates the values and
 * enforces the form's runAs (docs/api.md "Forms"): its name and its event are refused here. */
static int not_a_form(struct api_call *c, const char *id, const char *event)
{
	json_t *forms = NULL, *f;
	const char *name;
	int rc;

	if ((rc = store_process_forms(c->db, id, &forms, &c->err)))
		return rc;
	json_object_foreach(forms, name, f)
	{
		const char *ev = json_string_value(json_object_get(f, "eventName"));
		if (strcmp(name, event) == 0 || (ev && strcmp(ev, event) == 0)) {
			rc = api_fail(c, ERR_INVALID,
				      "'%.200s' belongs to the pending form '%.200s': submit it with POST "
				      "/api/v1/process/%s/form/%.200s",
				      event, name, id, name);
			break;
		}
	}
	json_decref(forms);
	return rc;
}

static int resume(struct api_call *c)
{
	const char *event = api_param(c, "eventName");
	struct process p;
	json_t *args = NULL;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_WRITE, &p)))
		return rc;
	if (!(rc = not_a_form(c, p.instance_id, event)) && !(rc = resume_args(c, &args)))
		rc = store_process_resume(c->db, p.instance_id, event, args, &c->err);
	json_decref(args);
	if (rc == 0) {
		queue_log_line(c->db, p.instance_id, "INFO", "Process resumed with event '%s' by %s", event,
			       c->who.user.username);
		queue_wake(c->app->queue);
	}
	store_process_cleanup(&p);
	if (rc)
		return rc;
	return api_reply(c, json_pack("{s:b}", "ok", 1));
}

static const struct api_doc doc_resume = {
    .summary = "Resume a suspended process waiting for an event, with optional arguments",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID,
					     {"eventName", "string", "the event the process waits for"},
					     {"saveAs", "string", "the variable that receives the body"},
					     {0}},
    .body = SCHEMA_OBJECT,
    .response = SCHEMA_OK,
    .errors = "400 403 404 409 415",
    .audit = {"PROCESS", "RESUME", NULL},
};

const struct api_route api_process_resume_routes[] = {
    {"POST", "/api/v1/process/{id}/resume/{eventName}", resume, 0, &doc_resume},
    {0},
};
