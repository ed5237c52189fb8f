/* The entity rules, checked where entities are written (auth/entity_policy.h). */
#include "auth/entity_policy.h"

#include "base/log.h"
#include "policy/policy.h"
#include "store/ldap_groups.h"
#include "store/policies.h"
#include "store/process_logs.h"

/* The owner of an entity who writes, as Concord's entity rules see it. */
static json_t *owner_of(struct store_conn *c, const struct principal *who)
{
	const struct user *u = &who->user;
	json_t *groups = NULL;
	struct err ignored;

	if (store_user_ldap_groups_json(c, u->id, &groups, &ignored) || !groups)
		groups = json_array();
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "id", u->id, "username", u->username, "userType",
			 u->type[0] ? u->type : "LOCAL", "email", u->email, "displayName", u->display_name, "groups",
			 groups);
}

static void warn(struct store_conn *c, const struct principal *who, const char *policy, const json_t *rule,
		 const char *kind, const char *action)
{
	struct err w, e;

	policy_refuse(&w, ERR_FORBIDDEN, policy, rule, "Potentially restricted {0} ({1})", kind, action);
	if (who->method == AUTH_SESSION && who->session_process[0]) {
		if (store_process_log_line(c, who->session_process, "WARN", w.msg, &e) == 0)
			return;
		LOG_E("process %s: cannot append to its log: %s", who->session_process, e.msg);
	}
	LOG_W("entity policy: %s %s by %s: %s", action, kind, who->user.username, w.msg);
}

/* The check; a warn match is logged when log. */
static int check(struct store_conn *c, const struct principal *who, const char *org_id, const char *project_id,
		 const char *kind, const char *action, const json_t *attrs, bool log, struct err *e)
{
	struct policy_place at = {org_id, project_id, who->user.id[0] ? who->user.id : NULL};
	char name[POLICY_NAME_MAX + 1];
	json_t *rules = NULL, *subject;
	const json_t *rule;
	int rc = 0;

	if (store_policy_effective(c, &at, &rules, name, e))
		return -1;
	if (!json_object_get(rules, "entity")) {
		json_decref(rules);
		return 0;
	}
	subject = json_pack("{s:o, s:O}", "owner", owner_of(c, who), "entity", attrs ? attrs : json_object());
	if (!subject)
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	else
		switch (policy_entity_check(rules, kind, action, subject, &rule)) {
		case POLICY_DENY:
			rc = policy_refuse(e, ERR_FORBIDDEN, name, rule, "Action '{1}' on entity '{0}' is forbidden",
					   kind, action);
			break;
		case POLICY_WARN:
			if (log)
				warn(c, who, name, rule, kind, action);
			break;
		default:
			break;
		}
	json_decref(subject);
	json_decref(rules);
	return rc;
}

int entity_policy_check(struct store_conn *c, const struct principal *who, const char *org_id,
			const char *project_id, const char *kind, const char *action, const json_t *attrs,
			struct err *e)
{
	return check(c, who, org_id, project_id, kind, action, attrs, true, e);
}

int entity_policy_allows(struct store_conn *c, const struct principal *who, const char *org_id, const char *kind,
			 const json_t *attrs, bool *allowed, struct err *e)
{
	int rc = check(c, who, org_id, NULL, kind, "create", attrs, false, e);

	*allowed = rc == 0;
	return rc == -ERR_FORBIDDEN ? 0 : rc;
}

int entity_policy_secret(struct store_conn *c, const struct principal *who, const struct secret *s,
			 const char *project_id, bool update, struct err *e)
{
	json_t *attrs = json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", s->name, "orgId", s->org_id, "type",
				  secret_type_name(s->type), "visibility", s->is_public ? "PUBLIC" : "PRIVATE",
				  "storeType", s->store_type[0] ? s->store_type : "concord");
	int rc;

	if (!attrs)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = entity_policy_check(c, who, s->org_id, project_id, "secret", update ? "update" : "create", attrs, e);
	json_decref(attrs);
	return rc;
}
