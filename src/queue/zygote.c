/* The server's side of the runner zygote (queue/zygote.h). */
#include "queue/zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/sanitizer.h"
#include "base/spawn.h"

#define RETRY_MS 1000

struct zygote_child {
	struct zygote_child *next;
	uint64_t tag;
	pid_t pid;
	int err;       /* ZYGOTE_FAILED: errno */
	bool answered; /* STARTED or FAILED received */
	bool exited;
	bool detached; /* nobody waits: freed when its exit arrives (zygote_detach) */
	int status;
	int64_t maxrss_kb;
};

struct zygote {
	pthread_mutex_t lock;
	pthread_cond_t changed; /* an answer arrived, or the zygote died */
	char *exe;
	char *const *env;
	int fd;		  /* the control socket; -1 while there is no zygote */
	pid_t pid;	  /* 0 while there is no zygote */
	unsigned readers; /* reader threads not finished yet (detached) */
	bool stopping;
	int64_t retry_at;
	uint64_t next_tag;
	struct zygote_child *children;
};

static struct zygote_child *find(struct zygote *z, uint64_t tag)
{
	for (struct zygote_child *c = z->children; c; c = c->next)
		if (c->tag == tag)
			return c;
	return NULL;
}

static void unlink_child(struct zygote *z, struct zygote_child *c)
{
	for (struct zygote_child **p = &z->children; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			return;
		}
}

/* One per zygote process: routes its answers until its socket closes, then marks what it
 * left unanswered (its runners die with it by PR_SET_PDEATHSIG) and reaps it. */
static void *reader_main(void *arg)
{
	struct zygote *z = arg;
	struct zygote_msg m;
	int fd, status = 0;
	bool stopping;
	pid_t pid;

	pthread_mutex_lock(&z->lock);
	fd = z->fd;
	pid = z->pid;
	pthread_mutex_unlock(&z->lock);
	for (;;) {
		ssize_t n = recv(fd, &m, sizeof m, 0);
		struct zygote_child *c;
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof m)
			break;
		pthread_mutex_lock(&z->lock);
		if ((c = find(z, m.tag))) {
			if (m.kind == ZYGOTE_STARTED) {
				c->pid = m.pid;
				c->answered = true;
			} else if (m.kind == ZYGOTE_FAILED) {
				c->err = m.status ? m.status : EIO;
				c->answered = true;
			} else if (m.kind == ZYGOTE_EXITED) {
				c->status = m.status;
				c->maxrss_kb = m.maxrss_kb;
				c->exited = true;
#if defined(__SANITIZE_ADDRESS__)
				/* also after the runner's result, which the process keeps: the tests
				 * fail on this line (tests/api/conftest.py) */
				if (WIFEXITED(m.status) && WEXITSTATUS(m.status) == SANITIZER_EXIT)
					LOG_E("runner %d: a sanitizer stopped it (exit status %d): its report is at the end of "
					      "its process's log",
					      (int)m.pid, SANITIZER_EXIT);
#endif
			}
			if (c->exited && c->detached) {
				metrics_runner_rss((uint64_t)c->maxrss_kb * 1024);
				unlink_child(z, c);
				free(c);
			} else {
				pthread_cond_broadcast(&z->changed);
			}
		}
		pthread_mutex_unlock(&z->lock);
	}
	pthread_mutex_lock(&z->lock);
	for (struct zygote_child *c = z->children, *n; c; c = n) {
		n = c->next;
		if (c->detached) {
			unlink_child(z, c);
			free(c);
			continue;
		}
		if (!c->answered) {
			c->answered = true;
			c->err = EPIPE;
		}
		if (!c->exited) {
			c->exited = true;
			c->status = SIGKILL; /* a wait status: killed by SIGKILL */
		}
	}
	close(z->fd);
	z->fd = -1;
	z->pid = 0;
	z->retry_at = 0; /* the next request starts a new one */
	stopping = z->stopping;
	pthread_cond_broadcast(&z->changed);
	pthread_mutex_unlock(&z->lock);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!stopping && WIFSIGNALED(status))
		LOG_W("runner zygote %d was killed by signal %d: its runners died with it; the next process starts a "
		      "new one",
		      (int)pid, WTERMSIG(status));
	else if (!stopping)
		LOG_W("runner zygote %d exited with status %d: its runners died with it; the next process starts a new "
		      "one",
		      (int)pid, WEXITSTATUS(status));
	pthread_mutex_lock(&z->lock);
	z->readers--;
	pthread_cond_broadcast(&z->changed);
	pthread_mutex_unlock(&z->lock); /* z may be freed from here on */
	return NULL;
}

/* Under z->lock, with no zygote running. */
static int start_locked(struct zygote *z, struct err *e)
{
	int sv[2] = {-1, -1}, rc;
	char *argv[] = {"accord", "runner", "--zygote", NULL};
	pid_t pid;
	pthread_t reader;
	pthread_attr_t ta;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_set(e, ERR_INTERNAL, "socketpair: %s", strerror(errno));
	rc = spawn_start(&(struct spawn_opts){.exe = z->exe, .argv = argv, .env = z->env,
					      .fds = (const struct spawn_fd[]){{-1, 0}, {sv[1], 3}}, .n_fds = 2},
			 &pid);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		return err_set(e, ERR_INTERNAL, "cannot start %s runner --zygote: %s", z->exe, strerror(rc));
	}
	z->fd = sv[0];
	z->pid = pid;
	pthread_attr_init(&ta);
	pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	rc = pthread_create(&reader, &ta, reader_main, z);
	pthread_attr_destroy(&ta);
	if (rc != 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(z->fd);
		z->fd = -1;
		z->pid = 0;
		return err_set(e, ERR_INTERNAL, "cannot start the runner zygote's reader thread");
	}
	z->readers++;
	LOG_I("runner zygote %d started", (int)pid);
	return 0;
}

struct zygote *zygote_new(const char *exe, char *const *env)
{
	struct zygote *z = calloc(1, sizeof *z);

	if (!z || !(z->exe = strdup(exe))) {
		free(z);
		return NULL;
	}
	z->env = env;
	z->fd = -1;
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->changed, NULL);
	/* Not started here: the first zygote_spawn starts it, so a server that runs no
	 * process (an API-only node, a short-lived test server) never pays its exec. */
	return z;
}

void zygote_free(struct zygote *z)
{
	if (!z)
		return;
	pthread_mutex_lock(&z->lock);
	z->stopping = true;
	if (z->fd >= 0)
		shutdown(z->fd, SHUT_RDWR);
	while (z->readers)
		pthread_cond_wait(&z->changed, &z->lock);
	pthread_mutex_unlock(&z->lock);
	for (struct zygote_child *c = z->children, *n; c; c = n) {
		n = c->next;
		free(c);
	}
	pthread_mutex_destroy(&z->lock);
	pthread_cond_destroy(&z->changed);
	free(z->exe);
	free(z);
}

static int send_req(int fd, struct zygote_req *rq, int log_fd, int ipc_fd)
{
	struct zygote_wire w;
	struct cmsghdr *cm;
	int fds[2] = {log_fd, ipc_fd};

	zygote_wire_init(&w, rq);
	cm = CMSG_FIRSTHDR(&w.mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(cm), fds, sizeof fds);
	/* Never blocks under z->lock (the reader needs it to drain the zygote's answers, which
	 * the zygote may be blocked on): a full socket is "no zygote now" to the caller. */
	while (sendmsg(fd, &w.mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

int zygote_ask(struct zygote *z, const char *workdir, int log_fd, int ipc_fd, const struct zygote_req *rlimits,
	       struct zygote_child **child, struct err *e)
{
	struct zygote_req *rq;
	struct zygote_child *c;
	int rc = 1;

	if (strlen(workdir) >= sizeof rq->workdir)
		return err_set(e, ERR_INTERNAL, "working directory path too long: %s", workdir);
	if (!(rq = malloc(sizeof *rq)) || !(c = calloc(1, sizeof *c))) {
		free(rq);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	memset(rq, 0, sizeof *rq);
	rq->n_rlimits = rlimits->n_rlimits;
	memcpy(rq->rlimits, rlimits->rlimits, sizeof rq->rlimits);
	memcpy(rq->workdir, workdir, strlen(workdir) + 1); /* its length was checked above */
	pthread_mutex_lock(&z->lock);
	if (!z->pid && !z->stopping && dt_now_ms() >= z->retry_at) {
		struct err se;
		if (start_locked(z, &se)) {
			LOG_W("%s: runners are started with exec meanwhile", se.msg);
			z->retry_at = dt_now_ms() + RETRY_MS;
		}
	}
	if (!z->pid || z->stopping)
		goto out;
	c->tag = rq->tag = ++z->next_tag;
	if (send_req(z->fd, rq, log_fd, ipc_fd) < 0) {
		LOG_W("runner zygote %d: cannot send a request: %s", (int)z->pid, strerror(errno));
		goto out;
	}
	c->next = z->children;
	z->children = c;
	*child = c;
	c = NULL;
	rc = 0;
out:
	pthread_mutex_unlock(&z->lock);
	free(c);
	free(rq);
	return rc;
}

int zygote_answer(struct zygote *z, struct zygote_child *c, pid_t *pid, struct err *e)
{
	int rc = 0;

	pthread_mutex_lock(&z->lock);
	while (!c->answered)
		pthread_cond_wait(&z->changed, &z->lock);
	if (c->err == EPIPE) /* it died meanwhile: start this runner another way */
		rc = 1;
	else if (c->err)
		rc = err_set(e, ERR_INTERNAL, "the runner zygote cannot start a runner: %s", strerror(c->err));
	else
		*pid = c->pid;
	if (rc)
		unlink_child(z, c);
	pthread_mutex_unlock(&z->lock);
	if (rc)
		free(c);
	return rc;
}

int zygote_wait(struct zygote *z, struct zygote_child *c, int64_t *maxrss_kb)
{
	int status;

	pthread_mutex_lock(&z->lock);
	while (!c->exited)
		pthread_cond_wait(&z->changed, &z->lock);
	status = c->status;
	*maxrss_kb = c->maxrss_kb;
	unlink_child(z, c);
	pthread_mutex_unlock(&z->lock);
	free(c);
	return status;
}

void zygote_detach(struct zygote *z, struct zygote_child *c)
{
	pthread_mutex_lock(&z->lock);
	if (c->exited) {
		metrics_runner_rss((uint64_t)c->maxrss_kb * 1024);
		unlink_child(z, c);
		free(c);
	} else {
		c->detached = true;
	}
	pthread_mutex_unlock(&z->lock);
}

pid_t zygote_pid(struct zygote *z)
{
	pid_t pid;

	pthread_mutex_lock(&z->lock);
	pid = z->pid;
	pthread_mutex_unlock(&z->lock);
	return pid;
}
