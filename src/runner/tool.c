/* External programs of tasks (tool.h). */
#include "runner/tool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "base/linesplit.h"
#include "base/path.h"
#include "base/spawn.h"
#include "base/str.h"

/* The niceness of every program a task runs (and all it starts: they inherit it): below the
 * server's threads and the other processes' runners, so that a playbook's fifty forks take
 * the CPU the machine has left, not the API's (bench/ansible: another user's hello-world
 * start p50). */
#define TOOL_NICE 5

/* Lowers the new program's group to TOOL_NICE (never raises it: a runner already nicer
 * keeps its own), right after the spawn: what the program forks from then on inherits it. */
static void lower_priority(pid_t group)
{
	int mine;

	errno = 0;
	mine = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && mine >= TOOL_NICE)
		return;
	(void)setpriority(PRIO_PGRP, (id_t)group, TOOL_NICE); /* best effort: the program runs either way */
}

#define TOOL_KILL_GRACE_MS 5000
#define TOOL_ENV_MAX 64
#define TOOL_EVENT_MAX (1u << 20)
#define TOOL_EVENT_FD 3
#define TOOL_REPLY_FD 4
#define TOOL_REPLY_WAIT_MS 5000

struct tool_io {
	const struct tool_sink *out;
	const struct flow_tool *t;
	const char *event_type;
	struct line_split acc; /* output not yet a whole line */
	struct buf ev; /* events not yet a whole line */
	bool ev_skip;  /* dropping the rest of an over-long event line */
	bool is_err;   /* the stderr stream of a tool with err_line */
	int reply;     /* the write end of the program's answers (fd 4), -1: none */
	struct tool_io *err; /* that stream's own, NULL when stderr joins stdout */
};

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void emit(void *ctx, char *line, size_t len)
{
	struct tool_io *io = ctx;

	(void)len;
	if (io->is_err)
		io->t->err_line(io->t->line_ctx, line);
	else if (io->t->line)
		io->t->line(io->t->line_ctx, line);
	else
		io->out->line(io->out->ctx, line);
}

/* Appends bytes and hands over every whole line (or a full buffer's worth). */
static void take(struct tool_io *io, const char *p, size_t n)
{
	line_split_take(&io->acc, p, n, emit, io);
}

/* An event of the tool's type, or {"eventType": "<type>_<SUB>", "data": {…}}: an event of a
 * subtype of it (ANSIBLE_PLAYBOOK_INFO of ANSIBLE); the program cannot name any other type. */
/* Writes the answer to a request as one line; a program that does not read it within
 * TOOL_REPLY_WAIT_MS loses its answers (the pipe is closed). */
static void reply_write(struct tool_io *io, json_t *answer)
{
	char *json = json_dumps(answer, JSON_COMPACT), *text = NULL;
	size_t len = 0, done = 0;
	long long until = now_ms() + TOOL_REPLY_WAIT_MS;

	if (json && asprintf(&text, "%s\n", json) < 0)
		text = NULL;
	free(json);
	len = text ? strlen(text) : 0;
	while (text && io->reply >= 0 && done < len) {
		struct pollfd p = {io->reply, POLLOUT, 0};
		ssize_t k = poll(&p, 1, 1000) > 0 ? write(io->reply, text + done, len - done) : 0;
		if (k > 0)
			done += (size_t)k;
		else if ((k < 0 && errno != EAGAIN && errno != EINTR) || now_ms() > until) {
			close(io->reply);
			io->reply = -1;
		}
	}
	free(text);
}

static void request(struct tool_io *io, json_t *req)
{
	json_t *answer = io->t->request(io->t->request_ctx, req);
	if (!answer)
		answer = json_pack("{s:s}", "error", "the request failed");
	reply_write(io, answer);
	json_decref(answer);
}

static void event_line(struct tool_io *io, const char *p, size_t n)
{
	/* a program's output may hold NUL characters (a shell task's stdout): kept by the
	 * parser, then removed from the event (as Concord stores one: other control
	 * characters stay) */
	json_t *v = json_loadb(p, n, JSON_ALLOW_NUL, NULL), *data = json_object_get(v, "data");
	const char *sub = json_string_value(json_object_get(v, "eventType"));
	size_t tl = strlen(io->event_type);

	if (json_object_get(v, "request") && io->t->request) {
		/* a request is never an event (it may hold a store password); without a reader
		 * for the answers any more, it is dropped */
		if (jsonx_strip_nul(v) != 0) {
			json_t *bad = json_pack("{s:s}", "error", "a request may not hold a NUL character");
			reply_write(io, bad);
			json_decref(bad);
		} else if (json_is_object(json_object_get(v, "request")) && io->reply >= 0)
			request(io, json_object_get(v, "request"));
		json_decref(v);
		return;
	}
	if (!json_is_object(v) || !io->out->event || jsonx_strip_nul(v) < 0) {
		json_decref(v);
		return;
	}
	if (sub && json_is_object(data) && strncmp(sub, io->event_type, tl) == 0 && sub[tl] == '_' && sub[tl + 1])
		io->out->event(io->out->ctx, sub, data);
	else
		io->out->event(io->out->ctx, io->event_type, v);
	json_decref(v);
}

/* Bytes of the event channel: every whole line is an event. */
static void take_events(struct tool_io *io, const char *p, size_t n)
{
	struct err e;
	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) : n;
		if (!io->ev_skip && buf_append(&io->ev, p, k, &e) < 0) {
			io->ev_skip = true; /* over TOOL_EVENT_MAX: dropped */
			buf_reset(&io->ev);
		}
		if (nl) {
			if (!io->ev_skip && io->ev.len)
				event_line(io, io->ev.data, io->ev.len);
			buf_reset(&io->ev);
			io->ev_skip = false;
			k++;
		}
		p += k;
		n -= k;
	}
}

/* Removes the secret files written so far (the first n) and the folders made for them. */
static void files_remove(const char *workdir, const struct flow_tool *t, size_t n, char **made, size_t n_made)
{
	struct err e;
	for (size_t i = 0; i < n; i++) {
		char *p = path_join_safe(workdir, t->files[i].path, &e);
		if (p)
			unlink(p);
		free(p);
	}
	while (n_made--) {
		rmdir(made[n_made]);
		free(made[n_made]);
	}
}

/* The parent folder of file path (relative), made 0700 when missing; recorded in made. */
static int parent_make(const char *workdir, const char *path, char **made, size_t *n_made, size_t cap, struct err *e)
{
	const char *slash = strrchr(path, '/');
	char *dir, *full;
	struct stat st;

	if (!slash)
		return 0;
	if (!(dir = strndup(path, (size_t)(slash - path))))
		return err_set(e, ERR_INTERNAL, "out of memory");
	full = path_join_safe(workdir, dir, e);
	free(dir);
	if (!full)
		return -1;
	if (stat(full, &st) == 0 || *n_made == cap) {
		free(full);
		return 0;
	}
	if (mkdir(full, 0700) != 0) {
		int saved = errno;
		free(full);
		return err_set(e, ERR_INTERNAL, "cannot create the folder for '%s': %s", path, strerror(saved));
	}
	made[(*n_made)++] = full;
	return 0;
}

static int files_write(const char *workdir, const struct flow_tool *t, char **made, size_t *n_made, size_t cap,
		       struct err *e)
{
	for (size_t i = 0; i < t->n_files; i++) {
		const struct flow_tool_file *f = &t->files[i];
		int fd;
		if (!path_is_safe_relative(f->path)) {
			files_remove(workdir, t, i, made, *n_made);
			return err_set(e, ERR_INVALID, "%s: file '%s' is not inside the working directory", t->name,
				       f->path);
		}
		if (parent_make(workdir, f->path, made, n_made, cap, e) < 0 ||
		    (fd = path_open_beneath(workdir, f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600, e)) < 0) {
			files_remove(workdir, t, i, made, *n_made);
			return -1;
		}
		if (fchmod(fd, 0600) != 0 || path_write_all(fd, f->data, f->len) != 0) {
			int saved = errno;
			close(fd);
			files_remove(workdir, t, i + 1, made, *n_made);
			return err_set(e, err_code_of_write(saved), "%s: cannot write '%s': %s", t->name, f->path,
				       strerror(saved));
		}
		close(fd);
	}
	return 0;
}

/* The environment: the base entries (PATH unless the task gives its own), then the task's. */
static int env_build(const char *workdir, const struct flow_tool *t, char **env, char *home, char *tmp, size_t cap,
		     struct err *e)
{
	size_t n = 0;
	bool own_path = false;
	for (size_t i = 0; t->env && t->env[i]; i++)
		own_path |= strncmp(t->env[i], "PATH=", 5) == 0;
	str_fmt_cut(home, cap, "HOME=%s", workdir);
	str_fmt_cut(tmp, cap, "TMPDIR=%s", workdir);
	if (!own_path)
		env[n++] = "PATH=/usr/bin:/bin";
	env[n++] = "LANG=C.UTF-8";
	env[n++] = home;
	env[n++] = tmp;
	for (size_t i = 0; t->env && t->env[i]; i++) {
		if (n == TOOL_ENV_MAX)
			return err_set(e, ERR_INVALID, "%s: too many environment variables (at most %d)", t->name,
				       TOOL_ENV_MAX - 4);
		env[n++] = t->env[i];
	}
	env[n] = NULL;
	return 0;
}

struct tool_wait {
	pid_t pid;
	int out, err, ev, pidfd, sfd; /* err: stderr's own pipe, ev: the event channel; -1 when none */
	int reply;		      /* the write end of the answers to requests, -1: none */
	long long deadline, kill_at; /* 0: none */
	long long tick_at;	     /* the next call of the tool's tick, 0: none */
	int stop_sig;		     /* a stop signal the caller received */
	bool exited;
	int status;
};

/* Reads what is there on *fd; at its end the pipe is closed (*fd = -1). */
static void drain_fd(int *fd, struct tool_io *io, void (*take_fn)(struct tool_io *, const char *, size_t))
{
	char chunk[8192];
	ssize_t n;
	if (*fd < 0)
		return;
	while ((n = read(*fd, chunk, sizeof chunk)) > 0)
		take_fn(io, chunk, (size_t)n);
	if (n == 0) {
		close(*fd);
		*fd = -1;
	}
}

static void drain(struct tool_wait *w, struct tool_io *io)
{
	drain_fd(&w->out, io, take);
	if (io->err)
		drain_fd(&w->err, io->err, take);
	drain_fd(&w->ev, io, take_events);
}

/* Whether the program has ended; then the rest of its group is killed while its pid (a
 * zombie until reaped) still names the group, and it is reaped. */
static bool ended(struct tool_wait *w)
{
	siginfo_t si;
	memset(&si, 0, sizeof si);
	if (waitid(P_PID, (id_t)w->pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != w->pid)
		return false;
	kill(-w->pid, SIGKILL);
	while (waitpid(w->pid, &w->status, 0) < 0 && errno == EINTR)
		;
	return true;
}

/* One round of waiting: output, the program's end, a signal, the timeout. */
static void wait_round(struct tool_wait *w, struct tool_io *io, struct flow_tool_result *r)
{
	struct pollfd p[5] = {{w->out, POLLIN, 0}, {w->pidfd, POLLIN, 0}, {w->sfd, POLLIN, 0}, {w->ev, POLLIN, 0},
			      {w->err, POLLIN, 0}};
	long long next = w->kill_at ? w->kill_at : w->deadline, wait = -1;
	if (w->tick_at && (!next || w->tick_at < next))
		next = w->tick_at;
	if (next)
		wait = next - now_ms() > 0 ? next - now_ms() : 0;
	if (w->pidfd < 0 && (wait < 0 || wait > 100))
		wait = 100; /* no pidfd (an old kernel): its end is looked for this often */
	if (poll(p, 5, (int)(wait > 60000 ? 60000 : wait)) < 0 && errno != EINTR)
		return;
	if (p[0].revents || p[3].revents || p[4].revents)
		drain(w, io);
	if (p[2].revents) {
		struct signalfd_siginfo si;
		if (read(w->sfd, &si, sizeof si) == (ssize_t)sizeof si) {
			w->stop_sig = (int)si.ssi_signo;
			kill(-w->pid, SIGKILL);
		}
	}
	if ((p[1].revents || w->pidfd < 0) && ended(w))
		w->exited = true;
	if (!w->exited && w->tick_at && now_ms() >= w->tick_at) {
		io->t->tick(io->t->tick_ctx);
		w->tick_at = now_ms() + (io->t->tick_ms > 100 ? io->t->tick_ms : 100);
	}
	if (w->kill_at && now_ms() >= w->kill_at) {
		kill(-w->pid, SIGKILL);
		w->kill_at = 0;
	} else if (w->deadline && !w->kill_at && !r->timed_out && now_ms() >= w->deadline) {
		r->timed_out = true;
		kill(-w->pid, SIGTERM);
		w->kill_at = now_ms() + TOOL_KILL_GRACE_MS;
	}
}

/* The output pipe (both ends into out[]) and, with t->event_type, the event pipe. */
static int pipes(const struct flow_tool *t, int out[2], int ev[2], struct err *e)
{
	if (pipe2(out, O_CLOEXEC) != 0)
		return err_set(e, ERR_INTERNAL, "%s: pipe: %s", t->name, strerror(errno));
	if (t->event_type && pipe2(ev, O_CLOEXEC) != 0) {
		int saved = errno;
		close(out[0]);
		close(out[1]);
		return err_set(e, ERR_INTERNAL, "%s: pipe: %s", t->name, strerror(saved));
	}
	return 0;
}

/* The program's stdin: t->stdin_path (a secret file, inside the working directory) or -1
 * (/dev/null). */
static int stdin_open(const char *workdir, const struct flow_tool *t, int *fd, struct err *e)
{
	char *p;

	*fd = -1;
	if (!t->stdin_path)
		return 0;
	if (!(p = path_join_safe(workdir, t->stdin_path, e)))
		return -1;
	*fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(p);
	if (*fd < 0)
		return err_set(e, ERR_INTERNAL, "%s: cannot open its input: %s", t->name, strerror(errno));
	return 0;
}

static int start(const char *workdir, const struct flow_tool *t, char **env, struct tool_wait *w, struct err *e)
{
	int out[2], ev[2] = {-1, -1}, er[2] = {-1, -1}, rep[2] = {-1, -1}, in = -1, rc;

	if (stdin_open(workdir, t, &in, e) < 0)
		return -1;
	if (t->request && t->event_type && pipe2(rep, O_CLOEXEC) != 0) {
		rc = errno;
		if (in >= 0)
			close(in);
		return err_set(e, ERR_INTERNAL, "%s: pipe: %s", t->name, strerror(rc));
	}
	w->reply = rep[1];
	if (pipes(t, out, ev, e) < 0) {
		if (in >= 0)
			close(in);
		if (rep[0] >= 0)
			close(rep[0]);
		return -1;
	}
	if (t->err_line && pipe2(er, O_CLOEXEC) != 0) {
		rc = errno;
		close(out[0]);
		close(out[1]);
		if (in >= 0)
			close(in);
		if (rep[0] >= 0)
			close(rep[0]);
		if (ev[0] >= 0) {
			close(ev[0]);
			close(ev[1]);
		}
		return err_set(e, ERR_INTERNAL, "%s: pipe: %s", t->name, strerror(rc));
	}
	{
		const struct spawn_fd fds[] = {
		    {in, 0}, {out[1], 1}, {er[1] >= 0 ? er[1] : out[1], 2}, {ev[1], TOOL_EVENT_FD}, {rep[0], TOOL_REPLY_FD}};
		const struct spawn_opts o = {.exe = t->exe,
					     .argv = t->argv,
					     .env = env,
					     .fds = fds,
					     .n_fds = rep[0] >= 0 ? 5 : t->event_type ? 4 : 3,
					     .cwd = workdir,
					     .own_group = true};
		rc = spawn_start(&o, &w->pid);
		if (rc == 0)
			lower_priority(w->pid);
	}
	close(out[1]);
	if (in >= 0)
		close(in);
	if (rep[0] >= 0)
		close(rep[0]);
	if (ev[1] >= 0)
		close(ev[1]);
	if (er[1] >= 0)
		close(er[1]);
	if (rc != 0) {
		close(out[0]);
		if (ev[0] >= 0)
			close(ev[0]);
		if (er[0] >= 0)
			close(er[0]);
		return err_set(e, rc == ENOENT ? ERR_NOT_FOUND : ERR_INTERNAL, "%s: cannot start %s: %s", t->name,
			       t->exe, strerror(rc));
	}
	w->out = out[0];
	w->ev = ev[0];
	w->err = er[0];
	fcntl(w->out, F_SETFL, O_NONBLOCK);
	if (w->err >= 0)
		fcntl(w->err, F_SETFL, O_NONBLOCK);
	if (w->ev >= 0)
		fcntl(w->ev, F_SETFL, O_NONBLOCK);
	return 0;
}

static int run_child(const char *workdir, const struct flow_tool *t, char **env, struct tool_wait *w,
		     struct tool_io *io, struct flow_tool_result *r, struct err *e)
{
	if (start(workdir, t, env, w, e) < 0) {
		if (w->reply >= 0)
			close(w->reply);
		return -1;
	}
	io->reply = w->reply;
	if (io->reply >= 0)
		fcntl(io->reply, F_SETFL, O_NONBLOCK);
	w->pidfd = (int)syscall(SYS_pidfd_open, w->pid, 0);
	if (t->timeout_ms > 0)
		w->deadline = now_ms() + t->timeout_ms;
	if (t->tick)
		w->tick_at = now_ms() + (t->tick_ms > 100 ? t->tick_ms : 100);
	while (!w->exited)
		wait_round(w, io, r);
	/* what it printed before its group was killed is logged */
	drain(w, io);
	line_split_flush(&io->acc, emit, io);
	if (io->err)
		line_split_flush(&io->err->acc, emit, io->err);
	if (w->out >= 0)
		close(w->out);
	if (w->err >= 0)
		close(w->err);
	if (w->ev >= 0)
		close(w->ev);
	if (io->reply >= 0)
		close(io->reply);
	if (w->pidfd >= 0)
		close(w->pidfd);
	if (WIFSIGNALED(w->status)) {
		r->signal = WTERMSIG(w->status);
		r->exit_code = 128 + r->signal;
	} else {
		r->exit_code = WEXITSTATUS(w->status);
	}
	return 0;
}

int tool_run(const char *workdir, const struct flow_tool *t, const struct tool_sink *out, struct flow_tool_result *r,
	     struct err *e)
{
	char home[4200], tmp[4200], *env[TOOL_ENV_MAX + 1], *made[16];
	struct tool_wait w = {.out = -1, .err = -1, .ev = -1, .pidfd = -1, .sfd = -1, .reply = -1};
	struct tool_io *io = NULL;
	size_t n_made = 0;
	sigset_t stop, old;
	int rc;

	memset(r, 0, sizeof *r);
	if (access(t->exe, X_OK) != 0)
		return err_set(e, ERR_NOT_FOUND, "%s: %s is not installed on this node", t->name, t->exe);
	if (env_build(workdir, t, env, home, tmp, sizeof home, e) < 0)
		return -1;
	if (!(io = calloc(1, sizeof *io)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (t->err_line && !(io->err = calloc(1, sizeof *io->err))) {
		free(io);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	if (io->err)
		*io->err = (struct tool_io){.out = out, .t = t, .is_err = true};
	io->out = out;
	io->t = t;
	io->event_type = t->event_type;
	io->reply = -1;
	buf_init(&io->ev, TOOL_EVENT_MAX);
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	/* blocked before anything is written: a stop now still removes the files */
	sigprocmask(SIG_BLOCK, &stop, &old);
	w.sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	rc = files_write(workdir, t, made, &n_made, sizeof made / sizeof made[0], e);
	if (rc == 0) {
		rc = run_child(workdir, t, env, &w, io, r, e);
		files_remove(workdir, t, t->n_files, made, n_made);
	}
	if (w.sfd >= 0)
		close(w.sfd);
	buf_cleanup(&io->ev);
	free(io->err);
	free(io);
	if (w.stop_sig) {
		/* the caller was told to stop while the program ran: it does now */
		signal(w.stop_sig, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		raise(w.stop_sig);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
