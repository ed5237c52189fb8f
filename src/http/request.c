#include "http/request.h"

#include <string.h>

#include "http/mhd.h"

#include "base/jsonx.h"
#include "base/limits.h"
#include "base/str.h"

const char *http_header(const struct http_request *r, const char *name)
{
	return mhd.lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

const char *http_query(const struct http_request *r, const char *name)
{
	const char *v;

	if (!mhd.lookup_connection_value_n(r->conn, MHD_GET_ARGUMENT_KIND, name, strlen(name), &v, NULL))
		return NULL;
	return v ? v : "";
}

struct each_ctx {
	int (*fn)(void *ctx, const char *key, const char *value);
	void *ctx;
	int rc;
};

static enum MHD_Result each_cb(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct each_ctx *ec = cls;
	(void)kind;
	ec->rc = ec->fn(ec->ctx, key, value ? value : "");
	return ec->rc ? MHD_NO : MHD_YES;
}

int http_query_each(const struct http_request *r, int (*fn)(void *ctx, const char *key, const char *value), void *ctx)
{
	struct each_ctx ec = {fn, ctx, 0};

	mhd.get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, each_cb, &ec);
	return ec.rc;
}

const char *http_param(const struct http_request *r, const char *name)
{
	for (size_t i = 0; i < r->n_params; i++)
		if (strcmp(r->param_names[i], name) == 0)
			return r->param_values[i];
	return NULL;
}

bool http_content_type_is(const struct http_request *r, const char *mime)
{
	struct str ct;

	if (!r->content_type)
		return false;
	ct = str_from(r->content_type);
	ct.len = strcspn(r->content_type, ";");
	return str_ieq_cstr(str_trim(ct), mime);
}

static bool is_json_type(const struct http_request *r)
{
	struct str ct;

	if (http_content_type_is(r, "application/json"))
		return true;
	if (!r->content_type)
		return false;
	ct = str_from(r->content_type);
	ct.len = strcspn(r->content_type, ";");
	ct = str_trim(ct);
	return ct.len > 5 && str_ieq_cstr((struct str){ct.p + ct.len - 5, 5}, "+json");
}

/* jansson keeps "\u0000" inside strings (JSON_ALLOW_NUL, needed by flows), but handlers
 * use request strings as C strings, which would end at it. */
static bool has_nul(json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strlen(json_string_value(v)) != json_string_length(v);
	case JSON_OBJECT:
		json_object_foreach(v, key, item) if (has_nul(item)) return true;
		return false;
	case JSON_ARRAY:
		json_array_foreach(v, i, item) if (has_nul(item)) return true;
		return false;
	default:
		return false;
	}
}

int http_body_json(struct http_request *r, json_t **out, struct err *e)
{
	if (!is_json_type(r))
		return err_set(e, ERR_MEDIA_TYPE, "expected Content-Type: application/json, got '%.100s'",
			       r->content_type ? r->content_type : "(none)");
	if (str_trim((struct str){r->body.data ? r->body.data : "", r->body.len}).len == 0)
		return err_set(e, ERR_INVALID, "request body is empty: expected a JSON document");
	*out = jsonx_parse(r->body.data, r->body.len, limits.json_depth, e);
	if (!*out)
		return -ERR_INVALID;
	if (has_nul(*out)) {
		json_decref(*out);
		*out = NULL;
		return err_set(e, ERR_INVALID, "a JSON string in the request contains a NUL character (\\u0000)");
	}
	return 0;
}
