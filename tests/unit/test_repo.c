/* Unit tests for repository clones (repo/repo.h): fetches through the real fetch child
 * (the accord binary: $ACCORD_BIN, else build/asan/accord) of local repositories made
 * with the git CLI; branches, tags, commits, the default branch, checkouts with their
 * limits, re-fetches, the per-repository lock and the fetch timeout. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/limits.h"
#include "base/rand.h"
#include "base/str.h"
#include "crypto/payload.h"
#include "crypto/seal.h"
#include "repo/internal.h"
#include "repo/repo.h"
#include "store/secrets.h"

#include "unit_store.h"

#define REPO_ID "5a0c1d2e-0000-4000-8000-000000000001"
#define ORG_ID "5a0c1d2e-0000-4000-8000-0000000000aa"
#define PROJECT_ID "5a0c1d2e-0000-4000-8000-0000000000bb"

static char dir[64], src[128], data[128], exe[4096];
static struct store *store;
static struct store_conn *db;
static struct repos *rs;

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof cmd);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

/* The output of a command, first line. */
static void out_of(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void out_of(char *buf, size_t cap, const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	FILE *f;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < sizeof cmd);
	f = popen(cmd, "r");
	assert_non_null(f);
	if (!fgets(buf, (int)cap, f))
		buf[0] = 0;
	pclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

static void rev(char *id, const char *ref)
{
	out_of(id, 64, "git -C %s rev-parse %s^{commit}", src, ref);
	assert_int_equal(strlen(id), 40);
}

static void exec_ok(const char *sql)
{
	struct err e;
	if (store_exec(db, sql, &e))
		fail_msg("%s: %s", sql, e.msg);
}

static struct repos *open_repos(unsigned timeout_s, unsigned max_age_s)
{
	struct repos_cfg cfg = {.data_dir = data,
				.exe = exe,
				.fetch_timeout_s = timeout_s,
				.fetch_max_age_s = max_age_s,
				.local_dirs = dir};
	struct err e = {0};
	struct repos *r = repos_open(&cfg, &e);

	if (!r)
		fail_msg("repos_open: %s", e.msg);
	return r;
}

static int setup(void **state)
{
	char url[700];
	const char *bin = getenv("ACCORD_BIN");
	struct err e;
	(void)state;

	limits_defaults();
	rand_init();
	if (!realpath(bin && *bin ? bin : "build/asan/accord", exe))
		fail_msg("no accord binary (set ACCORD_BIN): %s", strerror(errno));
	assert_int_equal(str_fmt(dir, sizeof dir, "/tmp/accord-repo-test-XXXXXX"), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(str_fmt(src, sizeof src, "%s/src", dir), 0);
	assert_int_equal(str_fmt(data, sizeof data, "%s/data", dir), 0);
	assert_int_equal(mkdir(data, 0700), 0);
	assert_int_equal(unit_store_url(data, "unit_repo", url, sizeof url), 0);
	store = store_open(url, &e);
	if (!store)
		fail_msg("store_open: %s", e.msg);
	db = store_conn(store, &e);
	assert_non_null(db);
	exec_ok("INSERT INTO orgs (id, name, created_at) VALUES ('" ORG_ID "', 'RepoTest', 1)");
	exec_ok("INSERT INTO projects (id, org_id, name, created_at) VALUES ('" PROJECT_ID "', '" ORG_ID "', 'p', 1)");
	exec_ok("INSERT INTO repositories (id, project_id, name, url, created_at) VALUES ('" REPO_ID "', '" PROJECT_ID
		"', 'r1', 'x', 1)");
	/* main: concord.yml, flows/, an executable, a symbolic link; dev: one more commit;
	 * v1: an annotated tag on main's first commit */
	sh("git init -q -b main %s && cd %s && git config user.name 'Ann Author' && git config user.email "
	   "ann@example.com"
	   " && printf 'flows: {}\\n' > concord.yml && mkdir -p flows/deep && echo a > flows/a.yml"
	   " && echo d > flows/deep/d.yml && printf '#!/bin/sh\\n' > run.sh && chmod +x run.sh"
	   " && ln -s /etc/passwd link && git add -A && git commit -qm 'First commit' && git tag -a v1 -m v1"
	   " && git checkout -qb dev && echo dev > dev.txt && git add -A && git commit -qm 'Dev commit'"
	   " && git checkout -q main",
	   src, src);
	rs = open_repos(30, 3600);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	repos_close(rs);
	store_close(store);
	sh("rm -rf %s", dir);
	return 0;
}

static struct repository repo(const char *url)
{
	struct repository r = {0};

	assert_int_equal(str_fmt(r.id, sizeof r.id, "%s", REPO_ID), 0);
	assert_int_equal(str_fmt(r.project_id, sizeof r.project_id, "%s", PROJECT_ID), 0);
	assert_int_equal(str_fmt(r.org_id, sizeof r.org_id, "%s", ORG_ID), 0);
	assert_int_equal(str_fmt(r.name, sizeof r.name, "r1"), 0);
	assert_int_equal(str_fmt(r.url, sizeof r.url, "%s", url), 0);
	return r;
}

static struct repository file_repo(void)
{
	char url[256];

	assert_int_equal(str_fmt(url, sizeof url, "file://%s", src), 0);
	return repo(url);
}

static void fetched_commit(char *out)
{
	struct err e;
	struct store_stmt *st =
	    store_prepare(db, "SELECT fetched_commit, fetched_at FROM repositories WHERE id = ?", &e);

	assert_non_null(st);
	store_bind_text(st, 1, REPO_ID);
	assert_int_equal(store_step(st, &e), STORE_ROW);
	assert_int_equal(str_fmt(out, 41, "%s", store_col_text(st, 0) ? store_col_text(st, 0) : ""), 0);
	assert_true(store_col_int64(st, 1) > 0);
	store_reset(st);
}

static void test_fetch_default_branch(void **state)
{
	struct repository r = file_repo();
	struct repo_commit cm;
	struct err e = {0};
	char want[64], rec[41];
	struct stat st;
	(void)state;

	repo_forget(rs, REPO_ID);
	if (repo_fetch(rs, db, &r, &cm, &e))
		fail_msg("repo_fetch: %s", e.msg);
	rev(want, "main");
	assert_string_equal(cm.id, want);
	assert_string_equal(cm.author, "Ann Author <ann@example.com>");
	assert_string_equal(cm.message, "First commit\n");
	fetched_commit(rec);
	assert_string_equal(rec, want);
	/* a bare clone in <data>/repos/<id>, without remote-tracking refs */
	assert_int_equal(stat(dir, &st), 0);
	sh("test -f %s/repos/" REPO_ID "/HEAD && test ! -e %s/repos/" REPO_ID "/refs/remotes/origin/main", data, data);
}

static void test_branch_tag_commit(void **state)
{
	struct repository r = file_repo();
	struct repo_commit cm;
	struct err e = {0};
	char dev[64], main_[64], shortid[16];
	(void)state;

	rev(dev, "dev");
	rev(main_, "main");
	assert_int_equal(str_fmt(r.branch, sizeof r.branch, "dev"), 0);
	if (repo_fetch(rs, db, &r, &cm, &e))
		fail_msg("repo_fetch: %s", e.msg);
	assert_string_equal(cm.id, dev);
	assert_string_equal(cm.message, "Dev commit\n");
	/* overrides: a tag (annotated: peeled to its commit), a branch, a full and a short id */
	assert_int_equal(repo_prepare(rs, db, &r, "v1", NULL, &cm, &e), 0);
	assert_string_equal(cm.id, main_);
	assert_int_equal(repo_prepare(rs, db, &r, "main", NULL, &cm, &e), 0);
	assert_string_equal(cm.id, main_);
	assert_int_equal(repo_prepare(rs, db, &r, NULL, main_, &cm, &e), 0);
	assert_string_equal(cm.id, main_);
	assert_int_equal(str_fmt(shortid, sizeof shortid, "%.7s", dev), 0);
	assert_int_equal(repo_prepare(rs, db, &r, "main", shortid, &cm, &e), 0);
	assert_string_equal(cm.id, dev);
	/* a pinned commit */
	r.branch[0] = 0;
	assert_true(snprintf(r.commit_id, sizeof r.commit_id, "%s", main_) < (int)sizeof r.commit_id);
	assert_int_equal(repo_prepare(rs, db, &r, NULL, NULL, &cm, &e), 0);
	assert_string_equal(cm.id, main_);
}

static void test_unknown_refs(void **state)
{
	struct repository r = file_repo();
	struct repo_commit cm;
	struct err e = {0};
	(void)state;

	assert_int_equal(repo_prepare(rs, db, &r, "nope", NULL, &cm, &e), -ERR_INVALID);
	assert_string_equal(e.msg, "Branch or tag not found in repository r1: nope");
	assert_int_equal(repo_prepare(rs, db, &r, NULL, "deadbeef1", &cm, &e), -ERR_INVALID);
	assert_string_equal(e.msg, "Commit not found in repository r1: deadbeef1");
	assert_int_equal(repo_prepare(rs, db, &r, NULL, "xyz", &cm, &e), -ERR_INVALID);
	assert_int_equal(str_fmt(r.branch, sizeof r.branch, "gone"), 0);
	assert_int_equal(repo_fetch(rs, db, &r, &cm, &e), -ERR_INVALID);
	assert_string_equal(e.msg, "Branch or tag not found in repository r1: gone");
}

static void fresh(char *dest, size_t cap, const char *name)
{
	assert_int_equal(str_fmt(dest, cap, "%s/%s", dir, name), 0);
	sh("rm -rf %s && mkdir %s", dest, dest);
}

static void test_checkout(void **state)
{
	struct repository r = file_repo();
	struct repo_commit cm;
	struct err e = {0};
	char dest[256];
	struct stat st;
	(void)state;

	assert_int_equal(repo_prepare(rs, db, &r, NULL, NULL, &cm, &e), 0);
	fresh(dest, sizeof dest, "co1");
	if (repo_checkout(rs, &r, &cm, dest, &e))
		fail_msg("repo_checkout: %s", e.msg);
	sh("test \"$(cat %s/flows/deep/d.yml)\" = d && test -f %s/concord.yml", dest, dest);
	assert_int_equal(stat(dest, &st), 0);
	assert_int_equal(str_fmt(dest + strlen(dest), sizeof dest - strlen(dest), "/run.sh"), 0);
	assert_int_equal(stat(dest, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	fresh(dest, sizeof dest, "co1");
	assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), 0);
	sh("test ! -e %s/link && test ! -L %s/link", dest, dest); /* symbolic links are skipped */
	sh("test \"$(stat -c %%a %s/concord.yml)\" = 600", dest);

	/* a sub-folder */
	assert_int_equal(str_fmt(r.path, sizeof r.path, "flows/"), 0);
	fresh(dest, sizeof dest, "co2");
	assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), 0);
	sh("test -f %s/a.yml && test -f %s/deep/d.yml && test ! -e %s/concord.yml", dest, dest, dest);
	assert_int_equal(str_fmt(r.path, sizeof r.path, "nothere"), 0);
	fresh(dest, sizeof dest, "co3");
	assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), -ERR_INVALID);
	assert_non_null(strstr(e.msg, "Path not found in repository r1 at "));
	assert_non_null(strstr(e.msg, ": nothere"));
	assert_int_equal(str_fmt(r.path, sizeof r.path, "concord.yml"), 0); /* a file is not a folder */
	assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), -ERR_INVALID);
}

static void test_checkout_limits(void **state)
{
	struct repository r = file_repo();
	struct repo_commit cm;
	struct err e = {0};
	char dest[256];
	(void)state;

	assert_int_equal(repo_prepare(rs, db, &r, NULL, NULL, &cm, &e), 0);
	fresh(dest, sizeof dest, "lim");
	limits.repo_files = 3;
	assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), -ERR_LIMIT);
	assert_non_null(strstr(e.msg, "repo_files"));
	sh("test -d %s && test -z \"$(ls -A %s)\"", dest, dest); /* emptied */
	limits_defaults();
	limits.repo_bytes = 10;
	assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), -ERR_LIMIT);
	assert_non_null(strstr(e.msg, "repo_bytes"));
	sh("test -z \"$(ls -A %s)\"", dest);
	limits_defaults();
	assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), 0);
}

static void test_refetch(void **state)
{
	struct repository r = file_repo();
	struct repo_commit cm, before;
	struct err e = {0};
	char now[64], rec[41];
	(void)state;

	assert_int_equal(repo_fetch(rs, db, &r, &before, &e), 0);
	sh("cd %s && echo 2 > two.txt && git add -A && git commit -qm 'Second commit'", src);
	rev(now, "main");
	/* the clone is fresh (max age one hour): a branch start does not fetch */
	assert_int_equal(repo_prepare(rs, db, &r, NULL, NULL, &cm, &e), 0);
	assert_string_equal(cm.id, before.id);
	/* but a commit the clone lacks is fetched */
	assert_int_equal(repo_prepare(rs, db, &r, NULL, now, &cm, &e), 0);
	assert_string_equal(cm.id, now);
	sh("cd %s && echo 3 > three.txt && git add -A && git commit -qm 'Third commit'", src);
	rev(now, "main");
	assert_int_equal(repo_fetch(rs, db, &r, &cm, &e), 0);
	assert_string_equal(cm.id, now);
	assert_string_equal(cm.message, "Third commit\n");
	fetched_commit(rec);
	assert_string_equal(rec, now);
	/* a new branch is fetched when asked for */
	sh("cd %s && git branch later", src);
	assert_int_equal(repo_prepare(rs, db, &r, "later", NULL, &cm, &e), 0);
	assert_string_equal(cm.id, now);
}

static void test_max_age_zero_and_plain_path(void **state)
{
	struct repos *r0 = open_repos(30, 0);
	struct repository r = repo(src); /* a plain local path */
	struct repo_commit cm;
	struct err e = {0};
	char now[64];
	(void)state;

	repo_forget(r0, REPO_ID);
	assert_int_equal(repo_prepare(r0, db, &r, NULL, NULL, &cm, &e), 0);
	sh("cd %s && echo 4 > four.txt && git add -A && git commit -qm 'Fourth commit'", src);
	rev(now, "main");
	assert_int_equal(repo_prepare(r0, db, &r, NULL, NULL, &cm, &e), 0); /* max age 0: every start fetches */
	assert_string_equal(cm.id, now);
	repos_close(r0);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A start from a warm clone: no fetch, one open of the clone, the files written. */
static void test_warm_start_cost(void **state)
{
	struct repository r = file_repo();
	struct repo_commit cm;
	struct err e = {0};
	char dest[256];
	double t0, prep = 0, co = 0;
	int n = 50;
	(void)state;

	assert_int_equal(repo_fetch(rs, db, &r, NULL, &e), 0);
	for (int i = 0; i < n; i++) {
		fresh(dest, sizeof dest, "warm");
		t0 = now_ms();
		assert_int_equal(repo_prepare(rs, db, &r, NULL, NULL, &cm, &e), 0);
		prep += now_ms() - t0;
		t0 = now_ms();
		assert_int_equal(repo_checkout(rs, &r, &cm, dest, &e), 0);
		co += now_ms() - t0;
	}
	print_message("warm start: prepare %.3f ms, checkout %.3f ms (average of %d)\n", prep / n, co / n, n);
	assert_true(prep / n < 50 && co / n < 50); /* generous: sanitizers, loaded machines */
}

static void add_secret(const struct masterkey *mk, const char *id, const char *name, enum secret_type type,
		       const char *password, struct str a, struct str b)
{
	struct secret sec = {.type = type, .password_protected = password != NULL, .created_at = 1};
	unsigned char *pt = NULL, *env = NULL;
	size_t pt_len = 0, env_len = 0;
	struct err e = {0};

	assert_int_equal(str_fmt(sec.id, sizeof sec.id, "%s", id), 0);
	assert_int_equal(str_fmt(sec.org_id, sizeof sec.org_id, "%s", ORG_ID), 0);
	assert_int_equal(str_fmt(sec.name, sizeof sec.name, "%s", name), 0);
	if (type == SECRET_TYPE_USERNAME_PASSWORD)
		assert_int_equal(payload_userpass_encode(a, b, &pt, &pt_len, &e), 0);
	else
		assert_int_equal(payload_keypair_encode(a, b, &pt, &pt_len, &e), 0);
	assert_int_equal(
	    seal_encrypt(mk, password, &(struct seal_binding){ORG_ID, name}, pt, pt_len, &env, &env_len, &e), 0);
	if (store_secret_insert(db, &sec, NULL, 0, env, env_len, &e))
		fail_msg("store_secret_insert: %s", e.msg);
	payload_free(pt, pt_len);
	free(env);
}

static struct repository with_secret(const char *url, const char *id, const char *name)
{
	struct repository r = repo(url);

	assert_int_equal(str_fmt(r.secret_id, sizeof r.secret_id, "%s", id), 0);
	assert_int_equal(str_fmt(r.secret_name, sizeof r.secret_name, "%s", name), 0);
	return r;
}

/* The secret is opened with the master key and must suit the URL; its plaintext never
 * shows in an error. */
static void test_secrets(void **state)
{
	static const unsigned char key[MASTERKEY_BYTES] = {7};
	struct masterkey mk;
	struct repos_cfg cfg = {
	    .data_dir = data, .exe = exe, .master_key = &mk, .fetch_timeout_s = 30, .local_dirs = dir};
	struct repos *r2;
	struct repository r;
	struct err e = {0};
	char url[256];
	(void)state;

	masterkey_from_bytes(&mk, key);
	seal_set_kdf(1, 8);
	add_secret(&mk, "5a0c1d2e-0000-4000-8000-0000000000c1", "userpass", SECRET_TYPE_USERNAME_PASSWORD, NULL,
		   STR_LIT("alice"), STR_LIT("s3cret-pass-word"));
	add_secret(&mk, "5a0c1d2e-0000-4000-8000-0000000000c2", "locked", SECRET_TYPE_KEY_PAIR, "store-pw",
		   STR_LIT("ssh-ed25519 AAAA"), STR_LIT("PRIVATE KEY"));
	r2 = repos_open(&cfg, &e);
	assert_non_null(r2);

	r = with_secret("ssh://git@127.0.0.1:1/x", "5a0c1d2e-0000-4000-8000-0000000000c2", "locked");
	assert_int_equal(repo_fetch(r2, db, &r, NULL, &e), -ERR_INVALID);
	assert_string_equal(e.msg, "Secret 'locked' is password-protected: a repository's secret must be encrypted by "
				   "the server key");
	r = with_secret("git@127.0.0.1:x.git", "5a0c1d2e-0000-4000-8000-0000000000c1", "userpass");
	assert_int_equal(repo_fetch(r2, db, &r, NULL, &e), -ERR_INVALID);
	assert_string_equal(e.msg,
			    "Secret 'userpass' is a USERNAME_PASSWORD secret: the ssh URL of repository r1 needs "
			    "a KEY_PAIR secret");
	/* opened and handed to the child: the fetch fails (nothing listens on port 1), quietly */
	r = with_secret("https://alice:url-pass@127.0.0.1:1/x", "5a0c1d2e-0000-4000-8000-0000000000c1", "userpass");
	assert_int_equal(repo_fetch(r2, db, &r, NULL, &e), -ERR_INVALID);
	assert_non_null(strstr(e.msg, "git fetch of https://127.0.0.1:1/x: "));
	assert_null(strstr(e.msg, "s3cret"));
	assert_null(strstr(e.msg, "url-pass"));
	/* local repositories need no secret: it is not used */
	assert_int_equal(str_fmt(url, sizeof url, "file://%s", src), 0);
	r = with_secret(url, "5a0c1d2e-0000-4000-8000-0000000000c2", "locked");
	assert_int_equal(repo_fetch(r2, db, &r, NULL, &e), 0);
	repos_close(r2);
	masterkey_wipe(&mk);
}

struct bg {
	struct repos *rs;
	struct err e;
	int rc;
	volatile int done;
};

static void *bg_fetch(void *arg)
{
	struct bg *b = arg;
	struct repository r = file_repo();
	struct store_conn *c;

	c = store_conn(store, &b->e);
	b->rc = c ? repo_fetch(b->rs, c, &r, NULL, &b->e) : -1;
	b->done = 1;
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

/* A fetch waits for the repository's lock; two fetches at once both succeed. */
static void test_lock_serializes(void **state)
{
	char lock[256];
	struct bg b1 = {.rs = rs}, b2 = {.rs = rs};
	pthread_t t1, t2;
	int fd;
	(void)state;

	assert_int_equal(str_fmt(lock, sizeof lock, "%s/repos/" REPO_ID ".lock", data), 0);
	fd = open(lock, O_RDWR | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(flock(fd, LOCK_EX), 0);
	assert_int_equal(pthread_create(&t1, NULL, bg_fetch, &b1), 0);
	sleep_ms(500);
	assert_int_equal(b1.done, 0); /* waiting for the lock */
	assert_int_equal(pthread_create(&t2, NULL, bg_fetch, &b2), 0);
	close(fd);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	if (b1.rc || b2.rc)
		fail_msg("concurrent fetches: %s / %s", b1.e.msg, b2.e.msg);
}

struct starter {
	int n, rc;
	char err[ERR_MSG_MAX];
};

static void *bg_starts(void *arg)
{
	struct starter *st = arg;
	struct repository r = file_repo();
	struct repo_commit cm;
	struct err e = {0};
	struct store_conn *c = store_conn(store, &e);
	char dest[256];

	for (int i = 0; i < 20 && c && st->rc == 0; i++) {
		assert_int_equal(str_fmt(dest, sizeof dest, "%s/par-%d-%d", dir, st->n, i), 0);
		if (mkdir(dest, 0700) != 0 || repo_prepare(rs, c, &r, NULL, NULL, &cm, &e) ||
		    repo_checkout(rs, &r, &cm, dest, &e)) {
			st->rc = -1;
			assert_int_equal(str_fmt(st->err, sizeof st->err, "%s", e.msg[0] ? e.msg : strerror(errno)), 0);
		}
	}
	return NULL;
}

/* Starts of one repository in parallel, each with its own opened clone (repo/pool.c). */
static void test_parallel_starts(void **state)
{
	struct starter st[4] = {{0}};
	pthread_t t[4];
	(void)state;

	for (int i = 0; i < 4; i++) {
		st[i].n = i;
		assert_int_equal(pthread_create(&t[i], NULL, bg_starts, &st[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		if (st[i].rc)
			fail_msg("parallel start %d: %s", i, st[i].err);
	}
	sh("test \"$(cat %s/par-3-19/flows/deep/d.yml)\" = d", dir);
}

static void test_urls(void **state)
{
	char out[256];
	FILE *f;
	char kh[256];
	static const unsigned char key[] = {0,	 0,   0,   11,	's', 's', 'h', '-', 'e',
					    'd', '2', '5', '5', '1', '9', 1,   2,   3};
	(void)state;

	repo_strip_url_credentials("git fetch of https://u:p%40ss@host:8443/x.git failed (see http://a@b/c)", out,
				   sizeof out);
	assert_string_equal(out, "git fetch of https://host:8443/x.git failed (see http://b/c)");
	repo_strip_url_credentials("ssh://git@h/x git@h:y.git", out, sizeof out);
	assert_string_equal(out, "ssh://h/x git@h:y.git");
	repo_strip_url_credentials("https://u:p@h", out, 8); /* truncated, never a partial secret */
	assert_string_equal(out, "https:/");
	assert_int_equal(repo_url_kind("HTTPS://h/x"), REPO_URL_HTTP);
	assert_int_equal(repo_url_kind("http://h/x"), REPO_URL_HTTP);
	assert_int_equal(repo_url_kind("ssh://git@h/x"), REPO_URL_SSH);
	assert_int_equal(repo_url_kind("git+ssh://h/x"), REPO_URL_SSH);
	assert_int_equal(repo_url_kind("git@github.com:o/r.git"), REPO_URL_SSH);
	assert_int_equal(repo_url_kind("file:///srv/r"), REPO_URL_OTHER);
	assert_int_equal(repo_url_kind("/srv/r"), REPO_URL_OTHER);
	assert_int_equal(repo_url_kind("./a:b"), REPO_URL_OTHER);
	assert_int_equal(repo_url_port("ssh://git@h:2222/x"), 2222);
	assert_int_equal(repo_url_port("ssh://h/x"), 22);
	assert_int_equal(repo_url_port("ssh://git@[::1]:2200/x"), 2200);
	assert_int_equal(repo_url_port("git@h:x"), 22);

	/* known_hosts: a plain name on port 22, [name]:port otherwise, patterns, no hashes */
	assert_int_equal(str_fmt(kh, sizeof kh, "%s/known_hosts", dir), 0);
	f = fopen(kh, "w");
	assert_non_null(f);
	fprintf(f, "# comment\n|1|c2FsdA==|aGFzaA== ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AQID\n"
		   "git.example.com,other ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AQID\n"
		   "[10.0.0.*]:2222 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AQID comment\n"
		   "@revoked bad.example.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AQID\n");
	fclose(f);
	assert_int_equal(repo_known_host(kh, "git.example.com", 22, key, sizeof key), 1);
	assert_int_equal(repo_known_host(kh, "GIT.example.com", 22, key, sizeof key), 1);
	assert_int_equal(repo_known_host(kh, "git.example.com", 2222, key, sizeof key), 0);
	assert_int_equal(repo_known_host(kh, "10.0.0.7", 2222, key, sizeof key), 1);
	assert_int_equal(repo_known_host(kh, "10.0.0.7", 22, key, sizeof key), 0);
	assert_int_equal(repo_known_host(kh, "bad.example.com", 22, key, sizeof key), 0);
	assert_int_equal(repo_known_host(kh, "git.example.com", 22, key, sizeof key - 1), 0);
	assert_int_equal(repo_known_host("/nonexistent/known_hosts", "h", 22, key, sizeof key), -1);
}

static int listener = -1;

static void *accept_and_hang(void *arg)
{
	int fds[8], n = 0;
	(void)arg;
	while (n < 8) {
		int fd = accept(listener, NULL, NULL);
		if (fd < 0)
			break;
		fds[n++] = fd; /* never answered */
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return NULL;
}

static void test_timeout(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof a;
	struct repos *r1 = open_repos(1, 30);
	struct repository r;
	struct err e = {0};
	char url[128], want[128];
	pthread_t t;
	(void)state;

	listener = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(listener >= 0);
	assert_int_equal(bind(listener, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(listen(listener, 8), 0);
	assert_int_equal(getsockname(listener, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(pthread_create(&t, NULL, accept_and_hang, NULL), 0);
	assert_int_equal(str_fmt(url, sizeof url, "https://user:pw@127.0.0.1:%d/x", ntohs(a.sin_port)), 0);
	r = repo(url);
	/* the remote never answers: only the timeout ends the fetch, and says so (how long the
	 * fetch took beyond it is no test's business: a loaded machine stretches it) */
	assert_int_equal(repo_fetch(r1, db, &r, NULL, &e), -ERR_UNAVAILABLE);
	assert_int_equal(
	    str_fmt(want, sizeof want, "git fetch of https://127.0.0.1:%d/x timed out after 1 s", ntohs(a.sin_port)),
	    0);
	assert_string_equal(e.msg, want);
	shutdown(listener, SHUT_RDWR);
	close(listener);
	pthread_join(t, NULL);
	repos_close(r1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fetch_default_branch),
	    cmocka_unit_test(test_branch_tag_commit),
	    cmocka_unit_test(test_unknown_refs),
	    cmocka_unit_test(test_checkout),
	    cmocka_unit_test(test_checkout_limits),
	    cmocka_unit_test(test_refetch),
	    cmocka_unit_test(test_max_age_zero_and_plain_path),
	    cmocka_unit_test(test_warm_start_cost),
	    cmocka_unit_test(test_secrets),
	    cmocka_unit_test(test_parallel_starts),
	    cmocka_unit_test(test_lock_serializes),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_urls),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
