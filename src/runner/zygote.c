/* The runner zygote (runner/zygote.h): forks one runner per request of the server. */
#include "runner/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <link.h>
#endif

#include <jansson.h>
#include <yaml.h>

#include "base/sanitizer.h"
#include "base/str.h"
#include "runner/confine.h"
#include "runner/runner.h"

#define CTL_FD 3

/* The runners alive: pid → the request's tag.  The table lives in pages a runner does not
 * get (MADV_DONTFORK): the zygote writes it right after each fork, when every page it
 * shares with the runner just forked would have to be copied first (a fault of its own). */
struct kid {
	pid_t pid;
	uint64_t tag;
};

struct kids {
	size_t n, cap, len; /* len: bytes mapped */
	struct kid k[];
};

static struct kids *kids;

/* The signals whose disposition in the zygote, once it is set up, is not the default (those
 * it ignores, and any it inherited or a library installed): a runner resets these, with
 * one call each instead of one for every signal (see note_changed). */
static sigset_t changed;

/* Maps the table, or doubles it (mremap keeps MADV_DONTFORK). */
static int grow_kids(void)
{
	size_t len = kids ? kids->len * 2 : (size_t)sysconf(_SC_PAGESIZE);
	struct kids *k = kids ? mremap(kids, kids->len, len, MREMAP_MAYMOVE)
			      : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (k == MAP_FAILED)
		return -1;
	if (!kids) /* without it, only slower: the pages are copied on write */
		(void)madvise(k, len, MADV_DONTFORK);
	k->len = len;
	k->cap = (len - sizeof *k) / sizeof k->k[0];
	kids = k;
	return 0;
}

static int add_kid(pid_t pid, uint64_t tag)
{
	if ((!kids || kids->n == kids->cap) && grow_kids() < 0)
		return -1;
	kids->k[kids->n++] = (struct kid){pid, tag};
	return 0;
}

static int send_msg(uint64_t tag, int kind, pid_t pid, int status, int64_t maxrss_kb)
{
	struct zygote_msg m = {.tag = tag, .kind = kind, .pid = pid, .status = status, .maxrss_kb = maxrss_kb};

	while (send(CTL_FD, &m, sizeof m, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

/* The runner's clean environment (as queue/supervise/supervisor.c gives an exec'd runner),
 * with the sanitizer settings the zygote got: an array of the runner's own (env, room for
 * RUNNER_ENV entries) of strings in vars (ENV_VARS bytes, on its stack) and the zygote's,
 * rather than clearenv and setenv, whose copies and search tree are pages of the zygote's
 * heap each runner would copy (bench/RESULTS.md "the zygote's and runners' CPU"). */
#define RUNNER_ENV 10
#define ENV_VARS (2 * PATH_MAX + 16)

static void runner_env(const char *workdir, char *vars, char **env)
{
	static char path[] = "PATH=/usr/local/bin:/usr/bin:/bin", lang[] = "LANG=C.UTF-8", tz[] = "TZ=UTC";
	static const char *const pass[] = {"ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=",
#if defined(__SANITIZE_ADDRESS__)
					   "ACCORD_TEST_RUNNER_LEAK=", /* base/sanitizer.h */
#endif
	};
	/* workdir is shorter than PATH_MAX (on_request checked its NUL): both fit */
	char *tmpdir = vars + strlen("HOME=") + strlen(workdir) + 1;
	size_t n = 0;

	str_fmt_cut(vars, ENV_VARS, "HOME=%s", workdir);
	str_fmt_cut(tmpdir, ENV_VARS - (size_t)(tmpdir - vars), "TMPDIR=%s", workdir);
	env[n++] = vars;
	env[n++] = path;
	env[n++] = lang;
	env[n++] = tz;
	env[n++] = tmpdir;
	for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++)
		for (char **v = environ; v && *v; v++)
			if (strncmp(*v, pass[i], strlen(pass[i])) == 0) {
				env[n++] = *v;
				break;
			}
	env[n] = NULL;
	environ = env;
}

static void die(const char *what, int err)
{
	dprintf(2, "accord runner: %s: %s\n", what, strerror(err));
	_exit(1);
}

/* In the forked child: becomes a runner as `accord runner` would be after its exec.  Not
 * inlined: its locals would widen the zygote's own frame, whose pages the zygote writes
 * after each fork (a copy-on-write fault each while the runner lives). */
static _Noreturn __attribute__((noinline)) void child(const struct zygote_req *rq, int log_fd, int ipc_fd, pid_t zygote)
{
	char vars[ENV_VARS], *env[RUNNER_ENV];
	sigset_t none;
	int null_fd, rc;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != zygote) /* the zygote died before the line above */
		_exit(1);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(&changed, sig) == 1)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (null_fd < 0 || dup2(null_fd, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 ||
	    dup2(ipc_fd, CTL_FD) < 0)
		_exit(1);
	/* runner_body closes every descriptor above 3: the zygote's socket is gone already
	 * (fd 3 is the IPC socket now), its signalfd and the request's originals go there. */
	if (chdir(rq->workdir) != 0)
		die(rq->workdir, errno);
	for (uint32_t i = 0; i < rq->n_rlimits && i < ZYGOTE_MAX_RLIMITS; i++) {
		struct rlimit rl = {rq->rlimits[i].value, rq->rlimits[i].value};
		if (setrlimit(rq->rlimits[i].resource, &rl) != 0)
			die("setrlimit", errno);
	}
	runner_env(rq->workdir, vars, env);
	rc = runner_body();
	/* Without the library destructors of the zygote's image (some 50 libraries): what
	 * the runner wrote is flushed and closed already. */
	fflush(NULL);
#if defined(__SANITIZE_ADDRESS__)
	/* LeakSanitizer's end-of-process check, now: at exit it ran at the same point, before
	 * any library destructor (its handler is registered after the loader's); the
	 * destructors then unregistered every image's globals with AddressSanitizer
	 * (bench/RESULTS.md).  A leak ends the runner here, its report in the process log. */
	sanitizer_leak_check();
#endif
	/* The supervisor's end of the process begins when the log and the IPC socket close:
	 * here, rather than after the kernel has torn down the address space at _exit. */
	close(1);
	close(2);
	close(CTL_FD);
	_exit(rc);
}

/* The zygote's end: its runners' groups get SIGKILL (they would anyway, by their
 * PR_SET_PDEATHSIG, but a flow's own children in the group would not). */
static void kill_kids(void)
{
	if (!kids)
		return;
	for (size_t i = 0; i < kids->n; i++)
		kill(-kids->k[i].pid, SIGKILL);
	munmap(kids, kids->len);
	kids = NULL;
}

/* The zygote has one thread and holds no lock as it forks, and no atfork handler is
 * registered in it: glibc's fork() would only reset in the child the locks of its loader
 * and of threads — writes to pages of libc and ld.so that each runner then copies (two or
 * three faults) — so the bare system call does.  ASan builds keep fork(): the sanitizer
 * intercepts it to hold its allocator's locks across. */
static pid_t zygote_fork(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return fork();
#else
	return _Fork();
#endif
}

/* One request: its two descriptors, a fork, the answer. */
static void on_request(void)
{
	struct zygote_req rq;
	struct zygote_wire w;
	struct cmsghdr *cm;
	int fds[2] = {-1, -1}, nfds = 0;
	ssize_t n;

	zygote_wire_init(&w, &rq);
	n = recvmsg(CTL_FD, &w.mh, MSG_CMSG_CLOEXEC);
	pid_t pid;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) { /* the server is gone or closed us */
		kill_kids();
		exit(0);
	}
	for (cm = CMSG_FIRSTHDR(&w.mh); cm; cm = CMSG_NXTHDR(&w.mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
			if (nfds < 2)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	if (n != (ssize_t)sizeof rq || nfds != 2 || (w.mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    memchr(rq.workdir, 0, sizeof rq.workdir) == NULL || rq.workdir[0] != '/') {
		send_msg(n >= (ssize_t)sizeof rq.tag ? rq.tag : 0, ZYGOTE_FAILED, 0, EINVAL, 0);
		goto out;
	}
	pid = zygote_fork();
	if (pid == 0)
		child(&rq, fds[0], fds[1], getppid());
	if (pid < 0) {
		send_msg(rq.tag, ZYGOTE_FAILED, 0, errno, 0);
		goto out;
	}
	setpgid(pid, pid); /* also here: the group exists before the server can signal it */
	if (add_kid(pid, rq.tag) < 0) {
		kill(pid, SIGKILL);
		send_msg(rq.tag, ZYGOTE_FAILED, 0, ENOMEM, 0);
		goto out;
	}
	send_msg(rq.tag, ZYGOTE_STARTED, pid, 0, 0);
out:
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

static void reap(int sfd)
{
	struct signalfd_siginfo si;
	struct rusage ru;
	int status;
	pid_t pid;

	while (read(sfd, &si, sizeof si) > 0)
		;
	while ((pid = wait4(-1, &status, WNOHANG, &ru)) > 0) {
		for (size_t i = 0; kids && i < kids->n; i++) {
			if (kids->k[i].pid != pid)
				continue;
			send_msg(kids->k[i].tag, ZYGOTE_EXITED, pid, status, ru.ru_maxrss);
			kids->k[i] = kids->k[--kids->n];
			break;
		}
	}
}

/* What every runner needs, done once here rather than in each child: the YAML parser's
 * and jansson's first-use set-up, and the dynamic loader's lazy bindings of the calls
 * they make. */
static void preload(void)
{
	yaml_parser_t p;
	json_t *v = json_loads("{\"a\":[1,\"b\",true,null,1.5]}", 0, NULL);
	char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;

	free(s);
	json_decref(v);
	if (yaml_parser_initialize(&p)) {
		yaml_event_t ev;
		static const unsigned char doc[] = "flows:\n  default:\n    - log: x\n";
		yaml_parser_set_input_string(&p, doc, sizeof doc - 1);
		while (yaml_parser_parse(&p, &ev)) {
			yaml_event_type_t t = ev.type;
			yaml_event_delete(&ev);
			if (t == YAML_STREAM_END_EVENT)
				break;
		}
		yaml_parser_delete(&p);
	}
}

/* After the last change of a disposition in the zygote: nothing changes one afterwards (its
 * loop waits on descriptors), so the set holds for every runner it forks.  A disposition
 * that cannot be read is reset anyway. */
static void note_changed(void)
{
	sigemptyset(&changed);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, NULL, &sa) != 0 || sa.sa_handler != SIG_DFL)
			sigaddset(&changed, sig);
	}
}

#if defined(__SANITIZE_ADDRESS__)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
static int prefault_segment(struct dl_phdr_info *info, size_t size, void *page_size)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || ph->p_memsz == 0)
			continue;
		uintptr_t mask = *(const size_t *)page_size - 1;
		uintptr_t start = (info->dlpi_addr + ph->p_vaddr) & ~mask;
		uintptr_t end = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz + mask) & ~mask;
		(void)madvise((void *)start, end - start, MADV_POPULATE_READ);
	}
	return 0;
}

/* LeakSanitizer reads every writable segment of every loaded image when a runner exits
 * (its roots): pages the zygote never touched were each a fault in every runner (~3,000 a
 * runner, half of a test server's page faults).  Mapped here once, they come with fork. */
static void prefault_images(void)
{
	size_t page_size = (size_t)sysconf(_SC_PAGESIZE);
	dl_iterate_phdr(prefault_segment, &page_size);
}
#else
static void prefault_images(void)
{
}
#endif

int zygote_main(void)
{
	sigset_t chld;
	int sfd;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		fprintf(stderr, "accord runner --zygote: signalfd: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* A stop signal sent to the whole service (systemd's control group, Ctrl-C in the
	 * terminal's process group) is the server's to handle: the zygote ends when the server
	 * closes its control socket, or with the server (PR_SET_PDEATHSIG).  Its runners reset
	 * every signal to the default. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	preload();
	confine_preload();
	note_changed();
	prefault_images();
	for (;;) {
		struct pollfd p[2] = {{CTL_FD, POLLIN, 0}, {sfd, POLLIN, 0}};
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "accord runner --zygote: poll: %s\n", strerror(errno));
			return 1;
		}
		if (p[1].revents)
			reap(sfd);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
			on_request();
	}
}
