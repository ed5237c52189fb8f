/* Generic events (POST /api/v1/events/{eventSource}): every enabled trigger of that source
 * whose conditions match starts one process, as the caller, in the projects where the
 * caller may start processes (others are skipped without a word: an event does not tell
 * its sender which projects listen to it). */
#include <stdio.h>
#include <string.h>

#include "auth/rbac_start.h"
#include "base/log.h"
#include "store/orgs.h"
#include "store/projects.h"
#include "triggers/internal.h"

/* May the caller start processes in the trigger's project?  Any failure is a "no". */
static bool may_start(struct store_conn *c, const struct principal *who, const struct trigger *tr)
{
	struct project p;
	struct org o;
	struct err e;

	return store_project_get(c, tr->project_id, &p, &e) == 0 && store_org_get(c, p.org_id, &o, &e) == 0 &&
	       rbac_process_start(c, who, &o, &p, false, &e) == 0;
}

static void fire_one(struct triggers *t, struct store_conn *c, const struct principal *who, const struct trigger *tr,
		     json_t *event, json_t *ids)
{
	char id[UUID_STR_LEN];
	struct err e;
	struct trigger_fire f = {
	    .tr = tr,
	    .event = event,
	    .initiator_id = who->user.id,
	    .initiator = who->user.username,
	    .external_event_id = json_string_value(json_object_get(event, "id")),
	};

	if (triggers_fire(t, c, &f, id, &e)) {
		LOG_W("%s trigger %s (repository %s, entry point %s) did not start a process: %s", tr->event_source,
		      tr->id, tr->repo_id, tr->entry_point, e.msg);
		return;
	}
	json_array_append_new(ids, json_string(id));
}

int triggers_event(struct triggers *t, struct store_conn *c, const struct principal *who, const char *event_source,
		   json_t *event, json_t **ids, struct err *e)
{
	struct trigger *v = NULL;
	size_t n = 0;
	int rc;

	/* cron, manual, github and oneops triggers are not started by generic events. */
	if (triggers_is_generic(event_source) && (rc = store_triggers_of_source(c, event_source, &v, &n, e)))
		return rc;
	if (!(*ids = json_array())) {
		store_trigger_free_list(v, n);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		if (triggers_conditions_match(event, v[i].conditions) && may_start(c, who, &v[i]))
			fire_one(t, c, who, &v[i], event, *ids);
	store_trigger_free_list(v, n);
	return 0;
}
