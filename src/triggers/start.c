/* The process of a trigger: the repository's configured branch checked out into a staging
 * folder, _main.json with the trigger's entry point, profiles, arguments (plus `event`) and
 * exclusive group, then the shared staged start (queue/start_staged.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonx.h"
#include "base/log.h"
#include "base/path.h"
#include "flow/value.h"
#include "queue/main_json.h"
#include "queue/start_staged.h"
#include "store/audit.h"
#include "store/orgs.h"
#include "store/projects.h"
#include "triggers/internal.h"

/* exclusive as the trigger gives it: a group name (mode cancel, Concord's default) or
 * {group, mode}; start_def reads it from the start configuration. */
static json_t *exclusive_cfg(const json_t *cfg, const char *group_by_value)
{
	json_t *x = json_object_get(cfg, "exclusive"), *out;

	if (json_is_string(x))
		return json_pack("{s:O}", "group", x);
	if (!json_is_object(x) || !(out = json_deep_copy(x)))
		return NULL;
	/* GitHub triggers: groupBy branch names the group after the event's branch (none: no
	 * group, as Concord). */
	if (json_is_string(json_object_get(out, "groupBy"))) {
		json_object_del(out, "groupBy");
		if (!group_by_value) {
			json_decref(out);
			return NULL;
		}
		json_object_set_new(out, "group", json_string(group_by_value));
	}
	return out;
}

static json_t *main_json(const struct trigger *tr, json_t *event, const char *group_by_value)
{
	json_t *m = json_object(), *args = tr->arguments ? json_deep_copy(tr->arguments) : json_object(), *x;

	json_object_set_new(m, "entryPoint", json_string(tr->entry_point));
	if (tr->active_profiles)
		json_object_set(m, "activeProfiles", tr->active_profiles);
	json_object_set(args, "event", event);
	json_object_set_new(m, "arguments", args);
	if ((x = exclusive_cfg(tr->cfg, group_by_value)))
		json_object_set_new(m, "exclusive", x);
	return m;
}

/* Over the repository's own _main.json, if it has one (Concord's workspace configuration). */
static int write_main(const char *dir, const struct trigger_fire *f, struct err *e)
{
	json_t *m = main_json(f->tr, f->event, f->exclusive_group), *base = main_json_load(dir, e);
	int rc = base ? value_merge(base, m, e) : -1;

	if (rc == 0)
		rc = main_json_save(dir, base, e);
	json_decref(base);
	json_decref(m);
	return rc;
}

/* The process record's triggeredBy: {"trigger": {...}} (Concord's TriggeredByEntry). */
static json_t *triggered_by(const struct trigger_fire *f, const struct repository *r)
{
	json_t *tr =
	    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "id", f->tr->id, "eventSource", f->tr->event_source, "orgName",
		      r->org_name, "projectName", r->project_name, "repositoryId", r->id, "repositoryName", r->name);
	json_t *by = json_pack("{s:o}", "trigger", tr);

	if (f->external_event_id)
		json_object_set_new(by, "externalEventId", json_string(f->external_event_id));
	return by;
}

static int stage(struct triggers *t, struct store_conn *c, const struct trigger_fire *f, const struct repository *r,
		 struct repo_commit *commit, char *dir, size_t cap, struct err *e)
{
	if (!t->cfg.repos)
		return err_set(e, ERR_UNAVAILABLE, "repositories are not available on this server");
	if (repo_prepare(t->cfg.repos, c, r, NULL, f->commit_id, commit, e) ||
	    start_staging_dir(t->cfg.work_dir, "trigger-", dir, cap, e) ||
	    repo_checkout(t->cfg.repos, r, commit, dir, e))
		return -1;
	return write_main(dir, f, e);
}

int triggers_fire(struct triggers *t, struct store_conn *c, const struct trigger_fire *f, char id[UUID_STR_LEN],
		  struct err *e)
{
	struct repository r;
	struct repo_commit commit;
	struct project p;
	struct org o;
	char dir[4096] = "";
	json_t *by = NULL;
	struct err ignored;
	int rc;

	if ((rc = store_repository_get(c, f->tr->repo_id, &r, e)) || (rc = store_project_get(c, r.project_id, &p, e)) ||
	    (rc = store_org_get(c, p.org_id, &o, e)))
		return rc;
	if ((rc = stage(t, c, f, &r, &commit, dir, sizeof dir, e)))
		goto out;
	uuid_v7(id);
	by = triggered_by(f, &r);
	struct staged_start s = {
	    .dir = dir,
	    .instance_id = id,
	    .org = &o,
	    .project = &p,
	    .initiator_id = f->initiator_id,
	    .initiator = f->initiator,
	    .timeout_s = -1,
	    .suspend_timeout_s = -1,
	    .repo = &r,
	    .commit = &commit,
	    .triggered_by = by,
	    .work_dir = t->cfg.work_dir,
	    .repos = t->cfg.repos,
	};
	if ((rc = start_staged(c, t->cfg.session_key, &s, e)) == 0) {
		store_audit_system(c, "START", id, NULL, f->initiator_id, f->initiator, f->tr->event_source);
		queue_wake(t->cfg.queue);
	}
out:
	if (dir[0] && path_remove_tree(dir, &ignored))
		LOG_W("cannot remove %s: %s", dir, ignored.msg);
	json_decref(by);
	return rc;
}
