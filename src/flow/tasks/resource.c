#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"
#include "flow/yaml.h"
#include "flow/yaml_dump.h"

#define RESOURCE_MAX (64u * 1024 * 1024)

static char *read_text(struct task_ctx *c, json_t *args, size_t *len, struct err *e)
{
	const char *p;
	if (task_arg_str(args, 0, "path", &p, e) < 0)
		return NULL;
	return path_read_beneath(c->h->workdir, p, RESOURCE_MAX, len, e);
}

static int maybe_eval(struct task_ctx *c, json_t *args, size_t i, json_t **v, struct err *e)
{
	struct scope sc;
	struct el_env env;
	json_t *r = NULL;
	int rc;
	if (!json_is_true(json_array_get(args, i)))
		return 0;
	scope_init(&sc, c->vm, c->t);
	scope_env(&sc, &env);
	rc = el_json_eval_value(*v, EL_JSON_KEYS, &env, &r, e);
	scope_cleanup(&sc);
	if (rc < 0)
		return -1;
	json_decref(*v);
	*v = r;
	return 0;
}

static json_t *parse_json(const char *s, size_t len, struct err *e)
{
	return jsonx_parse(s, len, JSONX_DEPTH_JANSSON, e);
}

static json_t *parse_yaml(const char *s, size_t len, struct err *e)
{
	struct ydoc d;
	json_t *v = NULL;
	if (ydoc_parse(&d, "resource", s, len, e) == 0)
		v = d.root ? ynode_to_json(d.root) : json_null();
	ydoc_cleanup(&d);
	return v;
}

static int m_as_string(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	size_t len;
	char *data = read_text(c, args, &len, e);
	if (!data)
		return -1;
	*out = json_stringn(data, len);
	free(data);
	return *out ? 0 : err_set(e, ERR_INVALID, "the file is not UTF-8 text");
}

static int as_parsed(struct task_ctx *c, json_t *args, json_t **out, bool yaml, bool from_file, struct err *e)
{
	size_t len;
	const char *s = NULL;
	char *data = NULL;
	if (from_file)
		data = read_text(c, args, &len, e);
	else if (task_arg_str(args, 0, "value", &s, e) == 0)
		len = strlen(s);
	if (!data && !s)
		return -1;
	*out = yaml ? parse_yaml(data ? data : s, len, e) : parse_json(data ? data : s, len, e);
	free(data);
	if (!*out)
		return -1;
	return maybe_eval(c, args, 1, out, e);
}

static int m_as_json(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return as_parsed(c, args, out, false, true, e);
}
static int m_as_yaml(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return as_parsed(c, args, out, true, true, e);
}
static int m_from_json(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return as_parsed(c, args, out, false, false, e);
}
static int m_from_yaml(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return as_parsed(c, args, out, true, false, e);
}

/* Jackson's default pretty printer: `"k" : v`, arrays inline `[ 1, 2 ]`. */
static int pretty(struct buf *b, const json_t *v, int ind, struct err *e)
{
	const char *k;
	json_t *x;
	size_t i, n = 0;
	char *s;
	int rc;
	if (ind > 256)
		return err_set(e, ERR_LIMIT, "value nests too deeply");
	if (json_is_object(v)) {
		if (json_object_size(v) == 0)
			return buf_append_str(b, "{ }", e);
		if (buf_append_str(b, "{\n", e) < 0)
			return -1;
		json_object_foreach((json_t *)v, k, x)
		{
			json_t *key = json_string(k);
			s = json_dumps(key, JSON_ENCODE_ANY);
			json_decref(key);
			rc = buf_printf(b, e, "%s%*s%s : ", n++ ? ",\n" : "", (ind + 1) * 2, "", s ? s : "\"\"");
			free(s);
			if (rc < 0 || pretty(b, x, ind + 1, e) < 0)
				return -1;
		}
		return buf_printf(b, e, "\n%*s}", ind * 2, "");
	}
	if (json_is_array(v)) {
		if (json_array_size(v) == 0)
			return buf_append_str(b, "[ ]", e);
		if (buf_append_str(b, "[ ", e) < 0)
			return -1;
		json_array_foreach((json_t *)v, i,
				   x) if ((i && buf_append_str(b, ", ", e) < 0) || pretty(b, x, ind, e) < 0) return -1;
		return buf_append_str(b, " ]", e);
	}
	s = json_dumps(v, JSON_ENCODE_ANY);
	rc = buf_append_str(b, s ? s : "null", e);
	free(s);
	return rc;
}

static int m_pretty(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	struct buf b;
	(void)c;
	buf_init(&b, 0);
	if (pretty(&b, json_array_get(args, 0), 0, e) < 0) {
		buf_cleanup(&b);
		return -1;
	}
	*out = json_string(b.data);
	buf_cleanup(&b);
	return 0;
}

static int m_print(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	char *s = json_dumps(json_array_get(args, 0), JSON_ENCODE_ANY | JSON_COMPACT);
	(void)c;
	if (!s)
		return oom_fail(e);
	*out = json_string(s);
	free(s);
	return 0;
}

static int write_as(struct task_ctx *c, json_t *args, json_t **out, const char *ext, struct err *e)
{
	json_t *v = json_array_get(args, 0);
	const char *p = json_string_value(json_array_get(args, 1));
	char *text, *full = NULL, name[64], u[UUID_STR_LEN];
	int rc;
	if (strcmp(ext, "txt") == 0)
		text = task_text(v);
	else if (strcmp(ext, "yaml") == 0)
		text = yaml_dump_text(v);
	else
		text = json_dumps(v, JSON_ENCODE_ANY | JSON_INDENT(2));
	if (!text)
		return oom_fail(e);
	uuid_v4(u);
	if (str_fmt(name, sizeof name, ".concord_tmp/resource_%s.%s", u, ext)) {
		free(text);
		return err_set(e, ERR_INTERNAL, "temporary file name too long");
	}
	rc = p ? 0 : path_mkdirs_beneath(c->h->workdir, ".concord_tmp", 0700, e);
	if (rc == 0)
		rc = path_write_beneath(c->h->workdir, p ? p : name, text, strlen(text), 0600, e);
	if (rc == 0 && !(full = path_abs_beneath(c->h->workdir, p ? p : name, e)))
		rc = -1;
	if (rc == 0)
		*out = json_string(full);
	free(full);
	free(text);
	return rc;
}

static int m_write_json(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return write_as(c, args, out, "json", e);
}
static int m_write_string(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return write_as(c, args, out, "txt", e);
}
static int m_write_yaml(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return write_as(c, args, out, "yaml", e);
}

static const struct task_method methods[] = {{"asString", m_as_string, 1, 1},
					     {"asJson", m_as_json, 1, 2},
					     {"asYaml", m_as_yaml, 1, 2},
					     {"fromJsonString", m_from_json, 1, 2},
					     {"fromYamlString", m_from_yaml, 1, 2},
					     {"writeAsJson", m_write_json, 1, 2},
					     {"writeAsString", m_write_string, 1, 2},
					     {"writeAsYaml", m_write_yaml, 1, 2},
					     {"prettyPrintJson", m_pretty, 1, 1},
					     {"printJson", m_print, 1, 1},
					     {NULL, NULL, 0, 0}};

const struct task_def task_resource = {"resource", NULL, methods, false, false};
