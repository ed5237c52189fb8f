/* The server's container runs for the docker task (docker_job.h). */
#include "queue/tasks/docker_job.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/datetime.h"
#include "base/limits.h"
#include "base/linesplit.h"
#include "base/log.h"
#include "base/path.h"
#include "base/spawn.h"
#include "base/str.h"
#include "flow/tasks/docker_spec.h"

#define REAP_RETRY_MS 20

enum phase { PH_PULL, PH_PULL_WAIT, PH_RUN, PH_DONE };

struct docker_job {
	struct docker_job_spec sp;
	enum phase ph;
	unsigned attempt;
	pid_t pid; /* the running command, 0: none */
	int fd[2]; /* its stdout, stderr pipes (-1: closed) */
	struct line_split acc[2];
	struct buf cap[2]; /* captured stdout, stderr */
	bool cap_over;
	int64_t at;	 /* next timed step (pull retry, reap), 0: none */
	int64_t kill_at; /* SIGKILL due, 0: none */
	bool stopped;
	pid_t kill_pid; /* `<engine> kill`, 0: none */
	int rc;		/* result once PH_DONE: 1 ok, -1 error */
	char msg[ERR_MSG_MAX];
	docker_line_fn line;
	void *ctx;
};

/* The script is in the flow's working directory: removed without following a link. */
static void remove_files(struct docker_job_spec *sp)
{
	struct err e;

	if (sp->env_path && unlink(sp->env_path) && errno != ENOENT)
		LOG_W("docker: cannot remove %s: %s", sp->env_path, strerror(errno));
	if (sp->workdir && sp->script) {
		char *slash = strrchr(sp->script, '/');
		int fd;
		if (slash)
			*slash = '\0';
		fd = slash ? path_open_beneath(sp->workdir, sp->script, O_RDONLY | O_DIRECTORY, 0, &e)
			   : open(sp->workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0) {
			unlinkat(fd, slash ? slash + 1 : sp->script, 0);
			close(fd);
		}
	}
	free(sp->env_path);
	free(sp->workdir);
	free(sp->script);
	sp->env_path = sp->workdir = sp->script = NULL;
}

struct docker_job *docker_job_new(struct docker_job_spec *sp)
{
	struct docker_job *j = calloc(1, sizeof *j);

	if (!j) {
		free(sp->exe);
		strv_free(&sp->pull);
		strv_free(&sp->run);
		strv_free(&sp->kill);
		strv_free(&sp->env);
		remove_files(sp);
		mask_cleanup(&sp->mask);
		free(sp->debug);
		memset(sp, 0, sizeof *sp);
		return NULL;
	}
	j->sp = *sp;
	memset(sp, 0, sizeof *sp);
	j->fd[0] = j->fd[1] = -1;
	for (int i = 0; i < 2; i++)
		buf_init(&j->cap[i], limits.out_bytes);
	j->ph = j->sp.pull.n ? PH_PULL : PH_RUN;
	j->at = dt_now_ms(); /* the first command starts at the first step */
	return j;
}

static void emit(struct docker_job *j, const char *text)
{
	char *masked;
	bool changed = false;

	if (!j->line)
		return;
	masked = mask_text(&j->sp.mask, text, &changed);
	if (changed && !masked) {
		j->line(j->ctx, "DOCKER: " MASK_TEXT);
		return;
	}
	{
		size_t n = strlen(changed ? masked : text) + 9;
		char *l = malloc(n);
		if (l) {
			str_fmt_cut(l, n, "DOCKER: %s", changed ? masked : text);
			j->line(j->ctx, l);
			free(l);
		}
	}
	free(masked);
}

static void on_line(struct docker_job *j, bool err, const char *text, size_t n)
{
	bool log = j->ph != PH_RUN || (err ? j->sp.log_err : j->sp.log_out);
	bool save = j->ph == PH_RUN && (err ? j->sp.save_err : j->sp.save_out);
	struct err e;

	if (log)
		emit(j, text);
	if (save && (buf_append(&j->cap[err], text, n, &e) || buf_append(&j->cap[err], "\n", 1, &e)))
		j->cap_over = true;
}

static void out_line(void *ctx, char *line, size_t len)
{
	on_line(ctx, false, line, len);
}

static void err_line(void *ctx, char *line, size_t len)
{
	on_line(ctx, true, line, len);
}

static void drain(struct docker_job *j, int i)
{
	char tmp[8192];
	ssize_t n;

	while (j->fd[i] >= 0) {
		n = read(j->fd[i], tmp, sizeof tmp);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(j->fd[i]);
			j->fd[i] = -1;
			line_split_flush(&j->acc[i], i ? err_line : out_line, j);
			return;
		}
		line_split_take(&j->acc[i], tmp, (size_t)n, i ? err_line : out_line, j);
	}
}

static void finish(struct docker_job *j, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void finish(struct docker_job *j, int rc, const char *fmt, ...)
{
	va_list ap;

	j->ph = PH_DONE;
	j->rc = rc;
	j->at = 0;
	if (fmt) {
		va_start(ap, fmt);
		str_vfmt_cut(j->msg, sizeof j->msg, fmt, ap);
		va_end(ap);
	}
}

/* Starts argv with stdout and stderr on pipes (stderr into stdout's with redirect). */
static int start(struct docker_job *j, char **argv, bool redirect)
{
	int out[2] = {-1, -1}, err[2] = {-1, -1}, rc;

	if (pipe2(out, O_CLOEXEC) || (!redirect && pipe2(err, O_CLOEXEC))) {
		rc = errno;
		goto fail;
	}
	{
		const struct spawn_fd fds[] = {{-1, 0}, {out[1], 1}, {redirect ? out[1] : err[1], 2}};
		rc = spawn_start(&(struct spawn_opts){.exe = j->sp.exe,
						      .argv = argv,
						      .env = j->sp.env.v,
						      .fds = fds,
						      .n_fds = 3,
						      .cwd = "/",
						      .own_group = true},
				 &j->pid);
	}
	if (rc)
		goto fail;
	close(out[1]);
	if (err[1] >= 0)
		close(err[1]);
	j->fd[0] = out[0];
	j->fd[1] = err[0];
	fcntl(j->fd[0], F_SETFL, O_NONBLOCK);
	if (j->fd[1] >= 0)
		fcntl(j->fd[1], F_SETFL, O_NONBLOCK);
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (out[i] >= 0)
			close(out[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	j->pid = 0;
	return rc ? rc : EIO;
}

static void start_phase(struct docker_job *j)
{
	bool run = j->ph == PH_RUN;
	int rc = start(j, run ? j->sp.run.v : j->sp.pull.v, run ? j->sp.redirect_err : true);

	j->at = 0;
	if (rc)
		finish(j, -1, "docker: cannot start the container engine %s: %s (docs/operations.md \"Containers\")",
		       j->sp.exe, strerror(rc));
	else if (!run)
		j->attempt++;
}

/* The command ended with status: the next phase, a pull retry, or the result. */
static void ended(struct docker_job *j, int status)
{
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

	j->pid = 0;
	j->kill_at = 0;
	if (j->stopped) {
		finish(j, -1, "docker: the container was stopped (the process is stopping)");
	} else if (j->ph == PH_PULL && code == 0) {
		j->ph = PH_RUN;
		j->at = dt_now_ms();
	} else if (j->ph == PH_PULL && j->attempt < j->sp.pull_tries) {
		j->ph = PH_PULL_WAIT;
		j->at = dt_now_ms() + j->sp.pull_interval_ms;
	} else if (j->ph == PH_PULL) {
		finish(j, -1, "docker: pulling the image failed with exit code %d (%u attempts)", code, j->attempt);
	} else if (j->cap_over) {
		finish(j, -1, "docker: the saved output is larger than %zu bytes (limit-out-bytes)", limits.out_bytes);
	} else if (code != 0) {
		finish(j, -1, "Docker process finished with exit code %d", code);
	} else {
		finish(j, 1, NULL);
	}
}

static void reap(struct docker_job *j)
{
	int status;
	pid_t p;

	if (j->kill_pid > 0 && waitpid(j->kill_pid, &status, WNOHANG) == j->kill_pid)
		j->kill_pid = 0;
	if (!j->pid || j->fd[0] >= 0 || j->fd[1] >= 0)
		return;
	while ((p = waitpid(j->pid, &status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (p == 0) { /* its output closed, not yet gone */
		j->at = dt_now_ms() + REAP_RETRY_MS;
		return;
	}
	ended(j, p < 0 ? 0 : status);
}

void docker_job_fds(const struct docker_job *j, struct pollfd fds[2])
{
	for (int i = 0; i < 2; i++)
		fds[i] = (struct pollfd){j->fd[i], POLLIN, 0};
}

void docker_job_step(struct docker_job *j, const struct pollfd fds[2], docker_line_fn line, void *ctx)
{
	int64_t now = dt_now_ms();

	j->line = line;
	j->ctx = ctx;
	if (j->sp.debug) {
		emit(j, j->sp.debug);
		free(j->sp.debug);
		j->sp.debug = NULL;
	}
	for (int i = 0; i < 2; i++)
		if (j->fd[i] >= 0 && fds && fds[i].revents)
			drain(j, i);
	if (j->kill_at && now >= j->kill_at && j->pid > 0) {
		kill(-j->pid, SIGKILL);
		j->kill_at = 0;
	}
	reap(j);
	if (j->ph == PH_PULL_WAIT && now >= j->at)
		j->ph = PH_PULL;
	if (j->ph != PH_DONE && !j->pid && j->at && now >= j->at)
		start_phase(j);
	j->line = NULL;
}

int64_t docker_job_next_at(const struct docker_job *j)
{
	int64_t at = j->at;

	if (j->kill_at && (!at || j->kill_at < at))
		at = j->kill_at;
	if (j->kill_pid > 0 && (!at || at > dt_now_ms() + 200))
		at = dt_now_ms() + 200; /* reap `<engine> kill` */
	return at;
}

static void spawn_kill(struct docker_job *j)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	const struct spawn_fd fds[] = {{-1, 0}, {null, 1}, {null, 2}};

	if (null < 0)
		return;
	if (spawn_start(&(struct spawn_opts){.exe = j->sp.exe,
					     .argv = j->sp.kill.v,
					     .env = j->sp.env.v,
					     .fds = fds,
					     .n_fds = 3,
					     .cwd = "/",
					     .own_group = true},
			&j->kill_pid))
		j->kill_pid = 0;
	close(null);
}

void docker_job_kill(struct docker_job *j)
{
	if (j->stopped || j->ph == PH_DONE)
		return;
	j->stopped = true;
	if (!j->pid) { /* between two commands */
		finish(j, -1, "docker: the container was stopped (the process is stopping)");
		return;
	}
	kill(-j->pid, SIGTERM);
	j->kill_at = dt_now_ms() + j->sp.grace_ms;
	if (j->ph == PH_RUN && j->sp.kill.n)
		spawn_kill(j);
}

int docker_job_result(struct docker_job *j, json_t **out, struct err *e)
{
	struct docker_spec flags = {.save_out = j->sp.save_out, .save_err = j->sp.save_err};
	struct err ignored;

	*out = NULL;
	if (j->ph != PH_DONE)
		return 0;
	if (j->rc < 0)
		return err_set(e, ERR_INVALID, "%s", j->msg);
	if (buf_append(&j->cap[0], "", 1, &ignored) || buf_append(&j->cap[1], "", 1, &ignored) ||
	    !(*out = docker_result(&flags, j->cap[0].data, j->cap[1].data)))
		return err_set(e, ERR_INTERNAL, "docker: out of memory");
	return 1;
}

static void wait_gone(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(-pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void docker_job_free(struct docker_job *j)
{
	if (!j)
		return;
	if (j->pid > 0 && j->ph == PH_RUN && !j->stopped && j->sp.kill.n) {
		spawn_kill(j); /* the container too, not only its client */
		if (j->kill_pid > 0)
			while (waitpid(j->kill_pid, NULL, 0) < 0 && errno == EINTR)
				;
		j->kill_pid = 0;
	}
	wait_gone(j->pid);
	if (j->kill_pid > 0)
		while (waitpid(j->kill_pid, NULL, 0) < 0 && errno == EINTR)
			;
	for (int i = 0; i < 2; i++) {
		if (j->fd[i] >= 0)
			close(j->fd[i]);
		buf_cleanup(&j->cap[i]);
	}
	remove_files(&j->sp);
	free(j->sp.exe);
	strv_free(&j->sp.pull);
	strv_free(&j->sp.run);
	strv_free(&j->sp.kill);
	strv_free(&j->sp.env);
	mask_cleanup(&j->sp.mask);
	free(j->sp.debug);
	free(j);
}
