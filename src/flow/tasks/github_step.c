/* The helpers every `github` action uses (github_step.h). */
#include "flow/tasks/github_step.h"

#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "base/str.h"

void ghs_log(struct gh_step *s, enum flow_level level, const char *fmt, ...)
{
	char text[2048];
	va_list ap;
	va_start(ap, fmt);
	str_vfmt_cut(text, sizeof text, fmt, ap);
	va_end(ap);
	if (s->logs)
		json_array_append_new(s->logs, json_pack("[i, s]", (int)level, text));
}

int ghs_oom(struct err *e)
{
	return err_set(e, ERR_INTERNAL, "out of memory");
}

const char *ghs_opt(struct gh_step *s, const char *key)
{
	json_t *v = json_object_get(s->in, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

int ghs_need(struct gh_step *s, const char *key, const char **out, struct err *e)
{
	if (!(*out = ghs_opt(s, key)))
		return err_set(e, ERR_INVALID, "Mandatory parameter '%s' is required", key);
	return 0;
}

/* A mandatory number (an integer or a string of digits). */
int ghs_need_int(struct gh_step *s, const char *key, long long *out, struct err *e)
{
	json_t *v = json_object_get(s->in, key);
	int64_t n;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v) && str_to_i64((struct str){json_string_value(v), json_string_length(v)}, 0, INT64_MAX, &n,
					    key, &(struct err){0}) == 0) {
		*out = n;
		return 0;
	}
	return err_set(e, ERR_INVALID, "Mandatory parameter '%s' must be a number", key);
}

/* path (printf-style) below /repos/<org>/<repo> into buf. */
const char *ghs_at(struct gh_step *s, char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(s->repo);
	str_fmt_cut(buf, cap, "%s", s->repo);
	va_start(ap, fmt);
	str_vfmt_cut(buf + n, cap > n ? cap - n : 0, fmt, ap);
	va_end(ap);
	return buf;
}

static json_t *ok(json_t *r)
{
	if (r)
		json_object_set_new(r, "ok", json_true());
	return r;
}

int ghs_done(json_t **out, json_t *r, struct err *e)
{
	return (*out = ok(r)) ? 0 : ghs_oom(e);
}

int ghs_call(struct gh_step *s, const char *method, const char *path, json_t *body, json_t **resp,
	     struct err *e)
{
	int rc = gh_call(&s->g, method, path, body, resp, NULL, e);
	json_decref(body);
	s->api_failed |= rc < 0;
	return rc;
}

int ghs_list(struct gh_step *s, const char *path, json_t **out, struct err *e)
{
	int rc = gh_list(&s->g, path, out, e);
	s->api_failed |= rc < 0;
	return rc;
}

/* A call whose answer is not needed. */
int ghs_fire(struct gh_step *s, const char *method, const char *path, json_t *body, struct err *e)
{
	json_t *r = NULL;
	int rc = ghs_call(s, method, path, body, &r, e);
	json_decref(r);
	return rc;
}

