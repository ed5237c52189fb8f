#ifndef ACCORD_REPO_REPO_H
#define ACCORD_REPO_REPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "crypto/masterkey.h"
#include "flow/model.h"
#include "store/repositories.h"
#include "store/secrets.h"
#include "store/store.h"

/* Git clones of repositories (issue 13, docs/operations.md "Repositories").
 *
 * Each repository has one bare clone per node in <data>/repos/<id>/, shared by every
 * process of that repository.  A fetch runs in a child process (`accord git-fetch`,
 * posix_spawn'd with a clean environment) that gets the credentials over a pipe and is
 * killed when it takes longer than the fetch timeout, so a slow or hanging remote never
 * blocks anything but the requests that wait for that repository.  Fetches of one
 * repository are serialized (flock on <data>/repos/<id>.lock); different repositories fetch
 * in parallel.  Reading a fetched commit (resolve, checkout, read a file) happens in the
 * server with libgit2 (loaded on demand, git/git_api.h), on local objects only.
 *
 * The repository's secret (KEY_PAIR for ssh:// and scp-like URLs, USERNAME_PASSWORD for
 * https://) is opened with the master key just before the fetch and handed to the child
 * only; its plaintext never reaches a log, an event or an error message. */

struct repos_cfg {
	const char *data_dir;		    /* repos/ beneath it */
	const char *exe;		    /* absolute path of the accord binary (fetch child) */
	const struct masterkey *master_key; /* BORROWED: opens repository secrets */
	unsigned fetch_timeout_s;	    /* --repo-fetch-timeout (default 60) */
	unsigned fetch_max_age_s;	    /* --repo-fetch-max-age: a start re-fetches a branch
					       whose clone is older (default 30; 0: every start) */
	const char *ca_file;		    /* --git-ca-file: extra CA bundle for https (NULL: system) */
	const char *known_hosts; /* --git-known-hosts: ssh host keys to verify (NULL: accept any, as Concord) */
	/* `imports` (repo/imports.c, repo/mvn.c) */
	const char *imports_git_base_url; /* --imports-git-base-url: `git: {name: org/repo}` (NULL: none) */
	const char *maven_repos;	  /* --maven-repository: URLs, comma-separated (NULL: none) */
	bool offline;			  /* `accord run --offline`: clones and the artifact cache only */
	unsigned fetches_per_user; /* --repo-fetches-per-user: a user's refreshes and validates in
				      flight on this node (0: no limit) */
	const char *local_dirs;	 /* --repo-local-dirs: ':'-separated folders that file:// URLs and paths may
				    name (NULL: none, local repositories are refused) */
};

struct repos;

struct repos *repos_open(const struct repos_cfg *cfg, struct err *e);
void repos_close(struct repos *rs);

/* The commit a start or a refresh uses. */
struct repo_commit {
	char id[41];
	char author[256];
	char message[1024]; /* the first 1023 bytes of the message */
};

/* Fetches r now (refresh, create): into its bare clone, creating it when missing; then
 * resolves the configured branch/commit into *out (may be NULL) and records the fetch in
 * the store.  Errors: ERR_INVALID with the git error for a bad URL, an unknown branch or
 * commit, refused credentials; ERR_UNAVAILABLE "… timed out after N s". */
int repo_fetch(struct repos *rs, struct store_conn *c, const struct repository *r, struct repo_commit *out,
	       struct err *e) WUR;
/* repo_fetch on behalf of user_id (NULL: the server), asked at asked_ns (dt_mono_ns; 0:
 * now): one flight per repository on this node — a fetch of the same URL and secret that
 * runs, or that ran and ended after asked_ns (a request that waited for a fetch worker
 * meanwhile), is shared, its result taken instead of fetching again; a process start's
 * own fetch is one of them.  A user who already leads fetches_per_user fetches gets
 * ERR_TOO_MANY naming --repo-fetches-per-user. */
int repo_fetch_for(struct repos *rs, struct store_conn *c, const struct repository *r, const char *user_id,
		   int64_t asked_ns, struct repo_commit *out, struct err *e) WUR;

/* The commit a process start uses: branch_or_tag / commit_id override the repository's
 * configuration (NULL: the configured one).  Fetches first when the clone is missing,
 * when a branch is wanted and the clone is older than fetch_max_age_s, or when the
 * commit is not in the clone.  While a fetch of r runs on this node (someone's refresh),
 * a start whose ref or commit is in the current clone uses it instead of waiting.
 * Unknown branch/tag/commit: ERR_INVALID. */
int repo_prepare(struct repos *rs, struct store_conn *c, const struct repository *r, const char *branch_or_tag,
		 const char *commit_id, struct repo_commit *out, struct err *e) WUR;

/* Writes the tree of commit (its r->path sub-folder when set) into dest, an existing
 * empty folder: regular files (mode 0600, 0700 when executable) and folders; symbolic
 * links and submodules are skipped.  Past limits.repo_bytes / repo_files: ERR_LIMIT
 * naming the limit, nothing left half-written (dest is emptied). */
int repo_checkout(struct repos *rs, const struct repository *r, const struct repo_commit *commit, const char *dest,
		  struct err *e) WUR;

/* The definition of r at commit, loaded as a process start loads it (server imports):
 * *m is a new model (model_free), or NULL when the commit has no definition file (a
 * repository without flows, which Concord accepts).  ERR_INVALID for a definition that does
 * not load; the checkout's errors. */
int repo_load_definition(struct repos *rs, const struct repository *r, const struct repo_commit *commit,
			 struct model **m, struct err *e) WUR;

/* Whether url may be fetched as far as the server's own disk goes: 0 for a URL that is not
 * local, or for a file:// URL or path that resolves (symbolic links and '..' followed)
 * to an existing folder inside one of cfg.local_dirs — *resolved (cap bytes) then holds
 * that real path, which the fetch reads ("" for a URL that is not local).  ERR_INVALID with
 * a message naming --repo-local-dirs otherwise: no folders configured, a relative path, a
 * '%' escape, or a folder elsewhere (the same message whether it exists or not).  rs may
 * be NULL (nothing local is allowed).  Thread-safe. */
int repo_url_local_check(const struct repos *rs, const char *url, char *resolved, size_t cap, struct err *e) WUR;

/* Removes the clone of a deleted repository (errors are logged). */
void repo_forget(struct repos *rs, const char *repo_id);

/* `imports` of kind git and mvn (docs/flows.md "Imports"): the model_importer fetch of a
 * process start (queue/start_staged.c) and of `accord run`, ctx a struct repo_imports.
 *
 * git: the repository is cloned like a project's repository (one bare clone per URL per
 * node in <data>/repos/<hash of the URL>, fetched by the `accord git-fetch` child; a
 * branch is fetched again past fetch_max_age_s, a commit never), `version` (default
 * master; 40 hex digits: a commit) resolved, its tree (`path` of it) checked out into a
 * scratch folder, the `exclude` regexes (POSIX extended, matched against the whole path
 * relative to the source folder) removed, and the rest copied into dest.  `secret` opens
 * a KEY_PAIR or USERNAME_PASSWORD secret of the process's org (or `secret.org`), when
 * secret_check allows it.
 * mvn: mvn://group:artifact:version[:classifier][@type] (type jar by default) is fetched
 * from the first Maven repository that has it into <data>/imports/mvn/<layout path>
 * (a -SNAPSHOT version is fetched again each time) and unpacked into dest.
 *
 * Each import fetched appends {"type", "url", …, "commitId" (git) or "sha256" (mvn)} to
 * resolved, which the caller records (the process's IMPORTS event; `accord run` logs it).
 * Errors name the cause; nothing is copied into dest unless the checkout or archive was
 * complete. */
struct repo_imports {
	struct repos *rs;
	struct store_conn *c; /* secrets (NULL: `secret` is refused, as in `accord run`) */
	const char *org_id;   /* the process's organization */
	/* May the process use secret s?  0, or an error (NULL: every secret is refused). */
	int (*secret_check)(void *ctx, const struct secret *s, struct err *e);
	void *secret_ctx;
	json_t *resolved; /* array (BORROWED) */
};

int repo_import_fetch(void *ctx, const char *kind, json_t *spec, const char *dest, struct err *e) WUR;

/* `accord git-fetch DIR URL`: the fetch child (cli dispatch).  Reads the credentials frame
 * from stdin, writes one line of JSON to stdout ({"ok":true} or {"error":"…"}), exits. */
int repo_fetch_child_main(int argc, char **argv);

#endif
