/* The script engines' helper processes (script_host.h). */
#include "runner/script_host.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/spawn.h"
#include "base/str.h"
#include "runner/script_shims.h"

/* Where each engine is looked for (absolute: the runner's environment has no PATH worth
 * trusting, and Landlock grants /usr and /bin only), the Debian package that provides it,
 * and how it is told to run the shim. */
static const struct engine {
	const char *name;
	const char *shim;
	const char *const exes[3];
	const char *package;
	const char *const args[4]; /* before the shim's text */
	bool jvm; /* speaks on stdin/stdout (a JVM cannot open fd 3) and needs JAVA_HOME */
} engines[SCRIPT_N_ENGINES] = {
    {"js", "js", {"/usr/bin/node", "/usr/bin/nodejs", NULL}, "nodejs", {"-e", NULL}, false},
    {"python", "py", {"/usr/bin/python3", NULL}, "python3", {"-I", "-S", "-B", "-c"}, false},
    {"groovy", "groovy", {"/usr/bin/groovy", NULL}, "groovy", {"-e", NULL}, true},
    {"ruby", "rb", {"/usr/bin/ruby", NULL}, "ruby", {"-e", NULL}, false},
};

/* A JVM's flags: no /tmp/hsperfdata (outside the confinement) and no hs_err files, a
 * collector, heap and reservations that fit the runner's address-space limit
 * (--limit-runner-memory-bytes, 1 GiB by default), the quick JIT for short scripts. */
#define JVM_OPTS                                                                                                       \
	"JAVA_OPTS=-XX:-UsePerfData -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx256m -Xss1m "                        \
	"-XX:CompressedClassSpaceSize=32m -XX:ReservedCodeCacheSize=32m -XX:MaxMetaspaceSize=128m "                    \
	"-XX:ErrorFile=/dev/null"

/* JAVA_HOME=… from where /usr/bin/java leads (Debian's alternatives), into buf. */
static void java_home(char *buf, size_t cap)
{
	char path[PATH_MAX];
	char *slash;
	if (!realpath("/usr/bin/java", path)) {
		str_fmt_cut(buf, cap, "JAVA_HOME=/usr/lib/jvm/default-java");
		return;
	}
	slash = strrchr(path, '/');
	if (slash)
		*slash = '\0'; /* …/bin */
	slash = strrchr(path, '/');
	if (slash)
		*slash = '\0';
	str_fmt_cut(buf, cap, "JAVA_HOME=%s", path);
}

static int engine_index(const char *name)
{
	for (int i = 0; i < SCRIPT_N_ENGINES; i++)
		if (strcmp(engines[i].name, name) == 0)
			return i;
	return -1;
}

static bool exe_present(const char *path)
{
	return access(path, X_OK) == 0;
}

/* Whether an engine's program is there (tests/unit/test_script_host.c replaces it). */
static bool (*exe_ok)(const char *path) = exe_present;

static const char *engine_exe(const struct engine *en)
{
	for (size_t i = 0; i < 3 && en->exes[i]; i++)
		if (exe_ok(en->exes[i]))
			return en->exes[i];
	return NULL;
}

void script_hosts_init(struct script_hosts *s, const char *workdir)
{
	memset(s, 0, sizeof *s);
	s->workdir = workdir;
	for (int i = 0; i < SCRIPT_N_ENGINES; i++)
		s->h[i].fd = -1;
}

static void helper_end(struct script_helper *h)
{
	if (h->fd >= 0)
		close(h->fd);
	if (h->pid > 0) {
		kill(h->pid, SIGKILL);
		while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	h->fd = -1;
	h->pid = 0;
}

static int helper_start(struct script_hosts *s, const struct engine *en, const char *exe, struct script_helper *h,
			struct err *e)
{
	const char *shim = script_shim(en->shim);
	char home[4200], tmp[4200], jhome[PATH_MAX + 16];
	char *env[] = {"PATH=/usr/bin:/bin", "LANG=C.UTF-8", home, tmp, NULL, NULL, NULL, NULL};
	char *argv[8];
	size_t n = 0;
	int sv[2], rc;

	if (!shim)
		return err_set(e, ERR_NOT_FOUND, "script engine '%s' is not built into this Accord", en->name);
	str_fmt_cut(home, sizeof home, "HOME=%s", s->workdir ? s->workdir : "/");
	str_fmt_cut(tmp, sizeof tmp, "TMPDIR=%s", s->workdir ? s->workdir : "/tmp");
	if (en->jvm) {
		java_home(jhome, sizeof jhome);
		env[4] = jhome;
		env[5] = JVM_OPTS;
		env[6] = "MALLOC_ARENA_MAX=2"; /* glibc's 64 MiB arena per JVM thread would not fit */
	}
	argv[n++] = (char *)exe;
	for (size_t i = 0; i < 4 && en->args[i]; i++)
		argv[n++] = (char *)en->args[i];
	argv[n++] = (char *)shim;
	argv[n] = NULL;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return err_set(e, ERR_INTERNAL, "script engine '%s': socketpair: %s", en->name, strerror(errno));
	{
		const struct spawn_fd fds_fd3[] = {{-1, 0}, {2, 1}, {2, 2}, {sv[1], 3}};
		const struct spawn_fd fds_stdio[] = {{sv[1], 0}, {sv[1], 1}, {2, 2}};
		const struct spawn_opts o = {.exe = exe,
					     .argv = argv,
					     .env = env,
					     .fds = en->jvm ? fds_stdio : fds_fd3,
					     .n_fds = en->jvm ? 3 : 4,
					     .cwd = s->workdir};
		rc = spawn_start(&o, &h->pid);
	}
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		h->pid = 0;
		return err_set(e, ERR_INTERNAL, "script engine '%s': cannot start %s: %s", en->name, exe, strerror(rc));
	}
	h->fd = sv[0];
	return 0;
}

int script_hosts_open(struct script_hosts *s, const char *engine, int *fd, struct err *e)
{
	int i = engine_index(engine);
	const char *exe;

	if (i < 0)
		return err_set(e, ERR_NOT_FOUND, "Script engine not found: %s", engine);
	if (s->h[i].pid > 0) {
		*fd = s->h[i].fd;
		return 0;
	}
	exe = engine_exe(&engines[i]);
	if (!exe)
		return err_set(e, ERR_NOT_FOUND,
			       "Script engine '%s' is not installed on this node: install the Debian package '%s' "
			       "(apt-get install %s)",
			       engine, engines[i].package, engines[i].package);
	if (helper_start(s, &engines[i], exe, &s->h[i], e) < 0)
		return -1;
	*fd = s->h[i].fd;
	return 0;
}

void script_hosts_lost(struct script_hosts *s, const char *engine)
{
	int i = engine_index(engine);
	if (i >= 0)
		helper_end(&s->h[i]);
}

void script_hosts_cleanup(struct script_hosts *s)
{
	for (int i = 0; i < SCRIPT_N_ENGINES; i++)
		helper_end(&s->h[i]);
}

void script_hosts_describe(char *buf, size_t cap)
{
	size_t off = 0;
	int missing = 0;

	buf[0] = '\0';
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < SCRIPT_N_ENGINES && off < cap; i++) {
			const char *exe = engine_exe(&engines[i]);
			if ((pass == 0) != (exe != NULL))
				continue;
			if (pass == 1 && missing++ == 0)
				off += (size_t)snprintf(buf + off, cap - off, "%smissing: ", off ? "; " : "");
			else if (off)
				off += (size_t)snprintf(buf + off, cap - off, ", ");
			if (off < cap)
				off += (size_t)snprintf(buf + off, cap - off, "%s (%s%s)", engines[i].name,
							exe ? exe : "apt-get install ", exe ? "" : engines[i].package);
		}
}
