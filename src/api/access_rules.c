#include "api/access_rules.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonx.h"
#include "store/orgs.h"

struct rule {
	char team_id[UUID_STR_LEN];
	enum access_level level;
};

int access_rules_list(struct api_call *c, const struct rbac_resource *r)
{
	struct access_rule *rules = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	if ((rc = rbac_check(c->db, &c->who, r, ACCESS_READER, &c->err)) ||
	    (rc = store_access_list(c->db, r->type, r->id, &rules, &n, &c->err)))
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s}", "teamId", rules[i].team_id, "orgName",
						     rules[i].org_name, "teamName", rules[i].team_name, "level",
						     access_level_name(rules[i].level)));
	free(rules);
	return api_reply(c, arr);
}

/* The team an entry names: teamId, or teamName (+ orgName, which must be the resource's
 * org).  The team must belong to the resource's org. */
static int entry_team(struct api_call *c, json_t *entry, const struct org *org, struct team *t)
{
	const char *team_id = NULL, *org_name = NULL, *team_name = NULL;
	struct err lookup;
	int rc;

	if (jsonx_str(entry, "teamId", false, &team_id, &c->err) ||
	    jsonx_str(entry, "orgName", false, &org_name, &c->err) ||
	    jsonx_str(entry, "teamName", false, &team_name, &c->err))
		return -ERR_INVALID;
	if (team_id) {
		if (!uuid_valid(team_id, strlen(team_id)))
			return api_fail(c, ERR_INVALID, "'teamId' must be a UUID, got '%.64s'", team_id);
		rc = store_team_get(c->db, team_id, t, &lookup);
	} else {
		if (!team_name)
			return api_fail(c, ERR_INVALID, "'teamId' or 'teamName' is required");
		if (org_name && strcmp(org_name, org->name) != 0)
			return api_fail(c, ERR_INVALID,
					"'orgName' must be the organization of the resource (%s), got '%.128s'",
					org->name, org_name);
		rc = store_team_find(c->db, org->id, team_name, t, &lookup);
	}
	if (rc == -ERR_NOT_FOUND)
		return api_fail(c, ERR_INVALID, "Team not found: %.128s", team_id ? team_id : team_name);
	if (rc) {
		c->err = lookup;
		return rc;
	}
	if (strcmp(t->org_id, org->id) != 0)
		return api_fail(c, ERR_INVALID, "Team %s belongs to another organization than the resource (%s)",
				t->name, org->name);
	return 0;
}

static int parse_entry(struct api_call *c, json_t *entry, const struct org *org, struct rule *out)
{
	const char *level = NULL;
	struct team t;
	int rc;

	if (!json_is_object(entry))
		return api_fail(c, ERR_INVALID, "an access rule must be a JSON object");
	if ((rc = entry_team(c, entry, org, &t)))
		return rc;
	if (jsonx_str(entry, "level", true, &level, &c->err) || access_level_parse(level, &out->level, &c->err))
		return -ERR_INVALID;
	memcpy(out->team_id, t.id, sizeof out->team_id);
	return 0;
}

static int store_rules(struct api_call *c, const struct rbac_resource *r, const struct rule *rules, size_t n,
		       bool replace)
{
	int rc;

	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if (replace)
		rc = store_access_clear(c->db, r->type, r->id, &c->err);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = store_access_upsert(c->db, r->type, r->id, rules[i].team_id, rules[i].level, &c->err);
	if (rc == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc)
		store_tx_rollback(c->db);
	return rc;
}

int access_rules_update(struct api_call *c, const struct rbac_resource *r)
{
	json_t *body = NULL;
	struct rule rule;
	struct org org;
	int rc;

	if ((rc = rbac_check(c->db, &c->who, r, ACCESS_OWNER, &c->err)) ||
	    (rc = store_org_get(c->db, r->org_id, &org, &c->err)) || (rc = api_body_object(c, &body)))
		return rc;
	if ((rc = parse_entry(c, body, &org, &rule)) == 0 && (rc = store_rules(c, r, &rule, 1, false)) == 0)
		rc = api_reply_result(c, "UPDATED", NULL);
	json_decref(body);
	return rc;
}

/* The bulk body: a JSON array; null gets Concord's own message. */
static int rules_body(struct api_call *c, json_t **body)
{
	int rc = http_body_json(c->req, body, &c->err);

	if (rc == 0 && json_is_null(*body)) {
		json_decref(*body);
		*body = NULL;
		return api_fail(c, ERR_INVALID, "List of teams is null.");
	}
	if (rc == 0 && !json_is_array(*body)) {
		json_decref(*body);
		*body = NULL;
		return api_fail(c, ERR_INVALID, "request body must be a JSON array of access rules");
	}
	return rc;
}

int access_rules_replace(struct api_call *c, const struct rbac_resource *r)
{
	json_t *body = NULL, *entry;
	struct rule *rules = NULL;
	struct org org;
	size_t i;
	int rc;

	if ((rc = rbac_check(c->db, &c->who, r, ACCESS_OWNER, &c->err)) ||
	    (rc = store_org_get(c->db, r->org_id, &org, &c->err)) || (rc = rules_body(c, &body)))
		return rc;
	if (json_array_size(body) > 0 && !(rules = calloc(json_array_size(body), sizeof *rules))) {
		rc = api_fail(c, ERR_INTERNAL, "out of memory");
		goto out;
	}
	json_array_foreach(body, i, entry)
	{
		if ((rc = parse_entry(c, entry, &org, &rules[i]))) {
			err_prefix(&c->err, "access rule %zu", i + 1);
			goto out;
		}
	}
	if ((rc = store_rules(c, r, rules, json_array_size(body), true)) == 0)
		rc = api_reply_result(c, "UPDATED", NULL);
out:
	free(rules);
	json_decref(body);
	return rc;
}
