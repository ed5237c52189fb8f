#ifndef ACCORD_QUEUE_TASK_JOBS_H
#define ACCORD_QUEUE_TASK_JOBS_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "queue/tasks/docker_job.h"

/* The task calls of one process that wait for a program the server runs for them (the
 * docker task's containers: docker_job.h), in its supervisor's poll loop: their
 * descriptors are polled with the runner's, their output goes to the process log, and
 * each call is answered ({"type":"task_result", id, out | error}) when its program ends.
 * Used by the supervisor's thread only. */

#define TASK_JOBS_MAX 4

struct task_jobs {
	struct {
		json_t *id; /* the call's id (owned) */
		struct docker_job *job;
	} v[TASK_JOBS_MAX];
	size_t n;
};

typedef void (*task_jobs_reply_fn)(void *ctx, json_t *answer); /* answer taken over */

/* Adds the job (taken over, freed on failure) of call id (BORROWED, copied). */
int task_jobs_add(struct task_jobs *t, json_t *id, struct docker_job *job, struct err *e) WUR;
/* Fills 2 pollfds per job into fds (room for 2 * TASK_JOBS_MAX) and returns their count. */
size_t task_jobs_fds(const struct task_jobs *t, struct pollfd *fds);
/* Steps every job with fds as polled (NULL: timers only), answers and drops the ended ones. */
void task_jobs_step(struct task_jobs *t, const struct pollfd *fds, docker_line_fn line, task_jobs_reply_fn reply,
		    void *ctx);
/* The earliest time a job must be stepped without input (ms), 0: none. */
int64_t task_jobs_next_at(const struct task_jobs *t);
/* The process is stopping: every job is stopped (docker_job_kill). */
void task_jobs_kill(struct task_jobs *t);
/* The runner is gone: stops what still runs, steps the jobs until they end (their output
 * still logged) for at most wait_ms, then frees them all; nothing is answered. */
void task_jobs_end(struct task_jobs *t, unsigned wait_ms, docker_line_fn line, void *ctx);

#endif
