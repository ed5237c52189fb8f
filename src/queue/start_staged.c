/* Storing a new process from a staged working directory (start_staged.h): the definition
 * loaded as the runner will load it, its start settings read once (flow/start_def.h), the
 * folder packed into the payload and the process stored ENQUEUED. */
#include "queue/start_staged.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/jsonx.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "crypto/session.h"
#include "flow/model.h"
#include "flow/start_def.h"
#include "flow/value.h"
#include "queue/main_json.h"
#include "queue/start_imports.h"
#include "queue/start_policy.h"

#define MAX_PROFILES 64

/* The definition of s's folder with the profiles of cfg; errors keep model_load's codes.
 * *needs_folder: the definition held in memory has imports (load it from a folder). */
static struct model *load_model(const struct staged_start *s, json_t *cfg, const struct model_importer *importer,
				bool *needs_folder, struct err *e)
{
	const char *names[MAX_PROFILES];
	struct model_opts mo = {.path = s->dir,
				.server_imports = true,
				.importer = importer,
				.files = s->files,
				.needs_folder = needs_folder};
	json_t *profiles = json_object_get(cfg, "activeProfiles"), *v;
	size_t i;

	json_array_foreach(profiles, i, v)
	{
		if (i >= MAX_PROFILES) {
			err_set(e, ERR_INVALID, "too many active profiles (at most %d)", MAX_PROFILES);
			return NULL;
		}
		names[i] = json_string_value(v) ? json_string_value(v) : "";
		mo.n_profiles = i + 1;
	}
	mo.profiles = mo.n_profiles ? names : NULL;
	return model_load(&mo, e);
}

/* Merges a stored cfg (JSON text; NULL: none) into into. */
static int merge_cfg(json_t *into, char *text, const char *whose, struct err *e)
{
	json_t *v;
	int rc = 0;

	if (!text)
		return 0;
	v = jsonx_parse(text, strlen(text), 1000, e);
	free(text);
	if (!v)
		return -1;
	if (json_is_object(v))
		rc = value_merge(into, v, e);
	else if (!json_is_null(v))
		rc = err_set(e, ERR_INTERNAL, "the %s's cfg is not a JSON object", whose);
	json_decref(v);
	return rc;
}

/* The org's cfg with the project's over it, under START_DEF_ORG_PROJECT_CFG in cfg (what a
 * copied _main.json held there is replaced: a child may run in another project); the
 * activeProfiles it names when the request names none.  Then cfg is saved again. */
static int org_project_cfg(struct store_conn *c, const struct staged_start *s, json_t *cfg, struct err *e)
{
	char *meta = NULL, *text = NULL;
	json_t *d = json_object(), *profiles;
	bool changed;
	int rc;

	if (!d)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = store_org_meta_cfg(c, s->org->id, &meta, &text, e);
	free(meta);
	if (rc == 0)
		rc = merge_cfg(d, text, "organization", e);
	if (rc == 0 && s->project) {
		rc = store_project_meta_cfg(c, s->project->id, &meta, &text, e);
		free(meta);
		if (rc == 0)
			rc = merge_cfg(d, text, "project", e);
	}
	/* Saved again only when this changed it (most starts have no org or project cfg). */
	changed = json_object_del(cfg, START_DEF_ORG_PROJECT_CFG) == 0;
	profiles = json_object_get(d, "activeProfiles");
	if (rc == 0 && !json_object_get(cfg, "activeProfiles") && json_is_array(profiles))
		changed = json_object_set(cfg, "activeProfiles", profiles) == 0 || changed;
	if (rc == 0 && json_object_size(d))
		changed = json_object_set(cfg, START_DEF_ORG_PROJECT_CFG, d) == 0 || changed;
	json_decref(d);
	if (rc || !changed)
		return rc;
	return s->files ? main_json_save_files(s->files, cfg, e) : main_json_save(s->dir, cfg, e);
}

/* The process record's repo* and commit* fields. */
static json_t *repo_fields(const struct staged_start *s)
{
	const struct repository *r = s->repo;

	if (!r)
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "repoId", r->id, "repoName", r->name, "repoUrl",
			 r->url, "repoPath", r->path, "commitId", s->commit ? s->commit->id : "", "commitMsg",
			 s->commit ? s->commit->message : "", "commitAuthor", s->commit ? s->commit->author : "");
}

static int store_new(struct store_conn *c, const unsigned char session_key[32], const struct staged_start *s,
		     struct start_def *d, void *payload, size_t payload_len, struct err *e)
{
	struct process_new pn = {.payload = payload, .payload_len = payload_len};
	struct process *p = &pn.p;
	char token[SESSION_TOKEN_LEN];
	uint8_t hash[32];
	int rc;

	p->timeout_s = d->timeout_s;
	p->suspend_timeout_s = d->suspend_timeout_s;
	pn.exclusive_group = d->exclusive_group;
	pn.exclusive_mode = d->exclusive_mode;
	if (str_fmt(p->instance_id, sizeof p->instance_id, "%s", s->instance_id) ||
	    str_fmt(p->kind, sizeof p->kind, "%s", s->kind ? s->kind : "DEFAULT") ||
	    str_fmt(p->parent_instance_id, sizeof p->parent_instance_id, "%s",
		    s->parent_instance_id ? s->parent_instance_id : "") ||
	    str_fmt(p->org_id, sizeof p->org_id, "%s", s->org->id) ||
	    str_fmt(p->project_id, sizeof p->project_id, "%s", s->project ? s->project->id : "") ||
	    str_fmt(p->initiator_id, sizeof p->initiator_id, "%s", s->initiator_id) ||
	    str_fmt(p->initiator, sizeof p->initiator, "%s", s->initiator))
		return err_set(e, ERR_INTERNAL, "process %s: an id or a name is too long", s->instance_id);
	if (str_fmt(p->entry_point, sizeof p->entry_point, "%s", d->entry))
		return err_set(e, ERR_INVALID, "entry point '%.64s...' too long (limit %zu bytes)", d->entry,
			       sizeof p->entry_point - 1);
	p->start_at = s->start_at;
	p->tags = s->tags;
	/* Concord's initial metadata: configuration.meta, then the request's meta part. */
	p->meta = d->meta ? json_deep_copy(d->meta) : json_object();
	if (s->meta)
		json_object_update(p->meta, s->meta);
	json_object_set_new(p->meta, "entryPoint", json_string(d->entry));
	p->handlers = d->handlers;
	pn.repo = repo_fields(s);
	pn.triggered_by = s->triggered_by;
	pn.scopes = s->scopes;
	pn.audit = s->audit;
	session_token(session_key, s->instance_id, token);
	session_token_hash(token, hash);
	sodium_memzero(token, sizeof token);
	pn.session_hash = hash;
	rc = store_process_create(c, &pn, e);
	json_decref(p->meta);
	json_decref(pn.repo);
	return rc;
}

/* The process and what it keeps of its policy (and the policy's warnings in its log), in one
 * transaction: the dispatcher never sees the process without its limits. */
static int store_with_policy(struct store_conn *c, const unsigned char session_key[32], const struct staged_start *s,
			     const struct start_policy *pol, struct start_def *d, void *payload, size_t payload_len,
			     struct err *e)
{
	int rc;

	if (!pol->rules)
		return store_new(c, session_key, s, d, payload, payload_len, e);
	if (store_tx_begin_rows(c, e))
		return -1;
	rc = start_policy_count(c, pol, s, e);
	if (rc == 0)
		rc = store_new(c, session_key, s, d, payload, payload_len, e);
	if (rc == 0)
		rc = start_policy_record(c, pol, s->instance_id, e);
	if (rc == 0) /* before any dispatcher sees the process: first in its log */
		start_policy_warn_log(c, pol, s->instance_id);
	if (rc == 0)
		rc = store_tx_commit(c, e);
	if (rc)
		store_tx_rollback(c);
	return rc;
}

int start_ready_path(const char *work_dir, const char *id, char *out, size_t cap, struct err *e)
{
	if (str_fmt(out, cap, "%s/ready/%s", work_dir, id))
		return err_set(e, ERR_INTERNAL, "work folder path too long (limit %zu bytes): %s", cap - 64, work_dir);
	return 0;
}

/* The folder held in memory written to a staging folder (dir, cap bytes), and *local a copy
 * of s that names it: the start goes on as a folder start. */
static int spill(const struct staged_start *s, struct staged_start *local, char *dir, size_t cap, struct err *e)
{
	if (!s->work_dir)
		return err_set(e, ERR_INTERNAL, "a start held in memory needs a work folder");
	if (start_staging_dir(s->work_dir, "mem-", dir, cap, e) || memdir_write(s->files, dir, e))
		return -1;
	*local = *s;
	local->dir = dir;
	local->files = NULL;
	return 0;
}

/* Renames the staged folder to <work>/ready/<id>; the stored payload serves when it fails. */
static int hand_off(const struct staged_start *s, char *ready, size_t cap)
{
	struct err e;
	char parent[4096];

	if (start_ready_path(s->work_dir, s->instance_id, ready, cap, &e) ||
	    str_fmt(parent, sizeof parent, "%s/ready", s->work_dir))
		return -1;
	if (rename(s->dir, ready) == 0)
		return 0;
	if (errno == ENOENT && path_mkdirs(parent, 0700, &e) == 0 && rename(s->dir, ready) == 0)
		return 0;
	LOG_W("process %s: cannot hand its folder to the supervisor (the payload serves): %s", s->instance_id,
	      strerror(errno));
	return -1;
}

int start_ready_take(const char *work_dir, const char *id, const char *workdir, struct err *e)
{
	char ready[4096];

	if (start_ready_path(work_dir, id, ready, sizeof ready, e))
		return -1;
	if (rename(ready, workdir) == 0)
		return 1;
	if (errno == ENOENT)
		return 0;
	return err_set(e, ERR_INTERNAL, "cannot move %s to %s: %s", ready, workdir, strerror(errno));
}

void start_ready_drop(const char *work_dir, const char *id)
{
	char ready[4096];
	struct err e;

	if (start_ready_path(work_dir, id, ready, sizeof ready, &e) || path_remove_tree(ready, &e))
		LOG_W("process %s: cannot remove its handed-off folder: %s", id, e.msg);
}

/* The definition, loaded as the runner will; a folder held in memory whose definition has
 * imports is written to disk first (spill). */
static struct model *definition(const struct staged_start **s, struct staged_start *local, char *spilled, size_t cap,
				json_t *cfg, struct start_imports *si, struct err *e)
{
	bool needs_folder = false;
	struct model *m = load_model(*s, cfg, (*s)->repos ? &si->importer : NULL, &needs_folder, e);

	if (!m && needs_folder && !spilled[0]) {
		if (spill(*s, local, spilled, cap, e)) /* the disk's error, not the definition's */
			return NULL;
		*s = local;
		m = load_model(*s, cfg, (*s)->repos ? &si->importer : NULL, NULL, e);
	}
	if (m)
		return m;
	if (e->code == ERR_LIMIT)
		e->code = ERR_TOO_LARGE;
	else if (e->code != ERR_NOT_FOUND)
		e->code = ERR_INVALID;
	if ((*s)->error_prefix)
		err_prefix(e, "%s", (*s)->error_prefix);
	return NULL;
}

int start_staged(struct store_conn *c, const unsigned char session_key[32], const struct staged_start *s,
		 struct err *e)
{
	json_t *cfg = s->files ? main_json_load_files(s->files, e) : main_json_load(s->dir, e);
	struct model *m = NULL;
	struct start_def d = {0};
	struct start_imports si;
	struct start_policy pol = {0};
	struct staged_start local;
	bool timeout_override = false;
	void *payload = NULL;
	size_t payload_len = 0;
	char ready[4096] = "", spilled[4096] = "";
	int rc = -1;

	if (!cfg)
		return -1;
	if (start_imports_init(&si, c, s, e)) {
		json_decref(cfg);
		return -1;
	}
	if (org_project_cfg(c, s, cfg, e) || start_policy_load(c, s, &pol, e))
		goto out;
	/* The policy's workspace and state rules walk a folder. */
	if (s->files && pol.rules) {
		if (spill(s, &local, spilled, sizeof spilled, e))
			goto out;
		s = &local;
	}
	if (start_policy_before(c, &pol, s, cfg, &timeout_override, e) || (pol.rules && main_json_save(s->dir, cfg, e)))
		goto out;
	if (!(m = definition(&s, &local, spilled, sizeof spilled, cfg, &si, e)))
		goto out;
	if (start_def_read(m, cfg, timeout_override ? -1 : s->timeout_s, s->suspend_timeout_s, s->project != NULL, &d,
			   e)) {
		e->code = ERR_INVALID;
		goto out;
	}
	if (start_policy_timeout(&pol, d.timeout_s, e) || start_policy_container(&pol, cfg, e))
		goto out;
	if (s->files ? pack_files(s->files, limits.archive_bytes, &payload, &payload_len, e)
		     : pack_dir(s->dir, limits.archive_bytes, &payload, &payload_len, e))
		goto out;
	/* Before the row exists, so that no dispatcher can claim the process without it. */
	if (!s->files && s->work_dir && hand_off(s, ready, sizeof ready))
		ready[0] = '\0';
	rc = store_with_policy(c, session_key, s, &pol, &d, payload, payload_len, e);
	if (rc == 0 && start_imports_record(&si, c, s->instance_id, e))
		LOG_W("process %s: imports not recorded: %s", s->instance_id, e->msg);
	if (rc && ready[0] && rename(ready, s->dir) != 0) {
		struct err ignored;
		if (path_remove_tree(ready, &ignored))
			LOG_W("cannot remove %s: %s", ready, ignored.msg);
	}
out:
	if (spilled[0]) {
		struct err ignored;
		if (path_remove_tree(spilled, &ignored))
			LOG_W("cannot remove %s: %s", spilled, ignored.msg);
	}
	start_policy_cleanup(&pol);
	start_imports_cleanup(&si);
	free(payload);
	start_def_cleanup(&d);
	model_free(m);
	json_decref(cfg);
	return rc;
}

int start_staging_dir(const char *work_dir, const char *prefix, char *out, size_t cap, struct err *e)
{
	char id[UUID_STR_LEN];
	int n;

	uuid_v4(id);
	n = snprintf(out, cap, "%s/tmp/%s%s", work_dir, prefix ? prefix : "", id);
	if (n < 0 || (size_t)n >= cap)
		return err_set(e, ERR_INTERNAL, "staging folder path too long");
	return path_mkdirs(out, 0700, e);
}
