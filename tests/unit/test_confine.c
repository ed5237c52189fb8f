/* Unit tests for runner/confine.c: a child confined to a temporary working directory can
 * read and write there and read system files, and gets EACCES for a file in another
 * folder and for writes outside.  Skipped (not failed) where the kernel has no Landlock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/path.h"
#include "base/str.h"
#include "runner/confine.h"

#define SKIPPED 77

/* What the confined child checks; its exit status is the number of the first failed check
 * (written to the pipe with the reason), 0 when all hold, SKIPPED without Landlock. */
struct dirs {
	char tmp[PATH_MAX];
	char work[PATH_MAX];
	char other[PATH_MAX]; /* tmp/other/secret.txt: outside the working directory */
};

static int report(int fd, int check, const char *what)
{
	char line[512];
	int n = snprintf(line, sizeof line, "check %d: %s (errno %s)", check, what, strerror(errno));
	if (write(fd, line, (size_t)n) < 0)
		return check;
	return check;
}

static int expect_denied(int fd, int check, const char *path, int flags)
{
	int f = open(path, flags | O_CLOEXEC, 0600);
	if (f >= 0) {
		close(f);
		errno = 0;
		return report(fd, check, path);
	}
	return errno == EACCES ? 0 : report(fd, check, path);
}

static int child(const struct dirs *d, int fd)
{
	char desc[256], path[PATH_MAX + 32], buf[16] = {0};
	struct err e = {0};
	int rc, f;

	rc = confine_runner(d->work, desc, sizeof desc, &e);
	if (rc < 0)
		return report(fd, 1, e.msg);
	if (write(fd, desc, strlen(desc)) < 0 || write(fd, "; ", 2) < 0 || rc == 0)
		return rc == 0 ? SKIPPED : report(fd, 1, "write to the pipe");
	if (!strstr(desc, "landlock ABI"))
		return report(fd, 2, desc);
	assert_int_equal(str_fmt(path, sizeof path, "%s/new.txt", d->work), 0);
	f = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (f < 0 || write(f, "inside", 6) != 6 || close(f) != 0)
		return report(fd, 3, "write in the working directory");
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0 || read(f, buf, sizeof buf - 1) != 6 || strcmp(buf, "inside") != 0)
		return report(fd, 4, "read back in the working directory");
	close(f);
	assert_int_equal(str_fmt(path, sizeof path, "%s/sub", d->work), 0);
	if (mkdir(path, 0700) != 0)
		return report(fd, 5, "mkdir in the working directory");
	if ((rc = expect_denied(fd, 6, d->other, O_RDONLY)) != 0)
		return rc;
	if ((rc = expect_denied(fd, 7, d->other, O_WRONLY)) != 0)
		return rc;
	assert_int_equal(str_fmt(path, sizeof path, "%s/escaped.txt", d->tmp), 0);
	if ((rc = expect_denied(fd, 8, path, O_WRONLY | O_CREAT)) != 0)
		return rc;
	assert_int_equal(str_fmt(path, sizeof path, "/proc/self/root%s", d->other), 0);
	if ((rc = expect_denied(fd, 9, path, O_RDONLY)) != 0)
		return rc;
	if (access("/etc/hostname", F_OK) == 0 && (rc = expect_denied(fd, 10, "/etc/hostname", O_RDONLY)) != 0)
		return rc;
	f = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (f < 0)
		return report(fd, 11, "open /dev/null");
	close(f);
	f = open("/usr", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f < 0)
		return report(fd, 12, "read-only system path /usr");
	close(f);
	/* its own /proc/<pid>, which LeakSanitizer reads at exit (task/) */
	f = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f < 0)
		return report(fd, 13, "its own /proc/self/task");
	close(f);
	return 0;
}

/* Under the runner zygote the system paths are opened by the zygote, and the runner is a
 * child of it: the confined process is not the one that preloaded. */
static int preloaded_child(const struct dirs *d, int fd)
{
	int status;
	pid_t pid;

	confine_preload();
	pid = fork();
	if (pid < 0)
		return report(fd, 14, "fork");
	if (pid == 0)
		_exit(child(d, fd));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return report(fd, 14, "the confined grandchild did not exit");
	return WEXITSTATUS(status);
}

/* preload: as under the runner zygote, the system paths were opened beforehand
 * (confine_preload), by the confined process's parent. */
static void run_confined(bool preload)
{
	struct dirs d;
	char tmpl[] = "/tmp/accord-confine-XXXXXX", msg[512] = {0};
	struct err e;
	int p[2], status;
	pid_t pid;
	FILE *f;

	assert_non_null(mkdtemp(tmpl));
	assert_non_null(realpath(tmpl, d.tmp));
	assert_true(snprintf(d.work, sizeof d.work, "%s/work", d.tmp) < (int)sizeof d.work);
	assert_int_equal(mkdir(d.work, 0700), 0);
	assert_true(snprintf(d.other, sizeof d.other, "%s/other", d.tmp) < (int)sizeof d.other);
	assert_int_equal(mkdir(d.other, 0700), 0);
	strncat(d.other, "/secret.txt", sizeof d.other - strlen(d.other) - 1);
	assert_non_null(f = fopen(d.other, "w"));
	fputs("outside", f);
	assert_int_equal(fclose(f), 0);

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		/* _exit: the confined child must not run the sanitizers' exit-time checks */
		_exit(preload ? preloaded_child(&d, p[1]) : child(&d, p[1]));
	}
	close(p[1]);
	for (size_t got = 0, n;
	     got < sizeof msg - 1 && (n = (size_t)read(p[0], msg + got, sizeof msg - 1 - got)) > 0 && n != (size_t)-1;
	     got += n)
		;
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(path_remove_tree(d.tmp, &e), 0);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == SKIPPED) {
		print_message("skipped: %s\n", msg);
		skip();
	}
	if (WEXITSTATUS(status) != 0)
		fail_msg("confined child failed: %s", msg);
	print_message("%s\n", msg);
}

static void test_confine_runner(void **state)
{
	(void)state;
	run_confined(false);
}

static void test_confine_runner_preloaded(void **state)
{
	(void)state;
	run_confined(true);
}

static void test_close_fds(void **state)
{
	struct err e;
	int fd, status;
	pid_t pid;
	(void)state;

	fd = open("/dev/null", O_RDONLY);
	assert_true(fd > 2);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(confine_close_fds(2, &e) == 0 && fcntl(fd, F_GETFD) < 0 && errno == EBADF &&
			      fcntl(2, F_GETFD) >= 0
			  ? 0
			  : 1);
	close(fd);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_confine_runner),
	    cmocka_unit_test(test_confine_runner_preloaded),
	    cmocka_unit_test(test_close_fds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
