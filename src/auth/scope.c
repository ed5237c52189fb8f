/* The scope vocabulary of API keys and its rules (scope.h). */
#include "auth/scope.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/str.h"

static const struct {
	const char *name;
	enum scope_reach reach;
} resources[SCOPE_RES__COUNT] = {
    [SCOPE_ORG] = {"org", SCOPE_REACH_ORG},
    [SCOPE_TEAM] = {"team", SCOPE_REACH_ORG},
    [SCOPE_PROJECT] = {"project", SCOPE_REACH_PROJECT},
    [SCOPE_REPOSITORY] = {"repository", SCOPE_REACH_PROJECT},
    [SCOPE_SECRET] = {"secret", SCOPE_REACH_ORG},
    [SCOPE_INVENTORY] = {"inventory", SCOPE_REACH_ORG},
    [SCOPE_JSONSTORE] = {"jsonstore", SCOPE_REACH_ORG},
    [SCOPE_PROCESS] = {"process", SCOPE_REACH_PROJECT},
    [SCOPE_TRIGGER] = {"trigger", SCOPE_REACH_PROJECT},
    [SCOPE_USER] = {"user", SCOPE_REACH_NONE},
    [SCOPE_APIKEY] = {"apikey", SCOPE_REACH_NONE},
    [SCOPE_AUDIT] = {"audit", SCOPE_REACH_NONE},
};

static const char *const actions[SCOPE_ACT__COUNT] = {
    [SCOPE_READ] = "read", [SCOPE_WRITE] = "write", [SCOPE_START] = "start", [SCOPE_ANY] = "*"};

const char *scope_resource_name(enum scope_resource r)
{
	return r < SCOPE_RES__COUNT ? resources[r].name : "?";
}

const char *scope_action_name(enum scope_action a)
{
	return a < SCOPE_ACT__COUNT ? actions[a] : "?";
}

static int lookup(struct str s, const char *const *names, size_t stride, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (str_eq_cstr(s, *(const char *const *)((const char *)names + i * stride)))
			return (int)i;
	return -1;
}

static int copy_name(struct str s, char *out, size_t cap, const char *text, const char *what, struct err *e)
{
	if (!s.len || s.len >= cap || memchr(s.p, '/', s.len) || memchr(s.p, '@', s.len))
		return err_set(e, ERR_INVALID, "Invalid scope '%.200s': a bad %s name", text, what);
	memcpy(out, s.p, s.len);
	out[s.len] = '\0';
	return 0;
}

/* The narrowing "@org" or "@org/project" after the action. */
static int parse_reach(const char *text, struct str at, enum scope_reach reach, char *org, char *project, size_t cap,
		       struct err *e)
{
	const char *slash = memchr(at.p, '/', at.len);
	struct str o = at, p = {0};

	if (slash) {
		o.len = (size_t)(slash - at.p);
		p = (struct str){slash + 1, at.len - o.len - 1};
	}
	if (reach == SCOPE_REACH_NONE)
		return err_set(e, ERR_INVALID, "Invalid scope '%.200s': this resource cannot be narrowed to an org",
			       text);
	if (slash && reach != SCOPE_REACH_PROJECT)
		return err_set(e, ERR_INVALID,
			       "Invalid scope '%.200s': this resource can be narrowed to an org only (@org)", text);
	if (copy_name(o, org, cap, text, "org", e))
		return -ERR_INVALID;
	if (slash && copy_name(p, project, cap, text, "project", e))
		return -ERR_INVALID;
	return 0;
}

int scope_parse(const char *text, struct scope *out, char *org, char *project, size_t cap, struct err *e)
{
	struct str s = str_from(text), res, act, at = {0};
	const char *colon, *amp;
	int r, a;

	memset(out, 0, sizeof *out);
	org[0] = project[0] = '\0';
	if (s.len == 0 || s.len >= SCOPE_TEXT_MAX)
		return err_set(e, ERR_INVALID, "Invalid scope '%.200s': expected resource:action[@org[/project]]",
			       text);
	memcpy(out->text, text, s.len + 1);
	if (!(colon = memchr(s.p, ':', s.len)))
		return err_set(e, ERR_INVALID, "Invalid scope '%.200s': expected resource:action[@org[/project]]",
			       text);
	res = (struct str){s.p, (size_t)(colon - s.p)};
	act = (struct str){colon + 1, s.len - res.len - 1};
	if ((amp = memchr(act.p, '@', act.len))) {
		at = (struct str){amp + 1, act.len - (size_t)(amp - act.p) - 1};
		act.len = (size_t)(amp - act.p);
	}
	if ((r = lookup(res, &resources[0].name, sizeof resources[0], SCOPE_RES__COUNT)) < 0)
		return err_set(
		    e, ERR_INVALID,
		    "Invalid scope '%.200s': unknown resource (one of org, team, project, repository, secret, "
		    "inventory, jsonstore, process, trigger, user, apikey, audit)",
		    text);
	if ((a = lookup(act, actions, sizeof actions[0], SCOPE_ACT__COUNT)) < 0)
		return err_set(e, ERR_INVALID, "Invalid scope '%.200s': unknown action (read, write, start or *)",
			       text);
	if (a == SCOPE_START && r != SCOPE_PROCESS)
		return err_set(e, ERR_INVALID, "Invalid scope '%.200s': only processes have the action start", text);
	out->resource = (enum scope_resource)r;
	out->action = (enum scope_action)a;
	if (amp)
		return parse_reach(text, at, resources[r].reach, org, project, cap, e);
	return 0;
}

char *scope_set_dump(const struct scope_set *set)
{
	json_t *arr;
	char *text;

	if (!set->n || !(arr = json_array()))
		return NULL;
	for (size_t i = 0; i < set->n; i++) {
		const struct scope *s = &set->s[i];
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s}", "scope", s->text, "resource",
						     resources[s->resource].name, "action", actions[s->action], "orgId",
						     s->org_id, "projectId", s->project_id));
	}
	text = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return text;
}

static int load_one(json_t *v, struct scope *s)
{
	const char *text = json_string_value(json_object_get(v, "scope"));
	const char *res = json_string_value(json_object_get(v, "resource"));
	const char *act = json_string_value(json_object_get(v, "action"));
	const char *org = json_string_value(json_object_get(v, "orgId"));
	const char *project = json_string_value(json_object_get(v, "projectId"));
	int r, a;

	if (!text || !res || !act || !org || !project)
		return -1;
	r = lookup(str_from(res), &resources[0].name, sizeof resources[0], SCOPE_RES__COUNT);
	a = lookup(str_from(act), actions, sizeof actions[0], SCOPE_ACT__COUNT);
	if (r < 0 || a < 0 || str_fmt(s->text, sizeof s->text, "%s", text) ||
	    str_fmt(s->org_id, sizeof s->org_id, "%s", org) ||
	    str_fmt(s->project_id, sizeof s->project_id, "%s", project))
		return -1;
	s->resource = (enum scope_resource)r;
	s->action = (enum scope_action)a;
	return 0;
}

int scope_set_load(const char *stored, struct scope_set *out, struct err *e)
{
	json_t *arr;
	int rc = 0;

	out->n = 0;
	if (!stored || !*stored)
		return 0;
	arr = json_loads(stored, 0, NULL);
	if (!json_is_array(arr) || json_array_size(arr) > SCOPE_MAX)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < json_array_size(arr); i++)
		if ((rc = load_one(json_array_get(arr, i), &out->s[i])) == 0)
			out->n = i + 1;
	json_decref(arr);
	if (rc) {
		out->n = 0;
		return err_set(e, ERR_INTERNAL, "stored API key scopes are not valid");
	}
	return 0;
}

static bool allows(const struct scope *s, enum scope_resource r, enum scope_action a)
{
	return s->resource == r && (s->action == SCOPE_ANY || s->action == a);
}

bool scope_covers(const struct scope *have, const struct scope *want)
{
	if (have->resource != want->resource || (have->action != SCOPE_ANY && have->action != want->action))
		return false;
	if (!have->org_id[0])
		return true;
	if (strcmp(have->org_id, want->org_id) != 0)
		return false;
	return !have->project_id[0] || strcmp(have->project_id, want->project_id) == 0;
}

const struct scope *scope_find(const struct scope_set *set, const struct scope_need *need)
{
	for (size_t i = 0; i < set->n; i++)
		if (allows(&set->s[i], need->resource, need->action))
			return &set->s[i];
	return NULL;
}

static bool reaches(const struct scope *s, enum scope_at at, const char *org_id, const char *project_id)
{
	if (!s->org_id[0])
		return true;
	if (!org_id || strcmp(s->org_id, org_id) != 0)
		return false;
	if (!s->project_id[0] || at == SCOPE_AT_ORG_VIEW)
		return true;
	return at == SCOPE_AT_PROJECT && project_id && strcmp(s->project_id, project_id) == 0;
}

bool scope_reaches(const struct scope_set *set, const struct scope_need *need, enum scope_at at, const char *org_id,
		   const char *project_id, const char *what, struct err *e)
{
	const struct scope *first = NULL;

	if (!set->n || !need->set)
		return true;
	for (size_t i = 0; i < set->n; i++) {
		const struct scope *s = &set->s[i];
		if (!allows(s, need->resource, need->action))
			continue;
		if (reaches(s, at, org_id, project_id))
			return true;
		if (!first)
			first = s;
	}
	err_set(e, ERR_FORBIDDEN, "This API key's scope %s does not reach the %s", first ? first->text : "(none)",
		what);
	return false;
}

bool scope_narrowed(const struct scope_set *set, const struct scope_need *need, bool project_only)
{
	bool any = false;

	for (size_t i = 0; i < set->n; i++) {
		if (!allows(&set->s[i], need->resource, need->action))
			continue;
		if (!set->s[i].org_id[0] || (project_only && !set->s[i].project_id[0]))
			return false;
		any = true;
	}
	return any;
}
