/* The policy rules on triggers (docs/security.md "Policies"), checked when a repository's
 * triggers are read: cronTrigger.minInterval (a cron trigger that would fire more often is
 * refused) and entity rules of kind trigger. */
#include <inttypes.h>
#include <string.h>

#include "base/log.h"
#include "base/str.h"
#include "policy/policy.h"
#include "store/policies.h"
#include "triggers/internal.h"

#define FIRES_SAMPLED 64 /* consecutive fires whose shortest gap is the interval */

/* The shortest gap in seconds between the next FIRES_SAMPLED fires of cfg after now. */
static int shortest_gap(const json_t *cfg, int64_t now_ms, int64_t *gap_s, struct err *e)
{
	int64_t at = now_ms, next;

	*gap_s = INT64_MAX;
	if (triggers_cron_next(cfg, at, &at, e))
		return -1;
	for (int i = 0; i < FIRES_SAMPLED && at > 0; i++, at = next) {
		if (triggers_cron_next(cfg, at, &next, e))
			return -1;
		if (next <= at)
			break;
		if ((next - at) / 1000 < *gap_s)
			*gap_s = (next - at) / 1000;
	}
	return 0;
}

/* Entity rules of kind trigger, action create: {"entity": {eventSource, orgId, params (its
 * conditions)}, "owner": {}} (a trigger is read from a repository, no one's request). */
static int entity_check(const json_t *rules, const char *name, const struct repository *r, const struct trigger *t,
			struct err *e)
{
	json_t *subject;
	const json_t *rule;
	int rc = 0;

	if (!json_object_get(rules, "entity"))
		return 0;
	subject = json_pack("{s:{}, s:{s:s, s:s, s:O}}", "owner", "entity", "eventSource", t->event_source, "orgId",
			    r->org_id, "params", t->conditions ? t->conditions : json_object());
	switch (subject ? policy_entity_check(rules, "trigger", "create", subject, &rule) : POLICY_PASS) {
	case POLICY_DENY:
		rc = policy_refuse(e, ERR_INVALID, name, rule, "A {0} trigger is forbidden", t->event_source, NULL);
		break;
	case POLICY_WARN: { /* no one's request: the server's log (auth/entity_policy.h) */
		struct err w;
		policy_refuse(&w, ERR_INVALID, name, rule, "Potentially restricted {0} trigger", t->event_source, NULL);
		LOG_W("entity policy: repository %s of project %s: %s", r->name, r->project_id, w.msg);
		break;
	}
	default:
		break;
	}
	json_decref(subject);
	return rc;
}

int triggers_cron_policy(struct store_conn *c, const struct repository *r, const struct trigger *v, size_t n,
			 int64_t now_ms, struct err *e)
{
	struct policy_place at = {r->org_id, r->project_id, NULL};
	char name[POLICY_NAME_MAX + 1], b[24];
	json_t *rules = NULL;
	const json_t *rule;
	int64_t min, gap;
	int rc = 0;

	if (store_policy_effective(c, &at, &rules, name, e))
		return -1;
	for (size_t i = 0; rules && i < n && rc == 0; i++)
		rc = entity_check(rules, name, r, &v[i], e);
	rule = json_object_get(rules, "cronTrigger");
	min = policy_number(json_object_get(rule, "minInterval"));
	for (size_t i = 0; min > 0 && i < n && rc == 0; i++) {
		if (strcmp(v[i].event_source, "cron") != 0 || (rc = shortest_gap(v[i].cfg, now_ms, &gap, e)))
			continue;
		if (gap >= min)
			continue;
		str_fmt_cut(b, sizeof b, "%" PRId64, min);
		rc = policy_refuse(e, ERR_INVALID, name, rule,
				   "Cron trigger '{0}' fires more often than the minimum interval of {1} second(s)",
				   json_string_value(json_object_get(v[i].cfg, "spec")), b);
	}
	json_decref(rules);
	return rc;
}
