/* Unit tests for runner/script_host.c: an unknown engine and a missing one fail with the
 * messages a flow sees (the missing one naming its Debian package), the description lists
 * what is there and what is not, and a helper is started once, reused, and reaped at the
 * end.  The helper test needs Debian's python3 and is skipped without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runner/script_host.c"

static bool nothing_installed(const char *path)
{
	(void)path;
	return false;
}

static bool only_python(const char *path)
{
	return strcmp(path, "/usr/bin/python3") == 0;
}

static void test_unknown_engine(void **state)
{
	struct script_hosts s;
	struct err e = {0};
	int fd = -1;
	(void)state;
	script_hosts_init(&s, "/");
	assert_true(script_hosts_open(&s, "cobol", &fd, &e) < 0);
	assert_int_equal(e.code, ERR_NOT_FOUND);
	assert_string_equal(e.msg, "Script engine not found: cobol");
	script_hosts_cleanup(&s);
}

static void test_missing_engine_names_its_package(void **state)
{
	struct script_hosts s;
	struct err e = {0};
	int fd = -1;
	(void)state;
	exe_ok = nothing_installed;
	script_hosts_init(&s, "/");
	assert_true(script_hosts_open(&s, "groovy", &fd, &e) < 0);
	assert_int_equal(e.code, ERR_NOT_FOUND);
	assert_string_equal(e.msg, "Script engine 'groovy' is not installed on this node: install the Debian package "
				   "'groovy' (apt-get install groovy)");
	assert_true(script_hosts_open(&s, "js", &fd, &e) < 0);
	assert_non_null(strstr(e.msg, "'nodejs' (apt-get install nodejs)"));
	assert_int_equal(s.h[0].pid, 0);
	script_hosts_cleanup(&s);
	exe_ok = exe_present;
}

static void test_describe(void **state)
{
	char buf[512];
	(void)state;
	exe_ok = only_python;
	script_hosts_describe(buf, sizeof buf);
	assert_string_equal(buf, "python (/usr/bin/python3); missing: js (apt-get install nodejs), groovy (apt-get "
				 "install groovy), ruby (apt-get install ruby)");
	exe_ok = nothing_installed;
	script_hosts_describe(buf, sizeof buf);
	assert_string_equal(buf, "missing: js (apt-get install nodejs), python (apt-get install python3), groovy "
				 "(apt-get install groovy), ruby (apt-get install ruby)");
	exe_ok = exe_present;
}

static void test_helper_started_once_and_reaped(void **state)
{
	static const char run[] = "{\"op\":\"run\",\"name\":\"script\",\"body\":\"print(6 * 7)\",\"vars\":{}}\n";
	struct script_hosts s;
	struct err e = {0};
	char reply[256] = "";
	int fd = -1, again = -1;
	size_t got = 0;
	pid_t pid;
	(void)state;
	if (access("/usr/bin/python3", X_OK) != 0)
		skip();
	script_hosts_init(&s, "/tmp");
	assert_int_equal(script_hosts_open(&s, "python", &fd, &e), 0);
	pid = s.h[1].pid;
	assert_true(pid > 0);
	assert_int_equal(script_hosts_open(&s, "python", &again, &e), 0);
	assert_int_equal(again, fd);
	assert_int_equal(s.h[1].pid, pid);
	assert_int_equal(send(fd, run, sizeof run - 1, MSG_NOSIGNAL), (ssize_t)(sizeof run - 1));
	while (!strstr(reply, "\"done\"") && got < sizeof reply - 1) {
		ssize_t n = recv(fd, reply + got, sizeof reply - 1 - got, 0);
		assert_true(n > 0);
		got += (size_t)n;
		reply[got] = '\0';
	}
	assert_non_null(strstr(reply, "{\"op\":\"log\",\"level\":\"INFO\",\"msg\":\"42\"}\n"));
	script_hosts_cleanup(&s);
	assert_int_equal(s.h[1].pid, 0);
	assert_int_equal(kill(pid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unknown_engine),
	    cmocka_unit_test(test_missing_engine_names_its_package),
	    cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_helper_started_once_and_reaped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
