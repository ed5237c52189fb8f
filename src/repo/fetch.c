/* The parent side of a fetch: the repository's credentials, its lock, the child. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/spawn.h"
#include "crypto/payload.h"
#include "crypto/seal.h"
#include "repo/internal.h"
#include "store/secrets.h"

#define STAMP "accord-fetched"
#define CHILD_OUTPUT_MAX (64 * 1024)

/* ---- credentials ---------------------------------------------------------------------- */

static char *copy(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

static int decode(enum secret_type type, const unsigned char *pt, size_t n, struct repo_cred *cred, struct err *e)
{
	struct str x, y;

	if (type == SECRET_TYPE_USERNAME_PASSWORD) {
		cred->type = REPO_CRED_USERPASS;
		if (payload_userpass_decode(pt, n, &cred->a, &cred->a_len, &y, e))
			return -1;
		cred->b_len = y.len;
		cred->b = copy(y.p, y.len);
	} else {
		cred->type = REPO_CRED_KEYPAIR;
		if (payload_keypair_decode(pt, n, &x, &y, e))
			return -1;
		cred->a_len = x.len;
		cred->b_len = y.len;
		cred->a = copy(x.p, x.len);
		cred->b = copy(y.p, y.len);
	}
	if (!cred->a || !cred->b)
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

/* The credentials r's URL needs, from r's secret (none for file:// and local paths, or
 * when the repository has no secret). */
static int open_credentials(const struct repos *rs, struct store_conn *c, const struct repository *r,
			    struct repo_cred *cred, struct err *e)
{
	enum repo_url_kind kind = repo_url_kind(r->url);
	enum secret_type want = kind == REPO_URL_HTTP ? SECRET_TYPE_USERNAME_PASSWORD : SECRET_TYPE_KEY_PAIR;
	struct secret s;
	unsigned char *env = NULL, *pt = NULL;
	size_t env_len = 0, pt_len = 0;
	int rc;

	memset(cred, 0, sizeof *cred);
	if (!r->secret_id[0] || kind == REPO_URL_OTHER)
		return 0;
	if ((rc = store_secret_find(c, r->org_id, r->secret_name, &s, e)))
		return rc == -ERR_NOT_FOUND
			   ? err_set(e, ERR_INVALID, "Secret of repository %s not found: %s", r->name, r->secret_name)
			   : rc;
	if (strcmp(s.id, r->secret_id) != 0)
		return err_set(e, ERR_INVALID, "Secret of repository %s not found: %s", r->name, r->secret_name);
	if (s.password_protected)
		return err_set(
		    e, ERR_INVALID,
		    "Secret '%s' is password-protected: a repository's secret must be encrypted by the server "
		    "key",
		    s.name);
	if (s.type != want)
		return err_set(
		    e, ERR_INVALID, "Secret '%s' is a %s secret: the %s URL of repository %s needs a %s secret", s.name,
		    secret_type_name(s.type), kind == REPO_URL_HTTP ? "https" : "ssh", r->name, secret_type_name(want));
	if (!rs->cfg.master_key)
		return err_set(e, ERR_INTERNAL, "cannot open the secret of repository %s: no master key", r->name);
	if ((rc = store_secret_envelope_of(c, &s, &env, &env_len, e)))
		return rc;
	rc = seal_decrypt(rs->cfg.master_key, NULL, &(struct seal_binding){s.org_id, s.name}, env, env_len, &pt,
			  &pt_len, e);
	free(env);
	if (rc == 0)
		rc = decode(s.type, pt, pt_len, cred, e);
	seal_plain_free(pt, pt_len);
	if (rc) {
		repo_cred_clear(cred);
		err_prefix(e, "Secret '%s'", s.name);
	}
	return rc;
}

/* ---- the stamp of the node's last fetch --------------------------------------------- */

static int stamp_path(const struct repos *rs, const char *repo_id, char *out, size_t cap)
{
	return snprintf(out, cap, "%s/%s/" STAMP, rs->dir, repo_id) < (int)cap ? 0 : -1;
}

/* The stamp's modification time in nanoseconds (0: none). */
static int64_t stamp_ns(const struct repos *rs, const char *repo_id)
{
	char path[4300];
	struct stat st;

	if (stamp_path(rs, repo_id, path, sizeof path) || stat(path, &st) != 0)
		return 0;
	return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

int64_t repo_fetched_at(const struct repos *rs, const char *repo_id)
{
	return stamp_ns(rs, repo_id) / 1000000;
}

static void stamp_now(const struct repos *rs, const char *repo_id)
{
	char path[4300];
	int fd = -1;

	if (stamp_path(rs, repo_id, path, sizeof path) == 0 &&
	    (fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) >= 0 && futimens(fd, NULL) == 0) {
		close(fd);
		return;
	}
	LOG_W("repository %s: cannot write %s: %s", repo_id, path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* ---- the child ------------------------------------------------------------------------- */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static char **child_env(const struct repos *rs)
{
	static const char *const keep[] = {"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"};
	char **env = calloc(3 + sizeof keep / sizeof keep[0], sizeof *env);
	size_t n = 0;

	if (!env)
		return NULL;
	if (asprintf(&env[n++], "HOME=%s", rs->home) < 0 || !(env[n++] = strdup("PATH=/usr/local/bin:/usr/bin:/bin")))
		goto fail;
	for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++)
		if (getenv(keep[i]) && asprintf(&env[n++], "%s=%s", keep[i], getenv(keep[i])) < 0)
			goto fail;
	return env;
fail:
	for (size_t i = 0; i < n; i++)
		free(env[i]);
	free(env);
	return NULL;
}

static void free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

static int spawn_child(const struct repos *rs, const char *dir, const char *url, int in[2], int out[2], pid_t *pid,
		       struct err *e)
{
	char *argv[10];
	size_t n = 0;
	char **env = child_env(rs);
	int rc;

	if (!env)
		return err_set(e, ERR_INTERNAL, "out of memory");
	argv[n++] = "accord";
	argv[n++] = "git-fetch";
	if (rs->cfg.ca_file) {
		argv[n++] = "--ca-file";
		argv[n++] = (char *)rs->cfg.ca_file;
	}
	if (rs->cfg.known_hosts) {
		argv[n++] = "--known-hosts";
		argv[n++] = (char *)rs->cfg.known_hosts;
	}
	argv[n++] = (char *)dir;
	argv[n++] = (char *)url;
	argv[n] = NULL;
	rc = spawn_start(&(struct spawn_opts){.exe = rs->cfg.exe, .argv = argv, .env = env,
					      .fds = (const struct spawn_fd[]){{in[0], 0}, {out[1], 1}}, .n_fds = 2,
					      .cwd = rs->home, .own_group = true},
			 pid);
	free_env(env);
	if (rc != 0)
		return err_set(e, ERR_INTERNAL, "cannot start the git fetch process %s: %s", rs->cfg.exe, strerror(rc));
	return 0;
}

/* Feeds the frame to the child (closing *inp once it is written) and collects its output
 * until it closes stdout or the deadline passes.  1 on timeout. */
static int converse(int *inp, int out, const unsigned char *frame, size_t frame_len, int64_t deadline, char *buf,
		    size_t cap, size_t *got, struct err *e)
{
	size_t sent = 0;
	int in = *inp;

	*got = 0;
	for (;;) {
		struct pollfd p[2] = {{out, POLLIN, 0}, {in, POLLOUT, 0}};
		int64_t left = deadline - mono_ms();
		nfds_t n = in >= 0 ? 2 : 1;
		int r;

		if (left <= 0)
			return 1;
		r = poll(p, n, left > 1000 ? 1000 : (int)left);
		if (r < 0 && errno != EINTR)
			return err_set(e, ERR_INTERNAL, "git fetch: poll: %s", strerror(errno));
		if (r <= 0)
			continue;
		if (n == 2 && p[1].revents) {
			ssize_t w = (p[1].revents & POLLOUT) ? write(in, frame + sent, frame_len - sent) : -1;
			if (w > 0)
				sent += (size_t)w;
			if (w < 0 && errno == EAGAIN)
				continue;
			if (w < 0 || sent == frame_len) { /* done, or the child stopped reading */
				close(in);
				in = *inp = -1;
			}
		}
		if (p[0].revents) {
			ssize_t rd = read(out, buf + *got, cap - 1 - *got);
			if (rd < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (rd <= 0 || (*got += (size_t)rd) == cap - 1) {
				buf[*got] = 0;
				return 0;
			}
		}
	}
}

/* Runs `accord git-fetch` for r; ERR_UNAVAILABLE when it outlives the timeout. */
static int run_child(const struct repos *rs, const struct repository *r, const struct repo_cred *cred, struct err *e)
{
	char *dir, url[2100], local[4096], *buf = NULL;
	unsigned char *frame = NULL;
	size_t frame_len = 0, got = 0;
	int in[2] = {-1, -1}, out[2] = {-1, -1}, rc, status = 0;
	pid_t pid = 0;
	json_t *res = NULL;

	repo_strip_url_credentials(r->url, url, sizeof url);
	/* A local repository is read from the folder that was checked, not from its URL again. */
	if (repo_url_local_check(rs, r->url, local, sizeof local, e))
		return -1;
	if (!(dir = repo_clone_dir(rs, r->id, e)))
		return -1;
	if ((rc = repo_cred_encode(cred, &frame, &frame_len, e)))
		goto out;
	if (!(buf = malloc(CHILD_OUTPUT_MAX))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
		rc = err_set(e, ERR_INTERNAL, "cannot create the pipes of git fetch: %s", strerror(errno));
		goto out;
	}
	if ((rc = spawn_child(rs, dir, local[0] ? local : r->url, in, out, &pid, e)))
		goto out;
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	rc = converse(&in[1], out[0], frame, frame_len, mono_ms() + (int64_t)rs->cfg.fetch_timeout_s * 1000, buf,
		      CHILD_OUTPUT_MAX, &got, e);
	if (rc == 1) {
		kill(-pid, SIGKILL);
		rc = err_set(e, ERR_UNAVAILABLE, "git fetch of %s timed out after %u s", url, rs->cfg.fetch_timeout_s);
	}
	kill(-pid, SIGKILL); /* whatever it left behind in its group */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc)
		goto out;
	res = json_loadb(buf, got, JSON_DISABLE_EOF_CHECK, NULL);
	if (res && json_is_true(json_object_get(res, "ok")))
		rc = 0;
	else if (res && json_is_string(json_object_get(res, "error")))
		rc = err_set(e, ERR_INVALID, "%s", json_string_value(json_object_get(res, "error")));
	else if (WIFSIGNALED(status))
		rc = err_set(e, ERR_INTERNAL, "git fetch of %s: the fetch process was killed by signal %d", url,
			     WTERMSIG(status));
	else
		rc = err_set(e, ERR_INTERNAL, "git fetch of %s: the fetch process exited with status %d and no answer",
			     url, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
out:
	json_decref(res);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	repo_cred_frame_free(frame, frame_len);
	free(buf);
	free(dir);
	return rc;
}

/* ---- the lock ----------------------------------------------------------------------------- */

int repo_fetch_locked(struct repos *rs, struct store_conn *c, const struct repository *r, bool skip_if_fetched,
		      struct err *e)
{
	struct repo_cred cred;
	int64_t before = stamp_ns(rs, r->id), t0 = mono_ms();
	char *lock = repo_lock_path(rs, r->id, e);
	int fd = -1, rc;

	if (!lock)
		return -1;
	if ((rc = open_credentials(rs, c, r, &cred, e)))
		goto out;
	if ((fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
		rc = err_set(e, ERR_INTERNAL, "cannot open %s: %s", lock, strerror(errno));
		goto out;
	}
	while ((rc = flock(fd, LOCK_EX)) != 0 && errno == EINTR)
		;
	if (rc != 0) {
		rc = err_set(e, ERR_INTERNAL, "cannot lock %s: %s", lock, strerror(errno));
		goto out;
	}
	if (skip_if_fetched && stamp_ns(rs, r->id) != before)
		goto out; /* a fetch ended while this one waited */
	if ((rc = run_child(rs, r, &cred, e)) == 0)
		stamp_now(rs, r->id);
	repo_drop_clones(rs, r->id);
	LOG_D("repository %s: fetch %s in %lld ms", r->id, rc ? "failed" : "done", (long long)(mono_ms() - t0));
out:
	repo_cred_clear(&cred);
	if (fd >= 0)
		close(fd); /* releases the lock */
	free(lock);
	return rc;
}
