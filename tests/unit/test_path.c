/* Unit tests for the working-directory resolver (base/path.c): every way out of the
 * working directory is refused — "..", absolute paths outside, /proc/self/root, symbolic
 * links pointing out, hard links, FIFOs — both through openat2 and through the walk that
 * stands in for it on kernels without openat2.  The .c is included to reach that switch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/path.c"
#include "base/str.h"

struct fixture {
	char tmp[PATH_MAX];	/* holds work/ and outside/ */
	char root[PATH_MAX];	/* tmp/work: the working directory */
	char outside[PATH_MAX]; /* tmp/outside/secret.txt */
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *at(struct fixture *f, const char *rel)
{
	static char p[4][PATH_MAX];
	static int i;
	i = (i + 1) % 4;
	assert_true(snprintf(p[i], PATH_MAX, "%s/%s", f->tmp, rel) < PATH_MAX);
	return p[i];
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	char tmpl[] = "/tmp/accord-path-XXXXXX";

	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, f->tmp));
	assert_true(snprintf(f->root, sizeof f->root, "%s/work", f->tmp) < (int)sizeof f->root);
	assert_true(snprintf(f->outside, sizeof f->outside, "%s/outside/secret.txt", f->tmp) < (int)sizeof f->outside);
	assert_int_equal(mkdir(f->root, 0700), 0);
	assert_int_equal(mkdir(at(f, "outside"), 0700), 0);
	assert_int_equal(mkdir(at(f, "work/sub"), 0700), 0);
	put(f->outside, "outside secret");
	put(at(f, "work/in.txt"), "inside");
	put(at(f, "work/sub/deep.txt"), "deep");
	assert_int_equal(symlink(f->outside, at(f, "work/abs_link")), 0);
	assert_int_equal(symlink("../outside/secret.txt", at(f, "work/rel_link")), 0);
	assert_int_equal(symlink("../outside", at(f, "work/dir_link")), 0);
	assert_int_equal(symlink("/proc/self/root", at(f, "work/proc_root")), 0);
	assert_int_equal(symlink("sub/deep.txt", at(f, "work/in_link")), 0);
	assert_int_equal(link(f->outside, at(f, "work/hard.txt")), 0);
	assert_int_equal(mkfifo(at(f, "work/fifo"), 0600), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	struct err e;
	assert_int_equal(path_remove_tree(f->tmp, &e), 0);
	free(f);
	beneath_force_walk = false;
	return 0;
}

static char *read_ok(struct fixture *f, const char *name)
{
	struct err e = {0};
	char *s = path_read_beneath(f->root, name, 1024, NULL, &e);
	if (!s)
		fail_msg("reading '%s' failed: %s", name, e.msg);
	return s;
}

static void refused(struct fixture *f, const char *name, enum err_code code, const char *msg)
{
	struct err e = {0};
	char *s = path_read_beneath(f->root, name, 1024, NULL, &e);
	if (s)
		fail_msg("reading '%s' gave '%s'", name, s);
	assert_int_equal(e.code, code);
	if (!strstr(e.msg, msg))
		fail_msg("reading '%s': message '%s' lacks '%s'", name, e.msg, msg);
}

static void check_outside_intact(struct fixture *f)
{
	char *s = path_read_file(f->outside, 1024, NULL, NULL);
	assert_non_null(s);
	assert_string_equal(s, "outside secret");
	free(s);
}

static void reads_inside(struct fixture *f)
{
	char abs[PATH_MAX * 2];
	char *s;

	s = read_ok(f, "in.txt");
	assert_string_equal(s, "inside");
	free(s);
	s = read_ok(f, "./sub//deep.txt");
	assert_string_equal(s, "deep");
	free(s);
	assert_int_equal(str_fmt(abs, sizeof abs, "%s/sub/deep.txt", f->root), 0);
	s = read_ok(f, abs);
	assert_string_equal(s, "deep");
	free(s);
	assert_int_equal(str_fmt(abs, sizeof abs, "%s//in.txt", f->root), 0);
	s = read_ok(f, abs);
	assert_string_equal(s, "inside");
	free(s);
}

static void refuses_escapes(struct fixture *f)
{
	char p[PATH_MAX * 2];
	const char *outside = "is outside the working directory";

	refused(f, "../outside/secret.txt", ERR_FORBIDDEN, outside);
	refused(f, "sub/../../outside/secret.txt", ERR_FORBIDDEN, outside);
	refused(f, "sub/../in.txt", ERR_FORBIDDEN, outside);
	assert_int_equal(str_fmt(p, sizeof p, "%s/../outside/secret.txt", f->root), 0);
	refused(f, p, ERR_FORBIDDEN, outside);
	refused(f, f->outside, ERR_FORBIDDEN, outside);
	refused(f, "/etc/hostname", ERR_FORBIDDEN, outside);
	assert_int_equal(str_fmt(p, sizeof p, "/proc/self/root%s", f->outside), 0);
	refused(f, p, ERR_FORBIDDEN, outside);
	assert_int_equal(str_fmt(p, sizeof p, "/proc/self/root%s/in.txt", f->root), 0);
	refused(f, p, ERR_FORBIDDEN, outside);
	/* the root's name as a prefix of a sibling is not the root */
	assert_int_equal(str_fmt(p, sizeof p, "%s-x/in.txt", f->root), 0);
	refused(f, p, ERR_FORBIDDEN, outside);
	refused(f, "abs_link", ERR_FORBIDDEN, outside);
	refused(f, "rel_link", ERR_FORBIDDEN, outside);
	refused(f, "dir_link/secret.txt", ERR_FORBIDDEN, outside);
	refused(f, "proc_root/etc/hostname", ERR_FORBIDDEN, outside);
	refused(f, "hard.txt", ERR_FORBIDDEN, "hard links");
	refused(f, "fifo", ERR_INVALID, "not a regular file");
	refused(f, "missing.txt", ERR_NOT_FOUND, "does not exist");
	refused(f, "", ERR_INVALID, "empty path");
}

static void refuses_writes_out(struct fixture *f)
{
	struct err e = {0};
	char p[PATH_MAX * 2];
	int fd;

	assert_int_equal(str_fmt(p, sizeof p, "%s/../escaped.txt", f->root), 0);
	assert_true(path_write_beneath(f->root, p, "x", 1, 0600, &e) < 0);
	assert_int_equal(e.code, ERR_FORBIDDEN);
	assert_int_equal(access(at(f, "escaped.txt"), F_OK), -1);
	assert_true(path_write_beneath(f->root, "dir_link/new.txt", "x", 1, 0600, &e) < 0);
	assert_int_equal(access(at(f, "outside/new.txt"), F_OK), -1);
	assert_true(path_write_beneath(f->root, "abs_link", "x", 1, 0600, &e) < 0);
	assert_true(path_write_beneath(f->root, "hard.txt", "x", 1, 0600, &e) < 0);
	assert_non_null(strstr(e.msg, "hard links"));
	/* O_TRUNC must not empty the outside file before the hard link is seen */
	fd = path_open_beneath(f->root, "hard.txt", O_WRONLY | O_TRUNC, 0, &e);
	assert_true(fd < 0);
	assert_int_equal(e.code, ERR_FORBIDDEN);
	fd = path_open_beneath(f->root, "abs_link", O_WRONLY | O_CREAT | O_TRUNC, 0600, &e);
	assert_true(fd < 0);
	check_outside_intact(f);

	assert_true(path_mkdirs_beneath(f->root, "dir_link/made", 0700, &e) < 0);
	assert_int_equal(access(at(f, "outside/made"), F_OK), -1);
	assert_true(path_mkdirs_beneath(f->root, "../made", 0700, &e) < 0);
	assert_true(path_rename_beneath(f->root, "in.txt", "dir_link/in.txt", &e) < 0);
	assert_true(path_rename_beneath(f->root, "in.txt", "../in.txt", &e) < 0);
	assert_true(path_rename_beneath(f->root, "dir_link/secret.txt", "stolen.txt", &e) < 0);
	assert_int_equal(access(f->outside, F_OK), 0);
	assert_true(path_exists_beneath(f->root, "dir_link/secret.txt", &e) < 0);
	assert_int_equal(e.code, ERR_FORBIDDEN);
	assert_true(path_exists_beneath(f->root, "../outside", &e) < 0);
}

static void works_inside(struct fixture *f)
{
	struct err e = {0};
	char *s;

	assert_int_equal(path_mkdirs_beneath(f->root, "a/b/c", 0700, &e), 0);
	assert_int_equal(path_mkdirs_beneath(f->root, "a/b/c", 0700, &e), 0);
	assert_int_equal(path_write_beneath(f->root, "a/b/c/x.txt", "new", 3, 0600, &e), 0);
	assert_int_equal(path_write_beneath(f->root, "a/b/c/x.txt", "newer", 5, 0600, &e), 0);
	s = read_ok(f, "a/b/c/x.txt");
	assert_string_equal(s, "newer");
	free(s);
	assert_int_equal(path_exists_beneath(f->root, "a/b/c/x.txt", &e), 1);
	assert_int_equal(path_exists_beneath(f->root, "a/b/c/y.txt", &e), 0);
	assert_int_equal(path_rename_beneath(f->root, "a/b/c/x.txt", "sub/x.txt", &e), 0);
	assert_int_equal(path_exists_beneath(f->root, "sub/x.txt", &e), 1);
	assert_int_equal(path_exists_beneath(f->root, "a/b/c/x.txt", &e), 0);
	s = path_abs_beneath(f->root, "sub/x.txt", &e);
	assert_non_null(s);
	assert_string_equal(s, at(f, "work/sub/x.txt"));
	free(s);
	assert_null(path_abs_beneath(f->root, "/etc/passwd", &e));
}

static void test_openat2(void **state)
{
	struct fixture *f = *state;
	char *s;

	beneath_force_walk = false;
	reads_inside(f);
	refuses_escapes(f);
	refuses_writes_out(f);
	works_inside(f);
	/* openat2 follows a link that stays beneath the root */
	s = read_ok(f, "in_link");
	assert_string_equal(s, "deep");
	free(s);
}

static void test_walk(void **state)
{
	struct fixture *f = *state;

	beneath_force_walk = true;
	reads_inside(f);
	refuses_escapes(f);
	refuses_writes_out(f);
	works_inside(f);
	/* the walk is stricter: no link is followed at all */
	refused(f, "in_link", ERR_FORBIDDEN, "link");
}

/* path_read_at: what the supervisor reads of a folder the runner wrote (queue/supervise/results.c). */
static void test_read_at(void **state)
{
	struct fixture *f = *state;
	struct err e = {0};
	size_t len;
	int dirfd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *s;

	assert_true(dirfd >= 0);
	s = path_read_at(dirfd, "in.txt", 1024, &len, &e);
	assert_non_null(s);
	assert_string_equal(s, "inside");
	assert_int_equal(len, 6);
	free(s);
	assert_null(path_read_at(dirfd, "abs_link", 1024, &len, &e)); /* links are not followed */
	assert_null(path_read_at(dirfd, "in_link", 1024, &len, &e));	/* not even inside */
	assert_null(path_read_at(dirfd, "fifo", 1024, &len, &e));	/* returns at once, refused */
	assert_null(path_read_at(dirfd, "sub", 1024, &len, &e));
	assert_null(path_read_at(dirfd, "missing", 1024, &len, &e));
	assert_int_equal(e.code, ERR_NOT_FOUND);
	assert_null(path_read_at(dirfd, "in.txt", 3, &len, &e));
	assert_int_equal(e.code, ERR_TOO_LARGE);
	close(dirfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_openat2, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_walk, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_at, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
