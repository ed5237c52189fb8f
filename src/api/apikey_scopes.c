/* The scopes and rate limit of a new API key (apikey_scopes.h). */
#include "api/apikey_scopes.h"

#include <stdlib.h>
#include <string.h>

#include "auth/rbac.h"
#include "auth/rbac_start.h"
#include "base/buf.h"
#include "base/jsonx.h"
#include "auth/ratelimit.h"
#include "auth/scope.h"
#include "base/str.h"
#include "store/orgs.h"
#include "store/projects.h"

/* The org (and project) a scope is narrowed to, as ids; the key's user must see them. */
static int resolve(struct api_call *c, const struct principal *owner, struct scope *s, const char *org_name,
		   const char *project_name)
{
	struct org o;
	struct project pr;
	struct rbac_resource res;
	struct err e;

	if (!org_name[0])
		return 0;
	if (store_org_find(c->db, org_name, &o, &e) || rbac_org(c->db, owner, &o, RBAC_ORG_VIEW, &e))
		return api_fail(c, ERR_INVALID, "Invalid scope '%s': organization not found: %.128s", s->text,
				org_name);
	memcpy(s->org_id, o.id, sizeof s->org_id);
	if (!project_name[0])
		return 0;
	if (store_project_find(c->db, o.id, project_name, &pr, &e))
		return api_fail(c, ERR_INVALID, "Invalid scope '%s': project not found: %.128s", s->text, project_name);
	res = rbac_project_res(&pr);
	if (rbac_check(c->db, owner, &res, ACCESS_READER, &e))
		return api_fail(c, ERR_INVALID, "Invalid scope '%s': project not found: %.128s", s->text, project_name);
	memcpy(s->project_id, pr.id, sizeof s->project_id);
	return 0;
}

/* A caller using a scoped key hands on only what one of its own scopes covers. */
static int within_caller(struct api_call *c, const struct scope *s)
{
	if (c->who.method != AUTH_APIKEY || !c->who.scopes.n)
		return 0;
	for (size_t i = 0; i < c->who.scopes.n; i++)
		if (scope_covers(&c->who.scopes.s[i], s))
			return 0;
	return api_fail(c, ERR_FORBIDDEN, "Not allowed: the scope '%s' exceeds the scopes of the API key in use",
			s->text);
}

static int parse_scopes(struct api_call *c, json_t *arr, const struct user *u, struct scope_set *set)
{
	struct principal *owner = calloc(1, sizeof *owner);
	char org[SCOPE_TEXT_MAX], project[SCOPE_TEXT_MAX];
	size_t i;
	json_t *v;
	int rc = 0;

	if (!owner)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	owner->user = *u;
	owner->method = AUTH_APIKEY;
	if (!json_is_array(arr) || json_array_size(arr) == 0 || json_array_size(arr) > SCOPE_MAX)
		rc = api_fail(c, ERR_INVALID, "'scopes' must be a list of 1 to %d scopes such as \"process:start\"",
			      SCOPE_MAX);
	json_array_foreach(arr, i, v)
	{
		if (rc)
			break;
		if (!json_is_string(v)) {
			rc = api_fail(c, ERR_INVALID, "'scopes' must hold strings such as \"process:read@Default\"");
			break;
		}
		if (scope_parse(json_string_value(v), &set->s[i], org, project, sizeof org, &c->err)) {
			rc = -ERR_INVALID;
			break;
		}
		if ((rc = resolve(c, owner, &set->s[i], org, project)) || (rc = within_caller(c, &set->s[i])))
			break;
		set->n = i + 1;
	}
	free(owner);
	return rc;
}

/* A rate-limited caller's new key is limited at least as tightly. */
static int rate_within_caller(struct api_call *c, const struct apikey *k)
{
	if (c->who.method != AUTH_APIKEY || !c->who.rate_count)
		return 0;
	if (k->rate_count && k->rate_count * c->who.rate_window_ms <= c->who.rate_count * k->rate_window_ms)
		return 0;
	return api_fail(c, ERR_FORBIDDEN,
			"Not allowed: the API key in use has a rate limit, a key it creates needs one no looser");
}

int api_apikey_scopes(struct api_call *c, json_t *body, const struct user *u, struct apikey *k)
{
	json_t *scopes = json_object_get(body, "scopes");
	const char *rate = NULL;
	struct scope_set *set;
	char *text;
	int rc;

	if (jsonx_str(body, "rateLimit", false, &rate, &c->err))
		return -ERR_INVALID;
	if (rate && ratelimit_parse(rate, &k->rate_count, &k->rate_window_ms, &c->err))
		return -ERR_INVALID;
	if ((rc = rate_within_caller(c, k)))
		return rc;
	if (!scopes || json_is_null(scopes)) {
		if (c->who.method == AUTH_APIKEY && c->who.scopes.n)
			return api_fail(
			    c, ERR_FORBIDDEN,
			    "Not allowed: the API key in use has scopes, a key it creates needs 'scopes' too");
		return 0;
	}
	if (!(set = calloc(1, sizeof *set)))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	if ((rc = parse_scopes(c, scopes, u, set)) == 0) {
		text = scope_set_dump(set);
		if (!text || str_fmt(k->scopes, sizeof k->scopes, "%s", text))
			rc = api_fail(c, ERR_INVALID, "'scopes' are too long");
		free(text);
	}
	free(set);
	return rc;
}

void api_apikey_scopes_audit(struct api_call *c, const struct apikey *k)
{
	json_t *v = json_object(), *arr;
	struct buf text;

	buf_init(&text, SCOPE_MAX * SCOPE_TEXT_MAX);
	api_apikey_scopes_json(k, v);
	if ((arr = json_object_get(v, "scopes"))) {
		for (size_t i = 0; i < json_array_size(arr); i++)
			if (buf_printf(&text, NULL, "%s%s", i ? "," : "", json_string_value(json_array_get(arr, i))))
				break;
		if (text.len)
			api_audit_note(c, "scopes", text.data);
	}
	if (json_object_get(v, "rateLimit"))
		api_audit_note(c, "rateLimit", json_string_value(json_object_get(v, "rateLimit")));
	buf_cleanup(&text);
	json_decref(v);
}

void api_apikey_scopes_json(const struct apikey *k, json_t *v)
{
	struct scope_set *set;
	json_t *arr;
	char rate[32];

	if (k->rate_count) {
		ratelimit_format(k->rate_count, k->rate_window_ms, rate, sizeof rate);
		json_object_set_new(v, "rateLimit", json_string(rate));
	}
	if (!k->scopes[0] || !(set = calloc(1, sizeof *set)))
		return;
	if (scope_set_load(k->scopes, set, NULL) == 0) {
		arr = json_array();
		for (size_t i = 0; i < set->n; i++)
			json_array_append_new(arr, json_string(set->s[i].text));
		json_object_set_new(v, "scopes", arr);
	}
	free(set);
}
