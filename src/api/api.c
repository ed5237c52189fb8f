#include "api/api.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/jsonx.h"
#include "base/limits.h"
#include "base/str.h"

int api_reply(struct api_call *c, json_t *v)
{
	http_resp_json(c->resp, 200, v);
	return 0;
}

int api_reply_result(struct api_call *c, const char *result, const char *id)
{
	json_t *v = json_object();

	json_object_set_new(v, "ok", json_true());
	json_object_set_new(v, "result", json_string(result));
	if (id)
		json_object_set_new(v, "id", json_string(id));
	return api_reply(c, v);
}

int api_fail(struct api_call *c, enum err_code code, const char *fmt, ...)
{
	char msg[sizeof c->err.msg];
	va_list ap;

	/* Through a copy: callers pass c->err.msg itself as an argument to re-map a store
	 * error to another status, and vsnprintf's source and target must not overlap. */
	va_start(ap, fmt);
	str_vfmt_cut(msg, sizeof msg, fmt, ap);
	va_end(ap);
	c->err.code = code;
	memcpy(c->err.msg, msg, sizeof msg);
	return -(int)code;
}

int api_recode(struct api_call *c, enum err_code code)
{
	c->err.code = code;
	return -(int)code;
}

int api_body_object(struct api_call *c, json_t **out)
{
	int rc = http_body_json(c->req, out, &c->err);

	if (rc)
		return rc;
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return api_fail(c, ERR_INVALID, "request body must be a JSON object");
	}
	return 0;
}

int api_body_array(struct api_call *c, json_t **out)
{
	int rc = http_body_json(c->req, out, &c->err);

	if (rc)
		return rc;
	if (!json_is_array(*out)) {
		json_decref(*out);
		*out = NULL;
		return api_fail(c, ERR_INVALID, "request body must be a JSON array");
	}
	return 0;
}

int api_body_json_text(struct api_call *c, json_t *body, const char *key, char **out)
{
	json_t *obj = NULL;

	*out = NULL;
	if (jsonx_obj(body, key, false, &obj, &c->err))
		return -ERR_INVALID;
	if (obj && !(*out = jsonx_dump(obj)))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	return 0;
}

int api_paging(struct api_call *c, size_t *limit, size_t *offset)
{
	const char *l = http_query(c->req, "limit"), *o = http_query(c->req, "offset");
	int64_t v;

	*limit = limits.list_default;
	*offset = 0;
	if (l && *l) {
		if (str_to_i64(str_from(l), 1, (int64_t)limits.list_max, &v, "limit", &c->err))
			return -ERR_INVALID;
		*limit = (size_t)v;
	}
	if (o && *o) {
		if (str_to_i64(str_from(o), 0, INT32_MAX, &v, "offset", &c->err))
			return -ERR_INVALID;
		*offset = (size_t)v;
	}
	return 0;
}

const char *api_param(struct api_call *c, const char *name)
{
	const char *v = http_param(c->req, name);
	return v ? v : "";
}

int api_query_bool(struct api_call *c, const char *name, bool *out)
{
	const char *v = http_query(c->req, name);

	if (!v)
		return 0;
	if (cstr_ieq(v, "true"))
		*out = true;
	else if (cstr_ieq(v, "false"))
		*out = false;
	else
		return api_fail(c, ERR_INVALID, "Invalid value of '%s': expected true or false, got '%.64s'", name, v);
	return 0;
}
