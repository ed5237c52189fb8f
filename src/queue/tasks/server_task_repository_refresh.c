/* The `repositoryRefresh` task (Concord's RepositoryRefreshTaskV2; docs/flows.md): every
 * repository of `repositoryInfo` (a list of {repositoryId}, as a GitHub event gives it) is
 * refreshed through POST /api/v1/org/{org}/project/{project}/repository/{repo}/refresh as
 * the process's initiator (task_call_api): fetched, its definition loaded, its triggers
 * renewed, with the API's rights. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/uuid.h"
#include "queue/tasks/api_client.h"
#include "queue/tasks/server_tasks.h"
#include "store/repositories.h"

/* The path of r's refresh route (NEW). */
static char *refresh_path(const struct repository *r)
{
	char *o = api_client_segment(r->org_name), *p = api_client_segment(r->project_name);
	char *n = api_client_segment(r->name), *path = NULL;

	if (o && p && n && asprintf(&path, "/api/v1/org/%s/project/%s/repository/%s/refresh", o, p, n) < 0)
		path = NULL;
	free(o);
	free(p);
	free(n);
	return path;
}

static int refresh_one(struct task_call *tc, const char *id, struct err *e)
{
	struct repository r;
	json_t *a = NULL;
	char *path;
	long status = 0;
	int rc;

	if (store_repository_get(tc->c, id, &r, e))
		return e->code == ERR_NOT_FOUND ? err_set(e, ERR_INVALID, "Repository not found: %s", id) : -1;
	if (!(path = refresh_path(&r)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = task_call_api(tc, "POST", path, NULL, &status, &a, e);
	if (rc == 0 && status != 200) {
		const char *msg = json_string_value(json_object_get(a, "message"));
		rc = err_set(e, status == 403 ? ERR_FORBIDDEN : ERR_INVALID,
			     "repositoryRefresh: %s/%s/%s: %s (HTTP %ld)", r.org_name, r.project_name, r.name,
			     msg ? msg : "the server refused the refresh", status);
	}
	json_decref(a);
	free(path);
	return rc;
}

int server_task_repository_refresh(struct task_call *tc, struct err *e)
{
	json_t *list, *item;
	size_t i;

	if (tc->method || !json_is_object(tc->args))
		return err_set(e, ERR_INVALID,
			       "repositoryRefresh: call it as a step with 'repositoryInfo' (a list of {repositoryId})");
	list = json_object_get(tc->args, "repositoryInfo");
	if (!json_is_array(list) || json_array_size(list) == 0)
		return err_set(e, ERR_INVALID, "Invalid in parameters: no repository info");
	json_array_foreach(list, i, item)
	{
		const char *id = json_string_value(json_object_get(item, "repositoryId"));
		if (!id || !uuid_valid(id, strlen(id)))
			return err_set(e, ERR_INVALID, "repositoryRefresh: entry %zu of 'repositoryInfo' has no valid "
						       "'repositoryId'", i);
	}
	json_array_foreach(list, i, item)
	{
		if (refresh_one(tc, json_string_value(json_object_get(item, "repositoryId")), e))
			return -1;
	}
	tc->out = json_pack("{s:b}", "ok", 1);
	return 0;
}
