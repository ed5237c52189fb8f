/* Clones of repositories: where they live, when they are fetched, which commit a start
 * uses (repo/repo.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/path.h"
#include "git/git_api.h"
#include "repo/internal.h"

/* The fetch child works in its own folder: every path it gets is absolute. */
static char *abs_opt(const char *s, const char *what, struct err *e)
{
	char *d;

	if (!s || !*s)
		return NULL;
	if (!(d = realpath(s, NULL)))
		err_set(e, ERR_INVALID, "%s %s: %s", what, s, strerror(errno));
	return d;
}

struct repos *repos_open(const struct repos_cfg *cfg, struct err *e)
{
	struct repos *rs = calloc(1, sizeof *rs);

	if (!rs) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&rs->pool_lock, NULL);
	pthread_mutex_init(&rs->flight_lock, NULL);
	pthread_cond_init(&rs->flight_done, NULL);
	rs->cfg = *cfg;
	rs->cfg.data_dir = rs->cfg.exe = rs->cfg.ca_file = rs->cfg.known_hosts = rs->cfg.local_dirs = NULL;
	rs->cfg.imports_git_base_url = rs->cfg.maven_repos = NULL;
	if ((cfg->imports_git_base_url && !(rs->cfg.imports_git_base_url = strdup(cfg->imports_git_base_url))) ||
	    (cfg->maven_repos && !(rs->cfg.maven_repos = strdup(cfg->maven_repos)))) {
		err_set(e, ERR_INTERNAL, "out of memory");
		repos_close(rs);
		return NULL;
	}
	if (!(rs->cfg.data_dir = abs_opt(cfg->data_dir, "data folder", e)) ||
	    !(rs->cfg.exe = cfg->exe && *cfg->exe == '/' ? strdup(cfg->exe) : abs_opt(cfg->exe, "accord binary", e)) ||
	    (cfg->ca_file && !(rs->cfg.ca_file = abs_opt(cfg->ca_file, "--git-ca-file", e))) ||
	    (cfg->known_hosts && !(rs->cfg.known_hosts = abs_opt(cfg->known_hosts, "--git-known-hosts", e)))) {
		if (e && !e->code)
			err_set(e, ERR_INVALID, "repositories need a data folder and the accord binary");
		repos_close(rs);
		return NULL;
	}
	if (asprintf(&rs->dir, "%s/repos", rs->cfg.data_dir) < 0 || asprintf(&rs->home, "%s/.home", rs->dir) < 0) {
		rs->dir = rs->home = NULL;
		err_set(e, ERR_INTERNAL, "out of memory");
		repos_close(rs);
		return NULL;
	}
	if (repo_local_dirs_set(rs, cfg->local_dirs, e)) {
		repos_close(rs);
		return NULL;
	}
	if (path_mkdirs(rs->home, 0700, e)) {
		err_prefix(e, "repositories");
		repos_close(rs);
		return NULL;
	}
	return rs;
}

void repos_close(struct repos *rs)
{
	if (!rs)
		return;
	repo_drop_clones(rs, NULL);
	repo_flights_free(rs);
	pthread_mutex_destroy(&rs->pool_lock);
	pthread_mutex_destroy(&rs->flight_lock);
	pthread_cond_destroy(&rs->flight_done);
	free((char *)rs->cfg.data_dir);
	free((char *)rs->cfg.exe);
	free((char *)rs->cfg.ca_file);
	free((char *)rs->cfg.known_hosts);
	free((char *)rs->cfg.imports_git_base_url);
	free((char *)rs->cfg.maven_repos);
	repo_local_dirs_free(rs);
	free(rs->dir);
	free(rs->home);
	free(rs);
}

/* Repository ids are UUIDs: anything else never becomes a path. */
static bool plain_id(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdefABCDEF-", id[i]))
			return false;
	return true;
}

static char *id_path(const struct repos *rs, const char *repo_id, const char *suffix, struct err *e)
{
	char *p;

	if (!plain_id(repo_id)) {
		err_set(e, ERR_INVALID, "invalid repository id: %.64s", repo_id);
		return NULL;
	}
	if (asprintf(&p, "%s/%s%s", rs->dir, repo_id, suffix) < 0) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	return p;
}

char *repo_clone_dir(const struct repos *rs, const char *repo_id, struct err *e)
{
	return id_path(rs, repo_id, "", e);
}

char *repo_lock_path(const struct repos *rs, const char *repo_id, struct err *e)
{
	return id_path(rs, repo_id, ".lock", e);
}

/* The ref or commit r is configured with (NULL ref and commit: the default branch). */
static int resolve_configured(git_repository *g, const struct repository *r, struct repo_commit *out, struct err *e)
{
	int rc = r->commit_id[0] ? repo_resolve_commit(g, r, r->commit_id, out, e)
				 : repo_resolve_ref(g, r, r->branch[0] ? r->branch : NULL, out, e);
	return rc > 0 ? -ERR_INVALID : rc;
}

/* Records the fetch in the store with the configured ref's commit (into *out when not NULL). */
static int record(struct repos *rs, struct store_conn *c, const struct repository *r, struct repo_commit *out,
		  struct err *e)
{
	struct repo_commit cm;
	git_repository *g = NULL;
	int rc = repo_open_clone(rs, r, &g, e);

	if (rc == 0)
		rc = resolve_configured(g, r, &cm, e);
	repo_close_clone(rs, r->id, g);
	if (rc == 0 && r->project_id[0]) /* an import's clone has no row */
		rc = store_repository_fetched(c, r->id, dt_now_ms(), cm.id, e);
	if (rc == 0 && out)
		*out = cm;
	return rc;
}

int repo_fetch_for(struct repos *rs, struct store_conn *c, const struct repository *r, const char *user_id,
		   int64_t asked_ns, struct repo_commit *out, struct err *e)
{
	int rc = repo_flight_fetch(rs, c, r, user_id, asked_ns, false, e);

	return rc ? rc : record(rs, c, r, out, e);
}

int repo_fetch(struct repos *rs, struct store_conn *c, const struct repository *r, struct repo_commit *out,
	       struct err *e)
{
	return repo_fetch_for(rs, c, r, NULL, 0, out, e);
}

/* A fetch for a start, one flight with the refreshes of r: the store's record is kept up
 * to date, but a configured ref that does not resolve does not fail a start that asked for
 * another one. */
static int fetch_for_start(struct repos *rs, struct store_conn *c, const struct repository *r, struct err *e)
{
	struct err ignored = {0};
	int rc = repo_flight_fetch(rs, c, r, NULL, 0, true, e);

	if (rc)
		return rc;
	if (record(rs, c, r, NULL, &ignored))
		LOG_D("repository %s: fetched, not recorded: %s", r->id, ignored.msg);
	return 0;
}

static int resolve(struct repos *rs, const struct repository *r, const char *ref, const char *commit,
		   struct repo_commit *out, struct err *e)
{
	git_repository *g = NULL;
	int rc = repo_open_clone(rs, r, &g, e);

	if (rc == 0)
		rc = commit ? repo_resolve_commit(g, r, commit, out, e) : repo_resolve_ref(g, r, ref, out, e);
	repo_close_clone(rs, r->id, g);
	return rc;
}

/* Whether the configured ref resolved here (at: this node's clone's fetch) is older than
 * what a later fetch by another node (a refresh through it) recorded in the store: then
 * this node fetches too, so a refresh through any node is seen by starts through every one. */
static bool behind_the_store(const struct repository *r, const char *ref, const char *commit, int64_t at,
			     const struct repo_commit *here)
{
	bool configured = !commit && (!ref || strcmp(ref, r->branch) == 0);

	return configured && r->fetched_commit[0] && r->fetched_at > at && strcmp(here->id, r->fetched_commit) != 0;
}

int repo_prepare(struct repos *rs, struct store_conn *c, const struct repository *r, const char *branch_or_tag,
		 const char *commit_id, struct repo_commit *out, struct err *e)
{
	const char *commit = NULL, *ref = NULL;
	int64_t at = repo_fetched_at(rs, r->id);
	bool fetched = false;
	char local[4096];
	int rc;

	/* Also for a clone fetched before the operator narrowed --repo-local-dirs. */
	if (repo_url_local_check(rs, r->url, local, sizeof local, e))
		return -1;
	if (commit_id && *commit_id)
		commit = commit_id;
	else if (branch_or_tag && *branch_or_tag)
		ref = branch_or_tag;
	else if (r->commit_id[0])
		commit = r->commit_id;
	else if (r->branch[0])
		ref = r->branch;
	if (rs->cfg.offline && at == 0)
		return err_set(e, ERR_UNAVAILABLE, "%s is not in the cache (offline)", r->name);
	if (rs->cfg.offline) {
		rc = resolve(rs, r, ref, commit, out, e);
		return rc > 0 ? -ERR_INVALID : rc;
	}
	/* Someone's fetch of r runs: a start does not queue behind it when the clone has what
	 * it wants (a new ref or commit falls through to the fetch below). */
	if (at != 0 && repo_flight_running(rs, r->id) && resolve(rs, r, ref, commit, out, e) == 0)
		return 0;
	if (at == 0 || (!commit && (rs->cfg.fetch_max_age_s == 0 ||
				    dt_now_ms() - at >= (int64_t)rs->cfg.fetch_max_age_s * 1000))) {
		if ((rc = fetch_for_start(rs, c, r, e)))
			return rc;
		fetched = true;
	}
	rc = resolve(rs, r, ref, commit, out, e);
	if (rc == 0 && !fetched && behind_the_store(r, ref, commit, at, out))
		rc = 1;
	if (rc == 1 && !fetched) { /* a new branch, tag or commit, or a newer one elsewhere: fetch once */
		if ((rc = fetch_for_start(rs, c, r, e)))
			return rc;
		rc = resolve(rs, r, ref, commit, out, e);
	}
	return rc > 0 ? -ERR_INVALID : rc;
}

void repo_forget(struct repos *rs, const char *repo_id)
{
	struct err e = {0};
	char *dir = repo_clone_dir(rs, repo_id, &e), *lock = dir ? repo_lock_path(rs, repo_id, &e) : NULL;

	repo_drop_clones(rs, repo_id);

	if (!dir || !lock)
		LOG_W("repository %.64s: cannot remove its clone: %s", repo_id, e.msg);
	else if (path_remove_tree(dir, &e))
		LOG_W("repository %s: cannot remove its clone: %s", repo_id, e.msg);
	else if (unlink(lock) != 0 && errno != ENOENT)
		LOG_W("repository %s: cannot remove %s: %s", repo_id, lock, strerror(errno));
	free(dir);
	free(lock);
}
