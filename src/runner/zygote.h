#ifndef ACCORD_RUNNER_ZYGOTE_H
#define ACCORD_RUNNER_ZYGOTE_H

#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

/* The runner zygote (`accord runner --zygote`, docs/operations.md "Runner zygote"): one
 * long-lived, unconfined process per server that forks a runner per process instead of
 * the server exec'ing `accord runner` each time, so a process does not pay for exec,
 * dynamic linking and the page faults of a fresh image.
 *
 * It is started by the server (queue/zygote.c) with fd 3 on a SOCK_SEQPACKET socket,
 * stdin on /dev/null and a clean environment.  Protocol on that socket, one datagram per
 * message, host byte order (both ends are the same binary):
 *   server → zygote: struct zygote_req with two descriptors (SCM_RIGHTS): the log pipe's
 *     write end (→ the runner's fd 1 and 2) and the runner's end of the IPC socket (→ fd 3);
 *   zygote → server: struct zygote_msg, ZYGOTE_STARTED (pid) or ZYGOTE_FAILED (errno)
 *     once per request, then ZYGOTE_EXITED (wait status) when it has reaped that runner.
 * The forked runner puts itself into its own process group (the zygote does too, so the
 * group exists when the server learns the pid), gets PR_SET_PDEATHSIG(SIGKILL), default
 * signal dispositions, an empty signal mask, the request's rlimits, the runner's clean
 * environment and the working directory, then runs exactly like `accord runner`
 * (runner_body).  The zygote dies with the server (PR_SET_PDEATHSIG, and end of file on
 * its socket); its runners die with it. */

#define ZYGOTE_MAX_RLIMITS 8

struct zygote_req {
	uint64_t tag; /* the server's id of this request, repeated in the answers */
	uint32_t n_rlimits;
	struct {
		int32_t resource; /* RLIMIT_* */
		uint64_t value;	  /* soft = hard limit */
	} rlimits[ZYGOTE_MAX_RLIMITS];
	char workdir[PATH_MAX]; /* absolute, NUL-terminated */
};

enum zygote_msg_kind { ZYGOTE_STARTED = 1, ZYGOTE_FAILED, ZYGOTE_EXITED };

struct zygote_msg {
	uint64_t tag;
	int32_t kind;	/* enum zygote_msg_kind */
	int32_t pid;	/* STARTED, EXITED */
	int32_t status; /* EXITED: waitpid status; FAILED: errno */
	int64_t maxrss_kb; /* EXITED: the runner's peak resident memory (getrusage's ru_maxrss) */
};

/* A request's datagram with room for its two descriptors: zygote_msg_init points
 * mh at rq and at the control buffer. */
struct zygote_wire {
	struct iovec iov;
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(2 * sizeof(int))];
	} cbuf;
	struct msghdr mh;
};

static inline void zygote_wire_init(struct zygote_wire *w, struct zygote_req *rq)
{
	memset(w, 0, sizeof *w);
	w->iov = (struct iovec){rq, sizeof *rq};
	w->mh.msg_iov = &w->iov;
	w->mh.msg_iovlen = 1;
	w->mh.msg_control = w->cbuf.buf;
	w->mh.msg_controllen = sizeof w->cbuf.buf;
}

/* `accord runner --zygote`: serves requests until its socket closes, then kills the
 * process groups of its remaining runners and exits. */
int zygote_main(void);

#endif
