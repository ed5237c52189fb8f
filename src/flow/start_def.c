/* What a start takes from its definition (start_def.h). */
#include "flow/start_def.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/duration.h"
#include "base/oom.h"

/* A request or configuration value that counts as true (a JSON true or the text "true"). */
static bool truthy(json_t *v)
{
	return json_is_true(v) || (json_is_string(v) && strcmp(json_string_value(v), "true") == 0);
}

/* cfg first, then the definition's configuration, then the org's and project's cfg. */
static json_t *setting(const struct model *m, json_t *cfg, const char *key)
{
	json_t *v = json_object_get(cfg, key);
	if (v && !json_is_null(v))
		return v;
	v = json_object_get(m->configuration, key);
	if (v && !json_is_null(v))
		return v;
	return json_object_get(json_object_get(cfg, START_DEF_ORG_PROJECT_CFG), key);
}

static int timeout(const struct model *m, json_t *cfg, const char *key, int64_t given, int64_t *out, struct err *e)
{
	json_t *v;

	*out = given > 0 ? given : 0;
	if (given >= 0)
		return 0;
	v = setting(m, cfg, key);
	if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
		return 0;
	return duration_json(v, key, out, e);
}

static json_t *handler_flows(const struct model *m, json_t *cfg)
{
	static const char *const FLOWS[][2] = {
	    {"onFailure", "disableOnFailure"}, {"onCancel", "disableOnCancel"}, {"onTimeout", "disableOnTimeout"}};
	json_t *out = json_array();

	for (size_t i = 0; out && i < sizeof FLOWS / sizeof FLOWS[0]; i++)
		if (model_flow(m, FLOWS[i][0]) && !truthy(json_object_get(cfg, FLOWS[i][1])) &&
		    !truthy(json_object_get(m->configuration, FLOWS[i][1])))
			json_array_append_new(out, json_string(FLOWS[i][0]));
	return out;
}

/* configuration.exclusive {group, mode}: Concord's default mode is cancel. */
static int exclusive(const struct model *m, json_t *cfg, bool has_project, struct start_def *d, struct err *e)
{
	json_t *x = setting(m, cfg, "exclusive");
	const char *group, *mode;

	if (!x || json_is_null(x))
		return 0;
	group = json_string_value(json_object_get(x, "group"));
	mode = json_object_get(x, "mode") ? json_string_value(json_object_get(x, "mode")) : "cancel";
	if (!json_is_object(x) || !group || !*group || strlen(group) > 128)
		return err_set(e, ERR_INVALID,
			       "Invalid exclusive mode: 'group' must be a non-empty string (at most 128 characters)");
	if (!mode || (strcmp(mode, "cancel") && strcmp(mode, "cancelOld") && strcmp(mode, "wait")))
		return err_set(e, ERR_INVALID, "Invalid exclusive mode: 'mode' must be one of cancel, cancelOld, wait");
	if (!has_project) /* checked as Concord checks it, but a group is a project's */
		return 0;
	d->exclusive_group = group;
	d->exclusive_mode = mode;
	return 0;
}

/* Concord checks the entry point against publicFlows when the definition declares any. */
static bool public_flow(const struct model *m, const char *entry)
{
	json_t *v;
	size_t i;

	if (!json_array_size(m->public_flows))
		return true;
	json_array_foreach(m->public_flows, i,
			   v) if (json_is_string(v) && strcmp(json_string_value(v), entry) == 0) return true;
	return false;
}

json_t *start_def_switch(json_t *cfg, const char *key)
{
	json_t *v = json_object_get(cfg, key);
	return v && !json_is_null(v) ? v : json_object_get(json_object_get(cfg, START_DEF_ORG_PROJECT_CFG), key);
}

/* dryRun: a boolean or the text true/false in any case (Concord's ConfigurationProcessor). */
static int dry_run(json_t *cfg, bool *out, struct err *e)
{
	json_t *v = start_def_switch(cfg, "dryRun");
	const char *s = json_string_value(v);
	char *text;

	*out = json_is_true(v) || (s && strcasecmp(s, "true") == 0);
	if (!v || json_is_null(v) || json_is_boolean(v) || (s && (*out || strcasecmp(s, "false") == 0)))
		return 0;
	text = s ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	err_set(e, ERR_INVALID, "Invalid 'dryRun' mode value type. Expected a boolean value true or false, got: '%.64s'",
		s      ? s
		: text ? text
		       : "?");
	free(text);
	return -1;
}

/* A new map: the org's and project's cfg meta, the definition's over it. */
static json_t *initial_meta(const struct model *m, json_t *cfg)
{
	json_t *meta = json_object(), *inherited = json_object_get(json_object_get(cfg, START_DEF_ORG_PROJECT_CFG), "meta");
	json_t *own = json_object_get(m->configuration, "meta");

	if (meta && ((json_is_object(inherited) && json_object_update(meta, inherited)) ||
		     (json_is_object(own) && json_object_update(meta, own)))) {
		json_decref(meta);
		return NULL;
	}
	return meta;
}

/* "Unknown entry point: 'x' (no such flow in the definition; its entry points: a, b)": the
 * list is cut at about 1 KB. */
static int unknown_entry(const struct model *m, const char *entry, struct err *e)
{
	json_t *names = model_entry_points(m), *v;
	char list[1024] = "";
	size_t i, len = 0;

	json_array_foreach(names, i, v)
	{
		int n = snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", json_string_value(v));
		if (n < 0 || (size_t)n + 8 >= sizeof list - len) { /* room kept for ", …" */
			memcpy(list + len, ", …", sizeof ", …");
			break;
		}
		len += (size_t)n;
	}
	json_decref(names);
	if (!*list)
		return err_set(e, ERR_INVALID, "Unknown entry point: '%.128s' (the definition has no flows)", entry);
	return err_set(e, ERR_INVALID, "Unknown entry point: '%.128s' (no such flow in the definition; its entry points: %s)",
		       entry, list);
}

int start_def_read(const struct model *m, json_t *cfg, int64_t timeout_s, int64_t suspend_timeout_s, bool has_project,
		   struct start_def *out, struct err *e)
{
	json_t *entry = json_object_get(cfg, "entryPoint");

	memset(out, 0, sizeof *out);
	out->entry = json_string_value(entry);
	if (!out->entry || !*out->entry)
		out->entry = json_string_value(json_object_get(m->configuration, "entryPoint"));
	if (!out->entry || !*out->entry)
		out->entry = json_string_value(setting(m, cfg, "entryPoint"));
	if (!out->entry || !*out->entry)
		out->entry = "default";
	if (!public_flow(m, out->entry))
		return err_set(e, ERR_INVALID, "entryPoint '%.128s' is not a public flow", out->entry);
	if (!model_flow(m, out->entry))
		return unknown_entry(m, out->entry, e);
	if (timeout(m, cfg, "processTimeout", timeout_s, &out->timeout_s, e) ||
	    timeout(m, cfg, "suspendTimeout", suspend_timeout_s, &out->suspend_timeout_s, e) ||
	    exclusive(m, cfg, has_project, out, e) || dry_run(cfg, &out->dry_run, e))
		return -1;
	/* the org's and project's cfg meta, the definition's over it (a map: model_top.c
	 * checks it); the request's meta goes over both where the process is created */
	if (!(out->meta = initial_meta(m, cfg)))
		return oom_fail(e);
	out->handlers = handler_flows(m, cfg);
	return out->handlers ? 0 : oom_fail(e);
}

void start_def_cleanup(struct start_def *d)
{
	json_decref(d->handlers);
	d->handlers = NULL;
	json_decref(d->meta);
	d->meta = NULL;
}
