/* POST /api/v1/process: starts a process from a multipart payload (spec "Start", reference
 * §6.2).  Everything that can be checked now is checked now (DESIGN.md §2), with 400 and
 * nothing stored: the parts, org/project/access, the raw-payload mode, the definition
 * (loaded and compiled with the active profiles), the entry point, startAt and timeouts.
 * Then the working directory is packed into the payload and the process is stored as
 * ENQUEUED in one transaction, and the dispatcher is woken. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/policy_checks.h"
#include "api/process_routes.h"
#include "api/process_start_req.h"
#include "api/repositories.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "auth/rbac_start.h"
#include "base/datetime.h"
#include "base/duration.h"
#include "base/jsonx.h"
#include "base/log.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/value.h"
#include "queue/main_json.h"
#include "queue/start_staged.h"
#include "repo/repo.h"
#include "store/audit.h"
#include "store/orgs.h"
#include "store/processes.h"

#define DEFAULT_ORG_ID "0fac1b18-d179-11e7-b3e7-d7df4543ed4f"

struct start {
	const struct multipart *mp; /* the file parts (BORROWED) */
	struct start_req *r;	    /* the parsed request (BORROWED) */
	struct org org;
	struct project project;
	bool has_project;
	char id[UUID_STR_LEN];
	char staging[4096];
	struct memdir files; /* with in_memory: the working folder (queue/start_staged.h) */
	bool in_memory;
	struct repository repo; /* with has_repo: the repository the process runs from */
	bool has_repo;
	struct repo_commit commit;
};

/* The repository of repo (a name in the project) or repoId (which implies its project):
 * 400 "Repository not found: x" when unknown or in another project.
 * has_org: the request named an org (the project must be in it). */
static int resolve_repo(struct api_call *c, struct start *s, bool has_org)
{
	const struct start_req *r = s->r;
	int rc;

	if (!r->repo && !r->repo_id) {
		if (r->repo_branch_or_tag || r->repo_commit_id)
			return api_fail(c, ERR_INVALID, "'%s' needs 'repo' or 'repoId'",
					r->repo_branch_or_tag ? "repoBranchOrTag" : "repoCommitId");
		return 0;
	}
	if (r->repo_id)
		rc = store_repository_get(c->db, r->repo_id, &s->repo, &c->err);
	else if (!s->has_project)
		return api_fail(c, ERR_INVALID, "Project ID or name is required");
	else
		rc = store_repository_find(c->db, s->project.id, r->repo, &s->repo, &c->err);
	if (rc == 0 && s->has_project && strcmp(s->repo.project_id, s->project.id) != 0)
		rc = api_fail(c, ERR_NOT_FOUND, "Repository not found: %.128s", r->repo_id);
	if (rc)
		return c->err.code == ERR_NOT_FOUND ? api_recode(c, ERR_INVALID) : rc;
	if (r->repo && r->repo_id && strcmp(r->repo, s->repo.name) != 0)
		return api_fail(c, ERR_INVALID, "'repo' (%.128s) and 'repoId' (%s) name different repositories",
				r->repo, r->repo_id);
	if (!s->has_project) {
		if ((rc = store_project_get(c->db, s->repo.project_id, &s->project, &c->err)))
			return rc;
		if (has_org && strcmp(s->project.org_id, s->org.id) != 0)
			return api_fail(c, ERR_INVALID, "Repository %s does not belong to organization %s",
					s->repo.name, s->org.name);
		s->has_project = true;
	}
	s->has_repo = true;
	return 0;
}

/* The org and project the request names (reference §6.2), and the right to start there. */
static int resolve_owner(struct api_call *c, struct start *s)
{
	struct start_req *r = s->r;
	int rc;

	if (r->org_id)
		rc = uuid_valid(r->org_id, strlen(r->org_id))
			 ? store_org_get(c->db, r->org_id, &s->org, &c->err)
			 : api_fail(c, ERR_INVALID, "invalid orgId: %.64s", r->org_id);
	else if (r->org)
		rc = store_org_find(c->db, r->org, &s->org, &c->err);
	else
		rc = 1;
	if (rc < 0)
		return c->err.code == ERR_NOT_FOUND ? api_recode(c, ERR_INVALID) : rc;
	if (r->project_id) {
		if (!uuid_valid(r->project_id, strlen(r->project_id)))
			return api_fail(c, ERR_INVALID, "invalid projectId: %.64s", r->project_id);
		if (store_project_get(c->db, r->project_id, &s->project, &c->err))
			return c->err.code == ERR_NOT_FOUND ? api_recode(c, ERR_INVALID) : -1;
		if (rc == 0 && strcmp(s->project.org_id, s->org.id) != 0)
			return api_fail(c, ERR_INVALID, "Project %s does not belong to organization %s",
					s->project.name, s->org.name);
		s->has_project = true;
	} else if (r->project) {
		if (rc != 0)
			return api_fail(c, ERR_INVALID, "Organization ID or name is required");
		if (store_project_find(c->db, s->org.id, r->project, &s->project, &c->err))
			return c->err.code == ERR_NOT_FOUND ? api_recode(c, ERR_INVALID) : -1;
		s->has_project = true;
	}
	if (resolve_repo(c, s, rc == 0))
		return -1;
	if (s->has_project)
		return store_org_get(c->db, s->project.org_id, &s->org, &c->err);
	if (rc == 1)
		return store_org_get(c->db, DEFAULT_ORG_ID, &s->org, &c->err);
	return 0;
}

/* The one start rule (auth/rbac_start.h), also used for child processes. */
static int check_access(struct api_call *c, struct start *s)
{
	const struct project *pr = s->has_project ? &s->project : NULL;

	if (rbac_process_start(c->db, &c->who, &s->org, pr, s->r->raw_payload, &c->err))
		return -1;
	return s->r->out ? rbac_process_out_vars(c->db, &c->who, &s->org, pr, &c->err) : 0;
}

/* rules.rawPayload: the files the request uploads (api/policy_checks.h). */
static int check_raw_payload(struct api_call *c, struct start *s)
{
	uint64_t bytes = 0;

	if (!s->r->raw_payload || !s->mp)
		return 0;
	for (size_t i = 0; i < s->mp->n_parts; i++)
		if (s->mp->parts[i].has_filename)
			bytes += s->mp->parts[i].data.len;
	return api_policy_raw_payload(c, s->org.id, s->has_project ? s->project.id : NULL, bytes);
}

static int check_parent(struct api_call *c, struct start *s)
{
	struct process parent;
	const char *id = s->r->parent_instance_id;

	if (!id)
		return 0;
	if (store_process_get(c->db, id, &parent, &c->err))
		return c->err.code == ERR_NOT_FOUND ? api_fail(c, ERR_INVALID, "Unknown parent instance ID: %s", id)
						    : -1;
	store_process_cleanup(&parent);
	return 0;
}

static int handler_timeout(struct api_call *c, json_t *cfg);

/* _main.json: the configuration with out and activeProfiles as the arrays they were parsed
 * into, merged over the _main.json the archive or the repository brought (Concord's
 * workspace configuration, below the request's). */
static int write_main_json(struct api_call *c, struct start *s)
{
	json_t *cfg;
	int rc;

	if (s->r->out)
		json_object_set(s->r->cfg, "out", s->r->out);
	if (s->r->active_profiles)
		json_object_set(s->r->cfg, "activeProfiles", s->r->active_profiles);
	if (!(cfg = s->in_memory ? main_json_load_files(&s->files, &c->err) : main_json_load(s->staging, &c->err)))
		return api_fail(c, ERR_INVALID, "Invalid request data format: _main.json: %s", c->err.msg);
	rc = value_merge(cfg, s->r->cfg, &c->err);
	if (rc == 0)
		rc = handler_timeout(c, cfg);
	if (rc == 0)
		rc = s->in_memory ? main_json_save_files(&s->files, cfg, &c->err) : main_json_save(s->staging, cfg, &c->err);
	json_decref(cfg);
	return rc;
}

/* The process from the staged folder (queue/start_staged.h): the definition loaded as the
 * runner will, so that a broken one is a 400 now, and the process stored ENQUEUED. */
static int store_it(struct api_call *c, struct start *s)
{
	/* A scoped key (or the session of a process started with one) passes its scopes on. */
	char *scopes = c->who.scopes.n ? scope_set_dump(&c->who.scopes) : NULL;
	int rc;
	struct staged_start st = {
	    .dir = s->in_memory ? NULL : s->staging,
	    .files = s->in_memory ? &s->files : NULL,
	    .instance_id = s->id,
	    .parent_instance_id = s->r->parent_instance_id,
	    .org = &s->org,
	    .project = s->has_project ? &s->project : NULL,
	    .initiator_id = c->who.user.id,
	    .initiator = c->who.user.username,
	    .start_at = s->r->start_at,
	    .timeout_s = s->r->timeout_s,
	    .suspend_timeout_s = s->r->suspend_timeout_s,
	    .tags = s->r->tags,
	    .meta = s->r->meta,
	    .repo = s->has_repo ? &s->repo : NULL,
	    .commit = s->has_repo ? &s->commit : NULL,
	    .work_dir = c->app->work_dir,
	    .repos = c->app->repos,
	};

	struct audit_entry audit;
	bool audited;

	if (c->who.scopes.n && !scopes)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	st.scopes = scopes ? scopes : "";
	/* One commit for the start and its audit entry (the dispatcher's would be a second). */
	audited = api_audit_prepare(c, s->id, &audit);
	st.audit = audited ? &audit : NULL;
	rc = start_staged(c->db, c->app->session_key, &st, &c->err);
	free(scopes);
	if (audited)
		json_decref(audit.details);
	c->audited = audited && rc == 0;
	if (rc == 0)
		return 0;
	if (c->err.code == ERR_NOT_FOUND && s->has_repo)
		return api_fail(c, ERR_INVALID, "No process definition in repository %s at %s%s%s", s->repo.name,
				s->commit.id, s->repo.path[0] ? ", path " : "", s->repo.path);
	if (c->err.code == ERR_NOT_FOUND && !s->r->raw_payload)
		return api_fail(c, ERR_INVALID, "No process definition: upload concord.yml (or an archive with it)%s",
				s->has_project ? " or start from a repository" : "");
	if (c->err.code == ERR_NOT_FOUND)
		return api_recode(c, ERR_INVALID);
	return -1;
}

/* handlerProcessTimeout (request only; a number of seconds or an ISO-8601 duration) is
 * checked now and kept in _main.json as seconds for the handler processes (handlers.c). */
static int handler_timeout(struct api_call *c, json_t *cfg)
{
	json_t *v = json_object_get(cfg, "handlerProcessTimeout");
	int64_t secs;

	if (!v)
		return 0;
	if (duration_json(v, "handlerProcessTimeout", &secs, &c->err))
		return api_recode(c, ERR_INVALID);
	json_object_set_new(cfg, "handlerProcessTimeout", json_integer(secs));
	return 0;
}

/* The repository's commit (fetched first when the clone is missing or older than
 * --repo-fetch-max-age) into the empty staging folder, before the upload overlays it. */
static int checkout(struct api_call *c, struct start *s)
{
	int rc;

	if (!s->has_repo)
		return 0;
	/* After the access check: only those who may start there learn that it is disabled. */
	if (s->repo.disabled)
		return api_fail(c, ERR_INVALID, "Repository is disabled -> %s", s->repo.name);
	if ((rc = repository_available(c)) ||
	    (rc = repo_prepare(c->app->repos, c->db, &s->repo, s->r->repo_branch_or_tag, s->r->repo_commit_id,
			       &s->commit, &c->err)))
		return rc;
	rc = repo_checkout(c->app->repos, &s->repo, &s->commit, s->staging, &c->err);
	if (rc && c->err.code == ERR_LIMIT)
		return api_recode(c, ERR_TOO_LARGE);
	return rc;
}

/* The parts of a start without an archive or a repository, held in memory: no file is
 * written for it (queue/start_staged.h).  1 when they are, 0 when a folder is needed. */
static int in_memory(struct api_call *c, struct start *s)
{
	if (s->has_repo || s->r->has_archive || !s->mp || !c->app->work_dir)
		return 0;
	if (start_req_files(s->mp, START_MEM_MAX, &s->files, &c->err) == 0) {
		s->in_memory = true;
		return write_main_json(c, s) ? -1 : 1;
	}
	if (c->err.code != ERR_TOO_LARGE)
		return -1;
	memdir_cleanup(&s->files);
	memdir_init(&s->files);
	return 0;
}

static int build_payload(struct api_call *c, struct start *s)
{
	char *tmp = NULL;
	int rc = in_memory(c, s);

	if (rc)
		return rc < 0 ? -1 : 0;

	if (asprintf(&tmp, "%s/tmp", c->app->work_dir) < 0)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	if (str_fmt(s->staging, sizeof s->staging, "%s/%s", tmp, s->id)) {
		free(tmp);
		return api_fail(c, ERR_INTERNAL, "work folder path too long (limit %zu bytes): %s",
				sizeof s->staging - 1, c->app->work_dir);
	}
	free(tmp);
	return path_mkdirs(s->staging, 0700, &c->err) || checkout(c, s) ||
		       start_req_materialize(s->mp, s->r, s->staging, s->has_repo, &c->err) || write_main_json(c, s)
		   ? -1
		   : 0;
}

int api_process_start_req(struct api_call *c, const struct multipart *mp, struct start_req *r, char id[UUID_STR_LEN])
{
	struct start s = {.mp = mp, .r = r};
	struct err ignored;
	int rc;

	memdir_init(&s.files);
	uuid_v7(s.id);
	if ((rc = resolve_owner(c, &s)) || (rc = check_access(c, &s)) || (rc = check_raw_payload(c, &s)) ||
	    (rc = check_parent(c, &s)) || (rc = build_payload(c, &s)) || (rc = store_it(c, &s)))
		goto out;
	queue_wake(c->app->queue);
	memcpy(id, s.id, UUID_STR_LEN);
out:
	if (s.staging[0] && path_remove_tree(s.staging, &ignored))
		LOG_W("cannot remove %s: %s", s.staging, ignored.msg);
	memdir_cleanup(&s.files);
	return rc;
}

int api_process_start(struct api_call *c)
{
	struct multipart mp = {0};
	struct start_req r = {0};
	struct str ct = str_from(c->req->content_type ? c->req->content_type : "");
	char id[UUID_STR_LEN];
	int rc;

	if (!multipart_is_form_data(ct))
		return api_fail(c, ERR_MEDIA_TYPE, "POST /api/v1/process takes multipart/form-data");
	if ((rc = multipart_parse(ct, (struct str){c->req->body.data, c->req->body.len}, &mp, &c->err)) ||
	    (rc = start_req_parse(&mp, dt_now_ms(), &r, &c->err)) || (rc = api_process_start_req(c, &mp, &r, id)))
		goto out;
	rc = api_reply(c, json_pack("{s:s, s:b}", "instanceId", id, "ok", 1));
out:
	start_req_cleanup(&r);
	multipart_cleanup(&mp);
	return rc;
}
