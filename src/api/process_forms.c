/* Forms (issue 9, Concord's form API, docs/api.md "Forms"):
 *   GET  /api/v1/process/{id}/form                       pending forms
 *   GET  /api/v1/process/{id}/form/{name}                one form with its fields
 *   POST /api/v1/process/{id}/form/{name}[/multipart]    submit: JSON object or multipart
 * A valid submit resumes the process with the form's name as the event and
 * {"<name>": values} as arguments; the runner sets the `<name>` variable.  File fields are
 * passed to the supervisor under RESUME_FILES_KEY and become files in the working folder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/form_run_as.h"
#include "api/process_forms.h"
#include "base/b64.h"
#include "base/limits.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/form_validate.h"
#include "http/multipart.h"
#include "queue/queue.h"
#include "queue/resume_files.h"
#include "store/processes.h"

#define FORM_FILES_DIR "_form_files"

void api_form_req_cleanup(struct form_req *r)
{
	store_process_cleanup(&r->p);
	json_decref(r->forms);
}

bool api_form_is_file(const json_t *f)
{
	const char *t = json_string_value(json_object_get(f, "type"));
	return t && form_base_type_len(t) == 4 && strncmp(t, "file", 4) == 0;
}

const json_t *api_form_field(const json_t *form, const char *name)
{
	const json_t *f;
	size_t i;
	json_array_foreach(json_object_get(form, "fields"), i, f)
	{
		if (json_is_string(json_object_get(f, "name")) &&
		    strcmp(json_string_value(json_object_get(f, "name")), name) == 0)
			return f;
	}
	return NULL;
}

int api_form_load(struct api_call *c, const char *name, enum proc_need need, struct form_req *r)
{
	const char *id = api_param(c, "id");
	bool restricted = false;
	int rc;

	memset(r, 0, sizeof *r);
	if (!uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_NOT_FOUND, "Process instance not found: %.64s", id);
	if ((rc = store_process_get(c->db, id, &r->p, &c->err)) || (rc = api_process_reach(c, &r->p)))
		return rc;
	if (r->p.status == PS_SUSPENDED) {
		if ((rc = store_process_forms(c->db, id, &r->forms, &c->err)))
			return rc;
	} else {
		r->forms = json_object();
	}
	r->form = name ? json_object_get(r->forms, name) : NULL;
	if (r->form && (rc = api_form_run_as_check(c, &r->p, r->form, &restricted)))
		return rc;
	if (!restricted && (rc = api_process_check(c, &r->p, need)))
		return rc;
	if (need == PROC_WRITE && r->p.status != PS_SUSPENDED)
		return api_fail(c, ERR_CONFLICT, "Process is not suspended, can't submit form '%s': %s", name, id);
	if (name && !r->form)
		return api_fail(c, ERR_NOT_FOUND, "Form not found: %s", name);
	return 0;
}

static json_t *list_entry(const json_t *form)
{
	bool custom = json_is_true(json_object_get(form, "custom"));
	const json_t *opts = json_object_get(form, "options"), *ra = json_object_get(opts, "runAs");
	json_t *e = json_pack("{s:O, s:O, s:b, s:b}", "formInstanceId", json_object_get(form, "eventName"), "name",
			      json_object_get(form, "name"), "custom", custom, "yield",
			      json_is_true(json_object_get(opts, "yield")));
	if (json_is_object(ra))
		json_object_set(e, "runAs", (json_t *)ra);
	return e;
}

static int list_forms(struct api_call *c)
{
	struct form_req r;
	json_t *out = json_array(), *f;
	const char *k;
	int rc = api_form_load(c, NULL, PROC_READ, &r);

	if (rc == 0)
		json_object_foreach(r.forms, k, f) json_array_append_new(out, list_entry(f));
	api_form_req_cleanup(&r);
	if (rc) {
		json_decref(out);
		return rc;
	}
	return api_reply(c, out);
}

/* Attributes other than the ones FormInstanceEntry names become the field's options. */
static json_t *field_entry(const json_t *form, const json_t *f)
{
	static const char *const known[] = {"name", "label", "type", "value", "allow"};
	const char *type = json_string_value(json_object_get(f, "type")),
		   *name = json_string_value(json_object_get(f, "name"));
	const json_t *value = json_object_get(json_object_get(form, "values"), name), *v;
	json_t *opts = json_object(), *e;
	const char *k;

	if (!value)
		value = json_object_get(f, "value");
	json_object_foreach((json_t *)f, k, v)
	{
		size_t i = 0;
		while (i < sizeof known / sizeof known[0] && strcmp(known[i], k) != 0)
			i++;
		if (i == sizeof known / sizeof known[0])
			json_object_set(opts, k, (json_t *)v);
	}
	e = json_pack("{s:s, s:O, s:s%, s:s, s:O, s:O, s:o}", "name", name, "label",
		      json_object_get(f, "label") ? json_object_get(f, "label") : json_object_get(f, "name"), "type",
		      type, form_base_type_len(type), "cardinality", form_cardinality(type), "value",
		      value ? value : json_null(), "allowedValue",
		      json_object_get(f, "allow") ? json_object_get(f, "allow") : json_null(), "options", opts);
	return e;
}

static int get_form(struct api_call *c)
{
	struct form_req r;
	json_t *out = NULL, *fields, *f;
	size_t i;
	int rc = api_form_load(c, api_param(c, "name"), PROC_READ, &r);

	if (rc == 0) {
		out = list_entry(r.form);
		json_object_set_new(out, "processInstanceId", json_string(r.p.instance_id));
		fields = json_array();
		json_array_foreach(json_object_get(r.form, "fields"), i, f)
		    json_array_append_new(fields, field_entry(r.form, f));
		json_object_set_new(out, "fields", fields);
	}
	api_form_req_cleanup(&r);
	return rc ? rc : api_reply(c, out);
}

/* ---- submit ------------------------------------------------------------------------ */

void api_form_submission_init(struct submission *s)
{
	*s = (struct submission){json_object(), json_array(), json_object(), 0};
}

void api_form_submission_cleanup(struct submission *s)
{
	json_decref(s->values);
	json_decref(s->files);
	json_decref(s->errors);
}

void api_form_add_value(json_t *values, const char *name, json_t *v)
{
	json_t *old = json_object_get(values, name);
	if (!old) {
		json_object_set_new(values, name, v);
	} else if (json_is_array(old)) {
		json_array_append_new(old, v);
	} else {
		json_object_set_new(values, name, json_pack("[O, o]", old, v));
	}
}

static int add_file(struct api_call *c, struct submission *s, const char *form, const json_t *f,
		    const struct multipart_part *p)
{
	const char *field = json_string_value(json_object_get(f, "name"));
	const char *type = json_string_value(json_object_get(f, "type"));
	bool multi = type[strlen(type) - 1] == '+' || type[strlen(type) - 1] == '*';
	json_t *old = json_object_get(s->values, field);
	char rel[1024];
	char *data;

	if (multi ? str_fmt(rel, sizeof rel, "%s/%s/%s/%zu", FORM_FILES_DIR, form, field,
			    json_is_array(old) ? json_array_size(old)
			    : old	       ? 1
					       : 0)
		  : str_fmt(rel, sizeof rel, "%s/%s/%s", FORM_FILES_DIR, form, field))
		return api_fail(c, ERR_INVALID, "form '%.64s' field '%.64s': the file's path is over %zu bytes", form,
				field, sizeof rel - 1);
	if (!path_is_safe_relative(rel)) {
		json_object_set_new(s->errors, field, json_sprintf("field '%s' cannot hold a file", field));
		return 0;
	}
	if (__builtin_add_overflow(s->file_bytes, p->data.len, &s->file_bytes) || s->file_bytes > limits.archive_bytes)
		return api_fail(c, ERR_TOO_LARGE, "the submitted files exceed %llu bytes (limits.archive_bytes)",
				(unsigned long long)limits.archive_bytes);
	if (!(data = b64_encode(p->data.p, p->data.len, B64_STD)))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	json_array_append_new(s->files, json_pack("{s:s, s:s}", "path", rel, "data", data));
	free(data);
	api_form_add_value(s->values, field, json_string(rel));
	return 0;
}

int api_form_read_multipart(struct api_call *c, const json_t *form, struct submission *s)
{
	struct multipart mp = {0};
	struct str ct = str_from(c->req->content_type);
	const char *name = json_string_value(json_object_get(form, "name"));
	int rc = multipart_parse(ct, (struct str){c->req->body.data, c->req->body.len}, &mp, &c->err);

	for (size_t i = 0; rc == 0 && i < mp.n_parts; i++) {
		const struct multipart_part *p = &mp.parts[i];
		char field[256];
		const json_t *f;
		if (p->name.len >= sizeof field)
			continue;
		memcpy(field, p->name.p, p->name.len);
		field[p->name.len] = 0;
		if (!(f = api_form_field(form, field)))
			continue;
		if (api_form_is_file(f))
			rc = add_file(c, s, name, f, p);
		else if (p->data.len > 0)
			api_form_add_value(s->values, field, json_stringn(p->data.p, p->data.len));
	}
	multipart_cleanup(&mp);
	return rc;
}

static int read_json(struct api_call *c, const json_t *form, struct submission *s)
{
	const char *k;
	json_t *v, *body = NULL;
	int rc;

	if (c->req->body.len == 0)
		return 0;
	if ((rc = api_body_object(c, &body)))
		return rc;
	json_object_foreach(body, k, v)
	{
		const json_t *f = api_form_field(form, k);
		if (f && api_form_is_file(f) && !json_is_null(v))
			json_object_set_new(
			    s->errors, k, json_sprintf("file field '%s' must be uploaded with multipart/form-data", k));
		else if (f)
			json_object_set(s->values, k, v);
	}
	json_decref(body);
	return 0;
}

static json_t *submitted_by(struct api_call *c)
{
	const struct user *u = &c->who.user;
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", u->id, "username", u->username, "displayName",
			 u->display_name[0] ? u->display_name : u->username, "email", u->email, "userDomain",
			 u->domain);
}

/* Stores the resume: {"<form>": values} (+ submittedBy, + the files for the supervisor). */
static int resume_with(struct api_call *c, struct form_req *r, json_t *values, struct submission *s)
{
	const char *name = json_string_value(json_object_get(r->form, "name"));
	const json_t *run_as = json_object_get(json_object_get(r->form, "options"), "runAs");
	bool keep = json_is_true(json_object_get(run_as, "keep"));
	json_t *args = json_object();
	int rc;

	if (json_is_true(json_object_get(json_object_get(r->form, "options"), "saveSubmittedBy")))
		json_object_set_new(values, "submittedBy", submitted_by(c));
	json_object_set(args, name, values);
	if (json_array_size(s->files))
		json_object_set(args, RESUME_FILES_KEY, s->files);
	/* runAs.keep: the process goes on on behalf of who submitted the form. */
	rc = store_process_resume_as(c->db, r->p.instance_id, name, args, keep ? c->who.user.id : NULL, &c->err);
	json_decref(args);
	if (rc)
		return rc;
	queue_log_line(c->db, r->p.instance_id, "INFO", "Form '%s' submitted by %s", name, c->who.user.username);
	queue_wake(c->app->queue);
	return 0;
}

int api_form_apply(struct api_call *c, struct form_req *r, struct submission *s, json_t **errors)
{
	json_t *out = NULL;
	int rc = form_validate(r->form, s->values, &out, &c->err);

	*errors = NULL;
	if (rc < 0)
		return rc;
	if (rc == FORM_VALID && json_object_size(s->errors) == 0) {
		rc = resume_with(c, r, out, s);
		json_decref(out);
		return rc < 0 ? rc : FORM_VALID;
	}
	if (rc == FORM_VALID)
		json_object_clear(out);
	json_object_update(out, s->errors);
	*errors = out;
	return FORM_INVALID;
}

static int submit(struct api_call *c)
{
	struct form_req r;
	struct submission s;
	json_t *errors = NULL;
	int rc = api_form_load(c, api_param(c, "name"), PROC_WRITE, &r);

	api_form_submission_init(&s);
	if (rc)
		goto done;
	rc = multipart_is_form_data(str_from(c->req->content_type)) ? api_form_read_multipart(c, r.form, &s)
								    : read_json(c, r.form, &s);
	if (rc || (rc = api_form_apply(c, &r, &s, &errors)) < 0)
		goto done;
	if (rc == FORM_VALID)
		rc = api_reply(c, json_pack("{s:b, s:s}", "ok", 1, "processInstanceId", r.p.instance_id));
	else /* Concord answers a failed validation 200 with ok=false and one message per
	      * field; nothing is stored and the process stays SUSPENDED. */
		rc = api_reply(c, json_pack("{s:b, s:s, s:O}", "ok", 0, "processInstanceId", r.p.instance_id,
					    "errors", errors));
done:
	json_decref(errors);
	api_form_submission_cleanup(&s);
	api_form_req_cleanup(&r);
	return rc;
}

#define DOC_FORM                                                                                                       \
	{                                                                                                              \
		"name", "string", "the form's name"                                                                    \
	}
#define SCHEMA_SUBMITTED                                                                                               \
	"{'type':'object','properties':{'ok':{'type':'boolean'},'processInstanceId':" SCHEMA_UUID                      \
	",'errors':{'type':'object','description':'per field, why its value was refused (ok false)'}}}"

static const struct api_doc doc_list = {
    .summary = "The forms a suspended process waits for",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'formInstanceId':{'type':'string'},"
		"'name':{'type':'string'},'custom':{'type':'boolean'},'yield':{'type':'boolean'}}}}",
    .errors = "403 404",
};
static const struct api_doc doc_get = {
    .summary = "A form: its fields, their values and allowed values",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_FORM, {0}},
    .response = SCHEMA_OBJECT,
    .errors = "403 404",
};
static const struct api_doc doc_submit = {
    .summary = "Submit a form (JSON): valid values resume the process; invalid ones answer ok false with errors",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_FORM, {0}},
    .body = SCHEMA_OBJECT,
    .response = SCHEMA_SUBMITTED,
    .errors = "400 403 404 409 415",
    .audit = {"PROCESS", "RESUME", "form"},
};
static const struct api_doc doc_submit_multipart = {
    .summary = "Submit a form with files (multipart)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_FORM, {0}},
    .body = SCHEMA_OBJECT,
    .body_type = "multipart/form-data",
    .response = SCHEMA_SUBMITTED,
    .errors = "400 403 404 409 413 415",
    .audit = {"PROCESS", "RESUME", "form"},
};

const struct api_route api_process_form_routes[] = {
    {"GET", "/api/v1/process/{id}/form", list_forms, 0, &doc_list},
    {"GET", "/api/v1/process/{id}/form/{name}", get_form, 0, &doc_get},
    {"POST", "/api/v1/process/{id}/form/{name}", submit, 0, &doc_submit},
    {"POST", "/api/v1/process/{id}/form/{name}/multipart", submit, 0, &doc_submit_multipart},
    {0},
};
