#ifndef ACCORD_REPO_INTERNAL_H
#define ACCORD_REPO_INTERNAL_H

#include <git2.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "repo/repo.h"

/* Shared by the files of repo/ only. */

struct repos {
	struct repos_cfg cfg; /* the strings are copies owned here */
	char *dir;	      /* <data>/repos */
	char *home;	      /* <data>/repos/.home: the fetch child's empty HOME */
	/* opened clones kept for reuse (repo/pool.c) */
	pthread_mutex_t pool_lock;
	struct pooled *pool;
	size_t pooled;
	/* fetches in flight (repo/flight.c) */
	pthread_mutex_t flight_lock;
	pthread_cond_t flight_done;
	struct repo_flight *flights;
	/* --repo-local-dirs, resolved (repo/local.c) */
	char **local_dirs;
	size_t n_local_dirs;
};

/* Reads the ':'-separated folder list of --repo-local-dirs into rs (NULL or "": none):
 * each must be an absolute path to an existing folder (ERR_INVALID naming it). */
int repo_local_dirs_set(struct repos *rs, const char *list, struct err *e) WUR;
void repo_local_dirs_free(struct repos *rs);

/* <data>/repos/<id> (the bare clone), <data>/repos/<id>.lock: new strings, NULL with e set
 * when repo_id is not a plain name. */
char *repo_clone_dir(const struct repos *rs, const char *repo_id, struct err *e);
char *repo_lock_path(const struct repos *rs, const char *repo_id, struct err *e);

/* The credentials frame the parent writes on the fetch child's stdin (repo/cred_frame.c):
 *
 *   u8 type (0 none, 1 username + password, 2 public + private key)
 *   for types 1 and 2: u32BE len(a) ‖ a ‖ u32BE len(b) ‖ b    (each length <= REPO_CRED_MAX)
 *
 * a is the username or the public key (may be empty: derived from the private key), b the
 * password or the private key.  Nothing may follow.  Both sides wipe it after use. */
enum repo_cred_type { REPO_CRED_NONE = 0, REPO_CRED_USERPASS = 1, REPO_CRED_KEYPAIR = 2 };
#define REPO_CRED_MAX (2u * 1024 * 1024)

struct repo_cred {
	enum repo_cred_type type;
	char *a, *b; /* NUL-terminated copies (NULL for NONE) */
	size_t a_len, b_len;
};

/* New frame in *out (caller releases it with repo_cred_frame_free). */
int repo_cred_encode(const struct repo_cred *c, unsigned char **out, size_t *len, struct err *e) WUR;
void repo_cred_frame_free(unsigned char *p, size_t len);
/* Reads one whole frame from fd up to end of file. */
int repo_cred_read(int fd, struct repo_cred *c, struct err *e) WUR;
/* Wipes and frees a and b. */
void repo_cred_clear(struct repo_cred *c);

/* Copies s into out (cap bytes) with the userinfo of every "scheme://user:pass@host"
 * removed ("scheme://host"). */
void repo_strip_url_credentials(const char *s, char *out, size_t cap);

/* 1 when known_hosts file lists key (the raw SSH key blob) for host (port 22 or other),
 * 0 when not, -1 when the file cannot be read (repo/known_hosts.c). */
int repo_known_host(const char *file, const char *host, int port, const void *key, size_t key_len);
/* The port of an ssh URL (22 when none is given). */
int repo_url_port(const char *url);

/* URL kinds, for the secret a URL needs. */
enum repo_url_kind { REPO_URL_HTTP, REPO_URL_SSH, REPO_URL_OTHER };
enum repo_url_kind repo_url_kind(const char *url);

/* The parent side of a fetch (repo/fetch.c): opens r's secret, takes the repository's
 * lock, runs the child.  skip_if_fetched: another fetch that ended while this one waited
 * for the lock counts as this one (returns 0 without fetching). */
int repo_fetch_locked(struct repos *rs, struct store_conn *c, const struct repository *r, bool skip_if_fetched,
		      struct err *e) WUR;

/* repo_fetch_locked through this node's single flight of r (repo/flight.c, repo.h
 * repo_fetch_for): asked_ns is when the fetch was asked for (dt_mono_ns; 0: now), and a
 * fetch of r that ran or ended since then is taken as this one; skip_if_fetched is handed
 * to repo_fetch_locked when this call leads.  user_id NULL: no per-user limit (a start, a
 * trigger).  repo_flight_running: whether a fetch of repo_id runs now.  repo_flights_free:
 * at repos_close, when nothing runs any more. */
int repo_flight_fetch(struct repos *rs, struct store_conn *c, const struct repository *r, const char *user_id,
		      int64_t asked_ns, bool skip_if_fetched, struct err *e) WUR;
void repo_flights_free(struct repos *rs);
bool repo_flight_running(struct repos *rs, const char *repo_id);

/* When the node's clone of repo_id was last fetched (Unix ms, from the stamp file the
 * parent writes after a successful fetch); 0 when never. */
int64_t repo_fetched_at(const struct repos *rs, const char *repo_id);

/* Resolution in an open bare clone (repo/resolve.c).  ref NULL: the remote's default
 * branch.  0 with *out filled; 1 (e set, ERR_INVALID) when the branch, tag or commit is
 * not in the clone, so that the caller may fetch and try again; < 0 for other errors.
 * Messages name r's repository. */
int repo_resolve_ref(git_repository *g, const struct repository *r, const char *ref, struct repo_commit *out,
		     struct err *e) WUR;
int repo_resolve_commit(git_repository *g, const struct repository *r, const char *id, struct repo_commit *out,
			struct err *e) WUR;
/* The bare clone of r, opened or taken from the pool (repo/pool.c; git_api loaded), for
 * this thread until it is given back with repo_close_clone (g NULL is fine). */
int repo_open_clone(struct repos *rs, const struct repository *r, git_repository **g, struct err *e) WUR;
void repo_close_clone(struct repos *rs, const char *repo_id, git_repository *g);
/* Frees the pooled objects of repo_id (NULL: all). */
void repo_drop_clones(struct repos *rs, const char *repo_id);

/* A new scratch folder <data>/tmp/import-<uuid> for one import (repo/imports.c) in *out;
 * repo_import_scratch_done removes it and frees the path (NULL is fine). */
int repo_import_scratch(const struct repos *rs, char **out, struct err *e) WUR;
void repo_import_scratch_done(char *dir);

#endif
