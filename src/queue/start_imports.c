/* The git and mvn imports of a process start (queue/start_imports.h). */
#include "queue/start_imports.h"

#include <string.h>

#include "auth/rbac.h"
#include "base/str.h"
#include "store/process_events.h"
#include "store/users.h"

/* The rules of the crypto task: the initiator reads the secret, in its own project. */
static int secret_check(void *ctx, const struct secret *sec, struct err *e)
{
	struct start_imports *si = ctx;
	const struct staged_start *s = si->s;
	const char *project_id = s->project ? s->project->id : "";
	struct principal who = {.method = AUTH_SESSION};
	struct rbac_resource res = {SECRET_RESOURCE, "secret",	    sec->id,	   sec->name,
				    sec->org_id,     sec->owner_id, sec->is_public};
	char projects[512];
	bool ok;
	int rc;

	if ((rc = store_secret_project_allowed(si->im.c, sec, project_id, &ok, e)))
		return rc;
	if (!ok) {
		store_secret_projects_text(si->im.c, sec, projects, sizeof projects);
		return err_set(e, ERR_FORBIDDEN, "Secret '%s' is restricted to %s", sec->name, projects);
	}
	if (!s->initiator_id || !s->initiator_id[0])
		return err_set(e, ERR_FORBIDDEN, "Secret '%s': the process has no initiator to act as", sec->name);
	if ((rc = store_user_get(si->im.c, s->initiator_id, &who.user, e)))
		return rc;
	if (who.user.disabled)
		return err_set(e, ERR_FORBIDDEN, "Secret '%s': the process's initiator '%s' is disabled", sec->name,
			       who.user.username);
	if (str_fmt(who.session_process, sizeof who.session_process, "%s", s->instance_id) ||
	    str_fmt(who.session_project, sizeof who.session_project, "%s", project_id))
		return err_set(e, ERR_INTERNAL, "process id too long: %s", s->instance_id);
	return rbac_check(si->im.c, &who, &res, ACCESS_READER, e);
}

int start_imports_init(struct start_imports *si, struct store_conn *c, const struct staged_start *s, struct err *e)
{
	memset(si, 0, sizeof *si);
	si->s = s;
	if (!s->repos)
		return 0;
	if (!(si->im.resolved = json_array()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	si->im.rs = s->repos;
	si->im.c = c;
	si->im.org_id = s->org->id;
	si->im.secret_check = secret_check;
	si->im.secret_ctx = si;
	si->importer.fetch = repo_import_fetch;
	si->importer.ctx = &si->im;
	return 0;
}

int start_imports_record(struct start_imports *si, struct store_conn *c, const char *id, struct err *e)
{
	json_t *data;
	int rc;

	if (!json_array_size(si->im.resolved))
		return 0;
	if (!(data = json_pack("{s:O}", "imports", si->im.resolved)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = store_process_event_add(c, id, "IMPORTS", data, 0, e);
	json_decref(data);
	return rc;
}

void start_imports_cleanup(struct start_imports *si)
{
	json_decref(si->im.resolved);
	si->im.resolved = NULL;
}
