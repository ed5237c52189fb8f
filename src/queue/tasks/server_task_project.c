/* The `project` task (Concord's ProjectTaskV2; docs/flows.md "project task"): `action:
 * create` creates or updates a project of an org (the process's unless `org`) with its
 * `repositories`, as POST /api/v1/org/{org}/project does — through that very API, as the
 * process's initiator (task_call_api), so the same checks, rights and audit apply. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "queue/tasks/api_client.h"
#include "queue/tasks/server_tasks.h"

/* Concord's list of repositories ({name, url, branch, …} each) as the API's map. */
static int repositories(json_t *in, json_t **out, struct err *e)
{
	json_t *list = json_object_get(in, "repositories"), *r;
	size_t i;

	*out = NULL;
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return err_set(e, ERR_INVALID, "project: 'repositories' must be a list of repository entries");
	*out = json_object();
	json_array_foreach(list, i, r)
	{
		const char *name = json_string_value(json_object_get(r, "name"));
		if (!json_is_object(r) || !name) {
			json_decref(*out);
			*out = NULL;
			return err_set(e, ERR_INVALID,
				       json_is_object(r) ? "Repository name is required (entry %zu)"
							 : "Repository entry must be an object (entry %zu)",
				       i);
		}
		json_object_set(*out, name, r);
	}
	return 0;
}

/* The API's answer as the step's result, or its refusal as the step's error. */
static int answer(struct task_call *tc, long status, json_t *a, struct err *e)
{
	const char *msg = json_string_value(json_object_get(a, "message"));

	if (status == 200 && json_is_object(a)) {
		tc->out = json_incref(a);
		return 0;
	}
	return err_set(e, status == 403 ? ERR_FORBIDDEN : ERR_INVALID, "project: %s (HTTP %ld)",
		       msg ? msg : "the server refused the request", status);
}

int server_task_project(struct task_call *tc, struct err *e)
{
	json_t *in = tc->args, *body = NULL, *repos = NULL, *a = NULL;
	const char *action, *org, *name;
	char *seg = NULL, *path = NULL;
	long status = 0;
	int rc = -1;

	if (tc->method || !json_is_object(in))
		return err_set(e, ERR_INVALID, "project: call it as a step: - task: project, in: {action: create, …}");
	action = json_string_value(json_object_get(in, "action"));
	if (!action || strcasecmp(action, "create") != 0)
		return err_set(e, ERR_INVALID, "Unknown action: '%.64s'. Available actions: [CREATE]",
			       action ? action : "");
	org = json_string_value(json_object_get(in, "org"));
	name = json_string_value(json_object_get(in, "name"));
	if (!name || !*name)
		return err_set(e, ERR_INVALID, "project: 'name' (the project's name) is required");
	if (repositories(in, &repos, e))
		return -1;
	body = json_pack("{s:s}", "name", name);
	if (repos)
		json_object_set(body, "repositories", repos);
	if (!(seg = api_client_segment(org && *org ? org : tc->r->p.org_name)) ||
	    asprintf(&path, "/api/v1/org/%s/project", seg) < 0) {
		path = NULL;
		err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (task_call_api(tc, "POST", path, body, &status, &a, e) == 0)
		rc = answer(tc, status, a, e);
out:
	json_decref(a);
	json_decref(body);
	json_decref(repos);
	free(seg);
	free(path);
	return rc;
}
