/* At server start, the triggers of every repository are read again from its definition
 * (issue 13: "on create, update and refresh, and at server start"), so a trigger edited
 * in git while the server was down, or a node whose clone is missing, is brought up to
 * date.  It runs in its own thread beside the scheduler, which meanwhile fires the stored
 * triggers: a slow or failing remote delays nothing else, and a repository that cannot
 * be read keeps its stored triggers (one log line says why). */
#include <stdlib.h>

#include "base/log.h"
#include "repo/repo.h"
#include "store/repositories.h"
#include "triggers/internal.h"

int triggers_reread(struct triggers *t, struct store_conn *c, const struct repository *r, struct err *e)
{
	struct repo_commit commit;
	struct model *m = NULL;
	int rc;

	if (!t->cfg.repos)
		return err_set(e, ERR_UNAVAILABLE, "repositories are not available on this server");
	rc = repo_fetch_for(t->cfg.repos, c, r, NULL, 0, &commit, e) ||
			     repo_load_definition(t->cfg.repos, r, &commit, &m, e) || triggers_refresh(t, c, r, m, e)
		 ? -1
		 : 0;
	model_free(m);
	return rc;
}

static void reread_one(struct triggers *t, struct store_conn *c, const struct repository *r)
{
	struct repo_commit commit;
	struct model *m = NULL;
	struct err e;

	if (repo_prepare(t->cfg.repos, c, r, NULL, NULL, &commit, &e) ||
	    repo_load_definition(t->cfg.repos, r, &commit, &m, &e) || triggers_refresh(t, c, r, m, &e))
		LOG_W("triggers of repository %s (project %s/%s) not read again at start, the stored ones stay: %s",
		      r->name, r->org_name, r->project_name, e.msg);
	model_free(m);
}

void *triggers_reread_main(void *arg)
{
	struct triggers *t = arg;
	struct repository *v = NULL;
	struct store_conn *c;
	size_t n = 0;
	struct err e;

	if (!(c = store_conn(t->cfg.store, &e)) || store_repository_list(c, NULL, &v, &n, &e)) {
		LOG_W("triggers not read again at start: %s", e.msg);
		store_conn_release(t->cfg.store);
		return NULL;
	}
	for (size_t i = 0; i < n && !triggers_stopping(t); i++)
		if (!v[i].disabled)
			reread_one(t, c, &v[i]);
	free(v);
	store_conn_release(t->cfg.store); /* this thread ends: its connection serves others */
	return NULL;
}
