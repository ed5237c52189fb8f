/* The `concord` task on the server (docs/flows.md "concord task"; Concord's plugins-v2
 * concord.md): child processes.  `start` (a payload folder or ZIP of the working
 * directory, with `attachments`, in this org/project or another one the initiator may
 * start in), `startExternal` (a process without a parent), `fork` (the parent's payload)
 * and `kill`; the methods (waitForCompletion, getOutVars, listSubprocesses,
 * suspendForCompletion) are in server_task_concord_methods.c.  `apiKey` acts as that
 * key's owner; `baseUrl` starts on another server (server_task_concord_remote.c).  `sync`
 * and the waiting methods answer later (task_call.wait, re-checked by the supervisor);
 * `sync` with `suspend`, and suspendForCompletion, suspend the parent until its children
 * end (children.c resumes it). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>


#include "auth/authn.h"
#include "auth/rbac.h"
#include "auth/rbac_start.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "queue/end/children.h"
#include "queue/internal.h"
#include "flow/start_def.h"
#include "queue/main_json.h"
#include "queue/resume_files.h"
#include "queue/tasks/server_tasks.h"
#include "queue/start_staged.h"
#include "store/audit.h"
#include "store/process_children.h"
#include "store/projects.h"
#include "store/repositories.h"
#include "store/users.h"

/* One child to create. */
struct child {
	const char *entry; /* NULL: the child definition's entryPoint or "default" (start), the parent's (fork) */
	json_t *arguments; /* object or NULL (BORROWED) */
	json_t *tags;	   /* array or NULL (BORROWED) */
	json_t *profiles;  /* array or NULL (BORROWED) */
	json_t *out_vars;  /* array or NULL (BORROWED) */
	int64_t start_at;  /* 0: now */
	json_t *switches;  /* object: disableOnCancel/disableOnFailure as given (BORROWED) */
	json_t *resumed;   /* fork: the arguments the parent last resumed with, or NULL (BORROWED) */
	struct org org;
	struct project project;
	bool has_project;
	const struct repository *repo; /* started from a repository (NULL: no) */
	const struct repo_commit *commit;
	/* the initiator: the apiKey's owner, or who submitted a form with runAs.keep; NULL for
	 * the parent's */
	const struct user *as;
	bool external;		/* startExternal: a process of its own, without a parent */
	/* the scopes of who starts it (NULL: the parent's, store/process_scopes.h) */
	const struct scope_set *scopes;
	json_t *requirements;	/* object or NULL (BORROWED): kept in its configuration */
};

/* A list given as a YAML array or a comma-separated string (tags, activeProfiles): NEW. */
static int string_list(json_t *in, const char *key, json_t **out, struct err *e)
{
	json_t *v = json_object_get(in, key), *x;
	size_t i;

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		char *dup = strdup(json_string_value(v)), *save = NULL;
		*out = json_array();
		for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			while (*t == ' ')
				t++;
			if (*t)
				json_array_append_new(*out, json_string(t));
		}
		free(dup);
		return 0;
	}
	if (!json_is_array(v))
		return err_set(e, ERR_INVALID, "'%s' must be a list of strings or a comma-separated string", key);
	json_array_foreach(v, i, x) if (!json_is_string(x)) return err_set(e, ERR_INVALID,
									   "'%s' must be a list of strings", key);
	*out = json_incref(v);
	return 0;
}

/* _main.json of the child (in dir, or in files held in memory): the parent's (fork)
 * updated with what the call gives. */
static int write_main(const char *dir, struct memdir *files, const struct child *ch, struct err *e)
{
	json_t *cfg = files ? main_json_load_files(files, e) : main_json_load(dir, e), *args;
	int rc;

	if (!cfg) /* a fork of a parent whose _main.json is unreadable: start from scratch */
		cfg = json_object();
	args = main_json_args(cfg);
	if (ch->resumed)
		json_object_update(args, ch->resumed);
	if (ch->arguments)
		json_object_update(args, ch->arguments);
	if (ch->profiles)
		json_object_set(cfg, "activeProfiles", ch->profiles);
	if (ch->entry)
		json_object_set_new(cfg, "entryPoint", json_string(ch->entry));
	/* Concord's request switches, in the configuration as a start request puts them. */
	if (ch->switches)
		json_object_update(cfg, ch->switches);
	if (ch->requirements)
		json_object_set(cfg, "requirements", ch->requirements);
	if (ch->out_vars)
		json_object_set(cfg, "out", ch->out_vars);
	else
		json_object_del(cfg, "out");
	rc = files ? main_json_save_files(files, cfg, e) : main_json_save(dir, cfg, e);
	json_decref(cfg);
	return rc;
}

/* Stores the child (ENQUEUED) from the staged folder dir: its own definition is loaded as
 * the runner will (a broken one fails the task now) and gives its entry point (unless the
 * call names one), timeouts, handler flows and exclusive group (queue/start_staged.h). */
/* The audit entry of a start or a kill made by the calling process on behalf of its
 * initiator, or of as (the owner of `apiKey`) (docs/api.md "Audit log"); a failure is
 * logged, the task goes on. */
static void audit(struct task_call *tc, const char *action, const char *id, const struct user *as)
{
	const struct process *p = &tc->r->p;
	json_t *details = json_pack("{s:s,s:s}", "instanceId", id, "parentInstanceId", p->instance_id);
	struct audit_entry a = {.object = "PROCESS",
				.action = action,
				.user_id = as ? as->id : p->initiator_id[0] ? p->initiator_id : NULL,
				.username = as ? as->username : p->initiator[0] ? p->initiator : NULL,
				.source = "PROCESS",
				.instance_id = p->instance_id,
				.details = details};
	struct err e;

	if (details && store_audit_insert(tc->c, &a, &e))
		LOG_E("audit: cannot record %s PROCESS %s by process %s: %s", action, id, p->instance_id, e.msg);
	json_decref(details);
}

/* --limit-process-children and --limit-process-depth: a flow cannot multiply itself
 * without bound (a fork bomb of children starting children). */
static int child_allowed(struct task_call *tc, struct err *e)
{
	const struct process *parent = &tc->r->p;
	struct process_filter f = {.status = -1, .parent_instance_id = parent->instance_id};
	char up[UUID_STR_LEN];
	size_t depth = 1; /* the new child's generation below the first process */
	int64_t n = 0;

	if (store_process_count(tc->c, &f, &n, e))
		return -1;
	if ((uint64_t)n >= limits.process_children)
		return err_set(e, ERR_LIMIT,
			       "this process has started %lld child processes, the most one may "
			       "(--limit-process-children %zu)",
			       (long long)n, limits.process_children);
	str_fmt_cut(up, sizeof up, "%s", parent->parent_instance_id);
	while (up[0]) {
		struct process a;
		if (++depth > limits.process_depth)
			return err_set(e, ERR_LIMIT,
				       "a child process here would be %zu generations below its first process, more "
				       "than --limit-process-depth %zu allows",
				       depth, limits.process_depth);
		if (store_process_get(tc->c, up, &a, e))
			return e->code == ERR_NOT_FOUND ? 0 : -1; /* an ancestor removed by retention */
		str_fmt_cut(up, sizeof up, "%s", a.parent_instance_id);
		store_process_cleanup(&a);
	}
	return 0;
}

/* files: the child's folder held in memory (dir NULL; queue/start_staged.h). */
static int create_child(struct task_call *tc, const char *dir, struct memdir *files, const struct child *ch,
			const char *kind, char id[UUID_STR_LEN], struct err *e)
{
	const struct process *parent = &tc->r->p;
	char *scopes = ch->scopes && ch->scopes->n ? scope_set_dump(ch->scopes) : NULL;
	int rc;
	struct staged_start st = {
		.dir = files ? NULL : dir,
		.files = files,
		.instance_id = id,
		.kind = kind,
		.parent_instance_id = ch->external ? NULL : parent->instance_id,
		.org = &ch->org,
		.project = ch->has_project ? &ch->project : NULL,
		.initiator_id = ch->as ? ch->as->id : parent->initiator_id,
		.initiator = ch->as ? ch->as->username : parent->initiator,
		.start_at = ch->start_at,
		.timeout_s = -1,
		.suspend_timeout_s = -1,
		.tags = ch->tags,
		.repo = ch->repo,
		.commit = ch->commit,
		.error_prefix = "the child's definition",
		.work_dir = tc->r->q->work_dir,
		.repos = tc->r->q->cfg.repos,
	};

	if (ch->scopes && ch->scopes->n && !scopes)
		return err_set(e, ERR_INTERNAL, "out of memory");
	st.scopes = ch->scopes ? (scopes ? scopes : "") : NULL;
	if (child_allowed(tc, e) || write_main(dir, files, ch, e)) {
		free(scopes);
		return -1;
	}
	uuid_v7(id);
	rc = start_staged(tc->c, tc->r->q->session_key, &st, e);
	free(scopes);
	if (rc)
		return -1;
	audit(tc, "START", id, ch->as);
	return 0;
}

static int staging_dir(struct task_call *tc, char *out, size_t cap, struct err *e)
{
	char id[UUID_STR_LEN];

	uuid_v4(id);
	if (str_fmt(out, cap, "%s/tmp/child-%s", tc->r->q->work_dir, id))
		return err_set(e, ERR_INVALID, "work folder path too long (limit %zu bytes): %s", cap - 1,
			       tc->r->q->work_dir);
	return path_mkdirs(out, 0700, e);
}

/* The payload of `start`: a folder or ZIP archive inside the working directory, staged.
 * The runner wrote that folder: the payload is opened beneath it (a symbolic link that
 * leads out is refused) and then read through that descriptor, never by its name again. */
static int stage_payload(struct task_call *tc, const char *rel, const char *dir, struct err *e)
{
	void *data = NULL;
	size_t len;
	struct stat st;
	char self[64];
	int rc = -1, fd;

	if (!path_is_safe_relative(rel))
		return err_set(e, ERR_INVALID,
			       "'payload' must be a path inside the working directory (relative, without '..'): %.200s",
			       rel);
	if ((fd = path_open_beneath(tc->workdir, rel, O_PATH, 0, e)) < 0) {
		if (e->code == ERR_NOT_FOUND)
			err_set(e, ERR_INVALID, "'payload' not found in the working directory: %.200s", rel);
		return -1;
	}
	if (fstat(fd, &st) < 0 || str_fmt(self, sizeof self, "/proc/self/fd/%d", fd)) {
		rc = err_set(e, ERR_INTERNAL, "cannot read 'payload' %.200s: %s", rel, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		rc = pack_dir(self, limits.archive_bytes, &data, &len, e);
		if (rc == 0)
			rc = pack_restore(data, len, dir, e);
	} else if (S_ISREG(st.st_mode)) {
		struct pack_limits lim = {limits.archive_entries, limits.archive_bytes, limits.archive_ratio};
		data = path_read_file(self, limits.archive_bytes, &len, e);
		rc = data ? pack_unzip(data, len, dir, &lim, e) : -1;
	} else {
		rc = err_set(e, ERR_INVALID, "'payload' must be a folder or a ZIP archive: %.200s", rel);
	}
	close(fd);
	free(data);
	return rc;
}

/* The org (the parent's unless named) and project `start` names. */
static int start_named_owner(struct task_call *tc, const char *org, const char *project, struct child *ch,
			     struct err *e)
{
	const struct process *parent = &tc->r->p;

	if (store_org_find(tc->c, org ? org : parent->org_name, &ch->org, e))
		return e->code == ERR_NOT_FOUND
			   ? err_set(e, ERR_INVALID, "Organization not found: %.128s", org ? org : parent->org_name)
			   : -1;
	if (project) {
		if (store_project_find(tc->c, ch->org.id, project, &ch->project, e))
			return e->code == ERR_NOT_FOUND
				   ? err_set(e, ERR_INVALID, "Project not found: %.128s/%.128s", ch->org.name, project)
				   : -1;
		ch->has_project = true;
	}
	return 0;
}

/* Who the child is started as: the owner of `apiKey` (authenticated here as the API
 * authenticates it; Concord's task acts with that key), else the parent's initiator acting
 * from the parent's session.  *other: an apiKey was given. */
static int acting_user(struct task_call *tc, json_t *in, struct principal *who, bool *other, struct err *e)
{
	json_t *key = json_object_get(in, "apiKey");

	memset(who, 0, sizeof *who);
	*other = key && !json_is_null(key);
	if (*other) {
		if (!json_is_string(key) || !json_string_length(key))
			return err_set(e, ERR_INVALID, "concord: 'apiKey' must be a string");
		if (authn_header(tc->c, json_string_value(key), who, e))
			return err_set(e, ERR_FORBIDDEN, "concord: 'apiKey' is not a valid API key");
		return rbac_grants_load(tc->c, who, e);
	}
	return task_call_principal(tc, who, e);
}

/* The org/project of `start` (the parent's unless given) and the right of who to start
 * there (checked for the parent's own project too for a start from a repository, which is
 * not a raw payload, or as another user). */
static int start_owner(struct task_call *tc, json_t *in, struct child *ch, const struct principal *who, bool check,
		       bool from_repo, struct err *e)
{
	const char *org = json_string_value(json_object_get(in, "org"));
	const char *project = json_string_value(json_object_get(in, "project"));
	const struct process *parent = &tc->r->p;

	if (!org && !project) {
		if (store_org_get(tc->c, parent->org_id, &ch->org, e))
			return -1;
		if (parent->project_id[0]) {
			if (store_project_get(tc->c, parent->project_id, &ch->project, e))
				return -1;
			ch->has_project = true;
		}
		if (!from_repo && !check)
			return 0;
	} else if (start_named_owner(tc, org, project, ch, e)) {
		return -1;
	}
	return rbac_process_start(tc->c, who, &ch->org, ch->has_project ? &ch->project : NULL, !from_repo, e);
}

/* `requirements` (Concord's agent routing): accepted and kept in the child's
 * configuration; every node runs every process, so it routes nothing. */
static int child_requirements(json_t *in, struct child *ch, struct err *e)
{
	json_t *v = json_object_get(in, "requirements");

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return err_set(e, ERR_INVALID, "'requirements' must be an object");
	ch->requirements = v;
	return 0;
}

/* Options shared by start and fork (and by every fork of `forks`). */
static int child_opts(struct task_call *tc, json_t *in, struct child *ch, json_t **owned, struct err *e)
{
	json_t *v;
	const char *s;

	if ((v = json_object_get(in, "entryPoint")) && !json_is_null(v)) {
		if (!(ch->entry = json_string_value(v)) || !*ch->entry)
			return err_set(e, ERR_INVALID, "'entryPoint' must be a flow name");
	}
	if ((v = json_object_get(in, "arguments")) && !json_is_null(v)) {
		if (!json_is_object(v))
			return err_set(e, ERR_INVALID, "'arguments' must be an object");
		ch->arguments = v;
	}
	if (string_list(in, "tags", &owned[0], e) || string_list(in, "activeProfiles", &owned[1], e) ||
	    string_list(in, "outVars", &owned[2], e))
		return -1;
	ch->tags = owned[0];
	ch->profiles = owned[1];
	ch->out_vars = owned[2];
	ch->switches = owned[3] = json_object();
	for (int i = 0; i < 2; i++) {
		const char *k = i ? "disableOnFailure" : "disableOnCancel";
		if ((v = json_object_get(in, k)) && !json_is_null(v)) {
			if (!json_is_boolean(v))
				return err_set(e, ERR_INVALID, "'%s' must be true or false", k);
			json_object_set(ch->switches, k, v);
		}
	}
	/* Concord's dryRunMode: the caller's mode unless the call says otherwise. */
	if ((v = json_object_get(in, "dryRunMode")) && !json_is_null(v)) {
		if (!json_is_boolean(v))
			return err_set(e, ERR_INVALID, "'dryRunMode' must be true or false");
		json_object_set(ch->switches, "dryRun", v);
	} else if (task_call_dry_run(tc))
		json_object_set_new(ch->switches, "dryRun", json_true());
	if ((s = json_string_value(json_object_get(in, "startAt"))) &&
	    dt_parse_iso(s, strlen(s), true, &ch->start_at, "startAt", e))
		return -1;
	return child_requirements(in, ch, e);
}

static void child_opts_free(json_t **owned)
{
	for (int i = 0; i < 4; i++)
		json_decref(owned[i]);
}

/* An optional string option: NULL when absent or empty. */
static int opt_str(json_t *in, const char *key, const char **out, struct err *e)
{
	json_t *v = json_object_get(in, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return err_set(e, ERR_INVALID, "'%s' must be a string", key);
	*out = json_string_length(v) ? json_string_value(v) : NULL;
	return 0;
}

/* The repository of `repo` in the child's project, checked out into dir at its configured
 * ref or repoBranchOrTag / repoCommitId (the code of API starts: repo/repo.h). */
static int stage_repo(struct task_call *tc, json_t *in, const char *name, struct child *ch, struct repository *r,
		      struct repo_commit *commit, const char *dir, struct err *e)
{
	struct repos *rs = tc->r->q->cfg.repos;
	const char *ref = NULL, *commit_id = NULL;

	if (opt_str(in, "repoBranchOrTag", &ref, e) || opt_str(in, "repoCommitId", &commit_id, e))
		return -1;
	if (!rs)
		return err_set(e, ERR_UNAVAILABLE, "concord: repositories are not available on this server");
	if (!ch->has_project)
		return err_set(e, ERR_INVALID, "concord start: 'repo' needs a project ('project', or the parent's)");
	if (store_repository_find(tc->c, ch->project.id, name, r, e))
		return e->code == ERR_NOT_FOUND ? err_set(e, ERR_INVALID, "Repository not found: %.128s", name) : -1;
	if (r->disabled)
		return err_set(e, ERR_INVALID, "Repository is disabled -> %s", r->name);
	if (repo_prepare(rs, tc->c, r, ref, commit_id, commit, e) || repo_checkout(rs, r, commit, dir, e))
		return -1;
	ch->repo = r;
	ch->commit = commit;
	return 0;
}

/* The child's files: a payload of the working directory, or a repository's checkout. */
static int stage_start(struct task_call *tc, json_t *in, struct child *ch, struct repository *r,
		       struct repo_commit *commit, const char *dir, struct err *e)
{
	const char *payload = json_string_value(json_object_get(in, "payload")), *repo;

	if (opt_str(in, "repo", &repo, e))
		return -1;
	if (repo && payload)
		return err_set(e, ERR_INVALID, "concord start: give 'payload' or 'repo', not both");
	if (repo)
		return stage_repo(tc, in, repo, ch, r, commit, dir, e);
	if (json_object_get(in, "repoBranchOrTag") || json_object_get(in, "repoCommitId"))
		return err_set(e, ERR_INVALID, "concord start: 'repoBranchOrTag' and 'repoCommitId' need 'repo'");
	return stage_payload(tc, payload, dir, e);
}

/* Suspends the calling thread until every process of ids ended (children.c resumes it
 * with the event "children-<uuid>"). */
int server_task_concord_suspend(struct task_call *tc, json_t *ids, struct err *e)
{
	char ev[64], uid[UUID_STR_LEN];

	if (!tc->suspendable)
		return err_set(e, ERR_INVALID, "concord: a process cannot suspend from a script; call it from a step");
	uuid_v4(uid);
	if (str_fmt(ev, sizeof ev, "children-%s", uid))
		return err_set(e, ERR_INTERNAL, "event name too long");
	if (store_child_wait_add(tc->c, tc->r->p.instance_id, ev, ids, e))
		return -1;
	if (!(tc->suspend = strdup(ev)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

/* After the children are created: the answer now, later (sync) or after a suspension. */
static int finish_start(struct task_call *tc, json_t *in, json_t *ids, struct err *e)
{
	bool sync = json_is_true(json_object_get(in, "sync"));
	bool suspend = json_is_true(json_object_get(in, "suspend"));
	json_t *result = json_pack("{s:b, s:O, s:O}", "ok", 1, "id", json_array_get(ids, 0), "ids", ids);
	json_t *out_vars = NULL;

	if (json_is_true(json_object_get(in, "debug")))
		LOG_I("process %s: concord task started %zu child process(es)", tc->r->p.instance_id,
		      json_array_size(ids));
	queue_wake(tc->r->q);
	if (sync && suspend && !tc->method) {
		json_decref(result);
		if (server_task_concord_suspend(tc, ids, e))
			return -1;
		/* What the step gets back when the parent resumes (concord.resume). */
		tc->out = json_pack("{s:O, s:b, s:b}", "ids", ids, "ignoreFailures",
				    json_is_true(json_object_get(in, "ignoreFailures")), "collect",
				    string_list(in, "outVars", &out_vars, e) == 0 && json_array_size(out_vars) > 0);
		json_decref(out_vars);
		return 0;
	}
	if (!sync) {
		tc->out = result;
		return 0;
	}
	if (string_list(in, "outVars", &out_vars, e)) {
		json_decref(result);
		return -1;
	}
	tc->wait = json_pack("{s:s, s:O, s:b, s:o, s:o}", "mode", "start", "ids", ids, "ignoreFailures",
			     json_is_true(json_object_get(in, "ignoreFailures")), "outVars",
			     out_vars ? out_vars : json_array(), "result", result);
	return 0;
}

/* The "request" of a start on another server: the child's options as Concord's task sends
 * them (NEW). */
static json_t *remote_request(const struct child *ch)
{
	json_t *req = json_object();

	if (ch->arguments)
		json_object_set(req, "arguments", ch->arguments);
	if (ch->entry)
		json_object_set_new(req, "entryPoint", json_string(ch->entry));
	if (ch->profiles)
		json_object_set(req, "activeProfiles", ch->profiles);
	if (ch->tags)
		json_object_set(req, "tags", ch->tags);
	if (ch->out_vars)
		json_object_set(req, "out", ch->out_vars);
	if (ch->requirements)
		json_object_set(req, "requirements", ch->requirements);
	json_object_update(req, ch->switches);
	return req;
}

/* `baseUrl`: the process is started on that server as the apiKey's user there (its rights
 * are checked there); it is nobody's child here and cannot be waited for from here. */
static int start_remote(struct task_call *tc, json_t *in, const struct child *ch, const char *base_url,
			struct err *e)
{
	static const char *const names[] = {"org", "project", "repo", "repoBranchOrTag", "repoCommitId", "startAt"};
	const char *key = json_string_value(json_object_get(in, "apiKey"));
	const char *payload = json_string_value(json_object_get(in, "payload"));
	json_t *att = json_object_get(in, "attachments");
	json_t *req = NULL, *parts = NULL;
	char dir[4096] = "", id[UUID_STR_LEN];
	void *zip = NULL;
	size_t zip_len = 0;
	struct err ignored;
	int rc = -1;

	if (!key || !*key)
		return err_set(e, ERR_INVALID, "concord: 'apiKey' is required with 'baseUrl'");
	if (json_is_true(json_object_get(in, "sync")) || json_is_true(json_object_get(in, "suspend")))
		return err_set(e, ERR_INVALID,
			       "concord: 'sync' and 'suspend' are not supported with 'baseUrl' (a process on another "
			       "server is not waited for)");
	req = remote_request(ch);
	parts = json_object();
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (json_is_string(json_object_get(in, names[i])))
			json_object_set(parts, names[i], json_object_get(in, names[i]));
	if ((payload || (att && !json_is_null(att))) &&
	    (staging_dir(tc, dir, sizeof dir, e) || (payload && stage_payload(tc, payload, dir, e)) ||
	     server_task_concord_attach(tc, att, dir, e) || pack_zip_dir(dir, limits.archive_bytes, &zip, &zip_len, e)))
		goto out;
	if (server_task_concord_remote(base_url, key, zip, zip_len, req, parts, id, e))
		goto out;
	LOG_I("process %s: concord task started process %s on %.200s", tc->r->p.instance_id, id, base_url);
	tc->out = json_pack("{s:b, s:s, s:[s]}", "ok", 1, "id", id, "ids", id);
	rc = 0;
out:
	if (dir[0] && path_remove_tree(dir, &ignored))
		LOG_W("cannot remove %s: %s", dir, ignored.msg);
	free(zip);
	json_decref(req);
	json_decref(parts);
	return rc;
}

static int action_start(struct task_call *tc, json_t *in, bool external, struct err *e)
{
	struct child ch = {0};
	json_t *owned[4] = {0}, *ids = NULL;
	bool from_repo = json_object_get(in, "repo") && !json_is_null(json_object_get(in, "repo"));
	char dir[4096] = "", id[UUID_STR_LEN];
	struct repository repo;
	struct repo_commit commit;
	struct principal who;
	struct err ignored;
	const char *base_url;
	bool other;
	int rc = -1;

	if (opt_str(in, "baseUrl", &base_url, e))
		return -1;
	if (external && !json_is_string(json_object_get(in, "apiKey")))
		return err_set(e, ERR_INVALID, "concord startExternal: 'apiKey' is required");
	if (base_url) {
		rc = child_opts(tc, in, &ch, owned, e) ? -1 : start_remote(tc, in, &ch, base_url, e);
		child_opts_free(owned);
		return rc;
	}
	if (!json_object_get(in, "payload") && !from_repo)
		return err_set(e, ERR_INVALID,
			       "concord start: 'payload' (a folder or ZIP archive in the working directory) or "
			       "'repo' (a repository of the project) is required");
	if (external && json_is_true(json_object_get(in, "suspend")))
		return err_set(e, ERR_INVALID, "concord startExternal: 'suspend' is not supported");
	if (child_opts(tc, in, &ch, owned, e) || acting_user(tc, in, &who, &other, e) ||
	    task_scope_need(&who, SCOPE_PROCESS, SCOPE_START, e) || start_owner(tc, in, &ch, &who, other, from_repo, e))
		goto out;
	ch.scopes = &who.scopes;
	/* After a form with runAs.keep the child is started by who submitted it. */
	ch.as = other || strcmp(who.user.id, tc->r->p.initiator_id) != 0 ? &who.user : NULL;
	ch.external = external;
	if (staging_dir(tc, dir, sizeof dir, e) || stage_start(tc, in, &ch, &repo, &commit, dir, e) ||
	    server_task_concord_attach(tc, json_object_get(in, "attachments"), dir, e) ||
	    create_child(tc, dir, NULL, &ch, "DEFAULT", id, e))
		goto out;
	ids = json_pack("[s]", id);
	rc = finish_start(tc, in, ids, e);
out:
	if (dir[0] && path_remove_tree(dir, &ignored))
		LOG_W("cannot remove %s: %s", dir, ignored.msg);
	json_decref(ids);
	child_opts_free(owned);
	return rc;
}

/* A fork made with `apiKey`: its owner must be allowed to start in the parent's project
 * (the key's scopes too; the fork is held to them). */
static int fork_rights(struct task_call *tc, struct child *ch, struct principal *who, struct err *e)
{
	if (task_scope_need(who, SCOPE_PROCESS, SCOPE_START, e))
		return -1;
	ch->scopes = &who->scopes;
	if (ch->has_project && store_project_get(tc->c, tc->r->p.project_id, &ch->project, e))
		return -1;
	return rbac_process_start(tc->c, who, &ch->org, ch->has_project ? &ch->project : NULL, false, e);
}

/* A fork of a small parent folder (tar: the parent's, packed) held in memory, without its
 * _attachments (the parent's own state and attachments stay with the parent): 1 when it
 * was started so, 0 when the folder is too large (staged on disk instead), < 0 on error. */
static int fork_in_memory(struct task_call *tc, const void *tar, size_t len, const struct child *ch,
			  char id[UUID_STR_LEN], struct err *e)
{
	struct memdir md;
	int rc;

	memdir_init(&md);
	if (pack_tar_files(tar, len, START_MEM_MAX, &md, e)) {
		memdir_cleanup(&md);
		return e->code == ERR_TOO_LARGE ? 0 : -1;
	}
	memdir_drop(&md, "_attachments");
	rc = create_child(tc, NULL, &md, ch, "DEFAULT", id, e);
	memdir_cleanup(&md);
	return rc ? -1 : 1;
}

/* One fork spec (the call itself, or one entry of `forks`): `instances` copies. */
static int fork_one(struct task_call *tc, json_t *spec, const void *tar, size_t len, json_t *resumed, json_t *ids,
		    struct err *e)
{
	struct child ch = {0};
	json_t *owned[4] = {0};
	json_int_t n = 1;
	struct principal who;
	struct err ignored;
	bool other = false;
	int rc = 0;

	if (json_object_get(spec, "instances") &&
	    (!json_is_integer(json_object_get(spec, "instances")) ||
	     (n = json_integer_value(json_object_get(spec, "instances"))) < 1 || n > 1000))
		return err_set(e, ERR_INVALID, "'instances' must be a number from 1 to 1000");
	if (child_opts(tc, spec, &ch, owned, e) || store_org_get(tc->c, tc->r->p.org_id, &ch.org, e)) {
		child_opts_free(owned);
		return -1;
	}
	if (tc->r->p.project_id[0]) {
		if (str_fmt(ch.project.id, sizeof ch.project.id, "%s", tc->r->p.project_id)) {
			child_opts_free(owned);
			return err_set(e, ERR_INTERNAL, "project id too long: %s", tc->r->p.project_id);
		}
		ch.has_project = true;
	}
	if (json_object_get(spec, "apiKey") && !json_is_null(json_object_get(spec, "apiKey")) &&
	    (acting_user(tc, spec, &who, &other, e) || fork_rights(tc, &ch, &who, e))) {
		child_opts_free(owned);
		return -1;
	}
	ch.as = other ? &who.user : NULL;
	if (!ch.entry)
		ch.entry = tc->r->p.entry_point;
	ch.resumed = resumed;
	for (json_int_t i = 0; i < n && rc == 0; i++) {
		char dir[4096] = "", id[UUID_STR_LEN];
		char *att = NULL;
		int mem = fork_in_memory(tc, tar, len, &ch, id, e);
		if (mem) {
			rc = mem < 0 ? -1 : 0;
			if (rc == 0)
				json_array_append_new(ids, json_string(id));
			continue;
		}
		rc = staging_dir(tc, dir, sizeof dir, e);
		if (rc == 0)
			rc = pack_restore(tar, len, dir, e);
		/* The parent's own state and attachments stay with the parent. */
		if (rc == 0 && asprintf(&att, "%s/_attachments", dir) > 0 && path_remove_tree(att, &ignored) == 0)
			rc = create_child(tc, dir, NULL, &ch, "DEFAULT", id, e);
		else if (rc == 0)
			rc = err_set(e, ERR_INTERNAL, "cannot prepare the fork's payload: %s", ignored.msg);
		if (rc == 0)
			json_array_append_new(ids, json_string(id));
		free(att);
		if (dir[0] && path_remove_tree(dir, &ignored))
			LOG_W("cannot remove %s: %s", dir, ignored.msg);
	}
	child_opts_free(owned);
	return rc;
}

static int action_fork(struct task_call *tc, json_t *in, struct err *e)
{
	json_t *forks = json_object_get(in, "forks"), *spec, *ids = json_array(), *resumed = NULL;
	void *tar = NULL;
	size_t len = 0, i;
	int rc = -1;

	if (((json_object_get(in, "payload") || json_object_get(in, "repo")) &&
	     err_set(e, ERR_INVALID,
		     "concord fork: a fork runs the parent's payload; use action 'start' for 'payload' or 'repo'")) ||
	    (json_object_get(in, "baseUrl") &&
	     err_set(e, ERR_INVALID, "concord fork: a fork runs on this server; 'baseUrl' is for 'start'")) ||
	    (json_object_get(in, "attachments") &&
	     err_set(e, ERR_INVALID, "concord fork: a fork runs the parent's files; 'attachments' is for 'start'")))
		goto out;
	if (forks && (!json_is_array(forks) || json_array_size(forks) == 0)) {
		err_set(e, ERR_INVALID, "'forks' must be a non-empty list of fork options");
		goto out;
	}
	/* The parent's payload is its working directory as it started or last suspended; the
	 * arguments it resumed with since (a form's values) are added as Concord has them. */
	if (store_process_payload(tc->c, tc->r->p.instance_id, &tar, &len, e) ||
	    store_process_resume_args(tc->c, tc->r->p.instance_id, &resumed, e))
		goto out;
	json_object_del(resumed, RESUME_FILES_KEY);
	if (!forks)
		rc = fork_one(tc, in, tar, len, resumed, ids, e);
	else
		json_array_foreach(forks, i, spec)
		{
			if (!json_is_object(spec)) {
				rc = err_set(e, ERR_INVALID, "'forks' entry %zu is not an object", i);
				break;
			}
			/* A fork's own options over the call's (outVars, tags, arguments, …). */
			json_t *merged = json_copy(in);
			json_object_del(merged, "forks");
			json_object_update(merged, spec);
			rc = fork_one(tc, merged, tar, len, resumed, ids, e);
			json_decref(merged);
			if (rc)
				break;
		}
	if (rc == 0 || json_array_size(ids)) {
		/* Children already stored are started even when a later fork failed. */
		queue_wake(tc->r->q);
	}
	if (rc == 0)
		rc = finish_start(tc, in, ids, e);
out:
	free(tar);
	json_decref(resumed);
	json_decref(ids);
	return rc;
}

static int action_kill(struct task_call *tc, json_t *in, struct err *e)
{
	json_t *ids = server_task_concord_ids(json_object_get(in, "instanceId"), "instanceId", e), *v;
	char by[200];
	size_t i;
	int rc = -1;

	if (!ids || server_task_concord_check(tc, ids, e))
		goto out;
	str_fmt_cut(by, sizeof by, "process %s", tc->r->p.instance_id);
	json_array_foreach(ids, i, v) if (strcmp(json_string_value(v), tc->r->p.instance_id) == 0)
	{
		err_set(e, ERR_INVALID, "concord kill: a process cannot kill itself (%s)", json_string_value(v));
		goto out;
	}
	json_array_foreach(ids, i, v)
	{
		if (children_kill(tc->r->q, tc->c, json_string_value(v), by, e))
			goto out;
		audit(tc, "STOP", json_string_value(v), NULL);
	}
	if (json_is_true(json_object_get(in, "sync")))
		tc->wait = json_pack("{s:s, s:O}", "mode", "kill", "ids", ids);
	rc = 0;
out:
	json_decref(ids);
	return rc;
}

int server_task_concord(struct task_call *tc, struct err *e)
{
	const char *action;

	if (tc->method)
		return server_task_concord_method(tc, e);
	if (!json_is_object(tc->args))
		return err_set(e, ERR_INVALID, "concord: 'in' must be an object");
	action = json_string_value(json_object_get(tc->args, "action"));
	if (!action)
		return err_set(e, ERR_INVALID, "concord: 'action' is required (start, fork or kill)");
	if (json_is_true(json_object_get(tc->args, "sync")) && json_is_true(json_object_get(tc->args, "suspend")) &&
	    !tc->suspendable)
		return err_set(e, ERR_INVALID, "concord: a process cannot suspend from a script; call it from a step");
	if (strcmp(action, "start") == 0 || strcmp(action, "startExternal") == 0)
		return action_start(tc, tc->args, action[5] == 'E', e);
	if (strcmp(action, "fork") == 0)
		return action_fork(tc, tc->args, e);
	if (strcmp(action, "kill") == 0)
		return action_kill(tc, tc->args, e);
	if (strcmp(action, "createApiKey") == 0 || strcmp(action, "createOrUpdateApiKey") == 0)
		return server_task_concord_apikey(tc, action[6] == 'O', e);
	return err_set(e, ERR_INVALID,
		       "concord: unknown action '%.64s' (start, startExternal, fork, kill, createApiKey or "
		       "createOrUpdateApiKey)",
		       action);
}
