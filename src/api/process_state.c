/* GET /api/v1/process/{id}/state/snapshot[/{name*}]: Concord's process state download —
 * the working directory as the store holds it (the payload, while the process has one),
 * with the attachments it left in _attachments/, as a ZIP or one file of it.  The engine's
 * own saved state (_attachments/_state/) is left out: it is not Concord's format and may
 * hold values the flow marked sensitive.  Its initiator, admins and OWNERs of its project
 * may download it.  See docs/api.md "Process state". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "auth/rbac_start.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "store/process_attachments.h"
#include "store/projects.h"
#include "store/processes.h"

/* The stored payload of process id unpacked into dir (nothing when it has none). */
static int unpack_payload(struct api_call *c, const char *id, const char *dir)
{
	void *data = NULL;
	size_t len = 0;
	int rc = store_process_payload(c->db, id, &data, &len, &c->err);

	if (rc == -ERR_NOT_FOUND || (rc && c->err.code == ERR_NOT_FOUND))
		return 0;
	if (rc == 0)
		rc = pack_restore(data, len, dir, &c->err);
	free(data);
	return rc;
}

/* Every attachment of process id under dir/_attachments/, but _state/. */
static int write_attachments(struct api_call *c, const char *id, const char *dir)
{
	json_t *names = NULL, *n;
	char *adir = NULL;
	size_t i;
	int rc;

	if ((rc = store_process_attachment_list(c->db, id, &names, &c->err)))
		return rc;
	if (asprintf(&adir, "%s/_attachments", dir) < 0) {
		json_decref(names);
		return api_fail(c, ERR_INTERNAL, "out of memory");
	}
	rc = path_mkdirs(adir, 0700, &c->err);
	json_array_foreach(names, i, n)
	{
		const char *name = json_string_value(n);
		void *data = NULL;
		size_t len = 0;
		char *slash;

		if (rc || !name || strncmp(name, "_state/", 7) == 0)
			continue;
		if ((rc = store_process_attachment_get(c->db, id, name, &data, &len, &c->err)))
			break;
		if ((slash = strrchr(name, '/'))) {
			char sub[4096];
			rc = str_fmt(sub, sizeof sub, "%.*s", (int)(slash - name), name)
				 ? api_fail(c, ERR_INTERNAL, "attachment name too long: %.128s", name)
				 : path_mkdirs_beneath(adir, sub, 0700, &c->err);
		}
		if (rc == 0)
			rc = path_write_beneath(adir, name, data, len, 0600, &c->err);
		free(data);
	}
	free(adir);
	json_decref(names);
	return rc;
}

/* The state of process id in a new scratch folder dir (the caller removes it). */
static int build(struct api_call *c, const char *id, char *dir, size_t cap)
{
	char rnd[UUID_STR_LEN], *state = NULL;
	int rc;

	uuid_v4(rnd);
	if (str_fmt(dir, cap, "%s/tmp/state-%s", c->app->work_dir, rnd))
		return api_fail(c, ERR_INTERNAL, "work folder path too long: %s", c->app->work_dir);
	if ((rc = path_mkdirs(dir, 0700, &c->err)) || (rc = unpack_payload(c, id, dir)))
		return rc;
	if (asprintf(&state, "%s/_attachments/_state", dir) < 0)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	rc = path_remove_tree(state, &c->err);
	free(state);
	return rc ? rc : write_attachments(c, id, dir);
}

/* Concord lets the owners of a process download its state (reference §6.6): its initiator,
 * admins, and OWNERs of its project — not every reader or writer, as the state holds the
 * arguments it was started with. */
static int owner_access(struct api_call *c, const struct process *p)
{
	struct rbac_resource res;
	struct project pr;
	struct err none;

	if (principal_is_admin(&c->who) || strcmp(p->initiator_id, c->who.user.id) == 0)
		return 0;
	if (p->project_id[0] && store_project_get(c->db, p->project_id, &pr, &none) == 0) {
		res = rbac_project_res(&pr);
		if (rbac_check(c->db, &c->who, &res, ACCESS_OWNER, &none) == 0)
			return 0;
	}
	return api_fail(c, ERR_FORBIDDEN,
			"The current user (%s) doesn't have the necessary permissions to the download the process "
			"state: %s",
			c->who.user.username, p->instance_id);
}

static int snapshot(struct api_call *c)
{
	const char *id = api_param(c, "id"), *name = api_param(c, "name");
	char dir[4096] = "";
	struct process p;
	struct err ignored;
	void *data = NULL;
	size_t len = 0;
	int rc;

	if (name && !*name)
		name = NULL;
	if ((rc = api_process_load(c, id, PROC_READ, &p)))
		return rc;
	rc = owner_access(c, &p);
	store_process_cleanup(&p);
	if (rc)
		return rc;
	if (name && (!path_is_safe_relative(name) || strncmp(name, "_attachments/_state", 19) == 0))
		return api_fail(c, ERR_INVALID, "Invalid file name: %.256s", name);
	rc = build(c, id, dir, sizeof dir);
	if (rc == 0 && name)
		rc = (data = path_read_beneath(dir, name, limits.archive_bytes, &len, &c->err)) ? 0 : -1;
	else if (rc == 0)
		rc = pack_zip_dir(dir, limits.archive_bytes, &data, &len, &c->err);
	if (rc && name && c->err.code == ERR_NOT_FOUND)
		rc = api_fail(c, ERR_NOT_FOUND, "State file not found: %.256s", name);
	if (dir[0] && path_remove_tree(dir, &ignored))
		LOG_W("cannot remove %s: %s", dir, ignored.msg);
	if (rc)
		return rc;
	http_resp_take(c->resp, 200, name ? "application/octet-stream" : "application/zip", data, len);
	return 0;
}

static const struct api_doc doc_all = {
    .summary = "The process's state (its stored working directory and attachments) as a ZIP",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = "{'type':'string','format':'binary'}",
    .response_type = "application/zip",
    .errors = "403 404",
};
static const struct api_doc doc_one = {
    .summary = "One file of the process's state",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {"name", "string", "the file's path"}, {0}},
    .response = "{'type':'string','format':'binary'}",
    .response_type = "application/octet-stream",
    .errors = "400 403 404",
};

const struct api_route api_process_state_routes[] = {
    {"GET", "/api/v1/process/{id}/state/snapshot", snapshot, API_SLOW, &doc_all},
    {"GET", "/api/v1/process/{id}/state/snapshot/{name*}", snapshot, API_SLOW, &doc_one},
    {0},
};
