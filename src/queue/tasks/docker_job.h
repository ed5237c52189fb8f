#ifndef ACCORD_QUEUE_DOCKER_JOB_H
#define ACCORD_QUEUE_DOCKER_JOB_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/strv.h"
#include "flow/mask.h"

/* One `docker` task call the server runs for a process (server_task_docker.c builds it,
 * the process's supervisor drives it in its poll loop): `<engine> pull` (with retries)
 * when asked, then `<engine> run`, each a child of the server in a process group of its
 * own, stdin /dev/null.  Their output goes line by line, masked, to the supervisor's log
 * sink ("DOCKER: <line>", as Concord's), and into the result when asked.  A stop kills
 * the engine's command and the container (`<engine> kill <name>`).  Used by one thread. */

struct docker_job;

struct docker_job_spec {
	/* All taken over by docker_job_new. */
	char *exe;		     /* the engine's absolute path */
	struct strv pull, run, kill; /* argv of each (pull empty: no pull) */
	struct strv env;	     /* the engine's environment */
	char *env_path;		     /* the environment file (server's own folder), removed at the end */
	char *workdir, *script;	     /* the command's script, script beneath workdir, removed at the end */
	struct mask mask;	     /* values printed as ****** */
	char *debug;		     /* lines logged first (debug: true), NULL: none */
	/* Copied. */
	unsigned pull_tries; /* attempts of the pull */
	int64_t pull_interval_ms;
	unsigned grace_ms; /* SIGTERM → SIGKILL of a stopped command */
	bool log_out, log_err, save_out, save_err, redirect_err;
};

typedef void (*docker_line_fn)(void *ctx, const char *line);

/* Takes over everything of *sp (left zeroed), also on failure (NULL: out of memory). */
struct docker_job *docker_job_new(struct docker_job_spec *sp);

/* The job's descriptors to poll for input: fds[0] and fds[1] (fd -1: none). */
void docker_job_fds(const struct docker_job *j, struct pollfd fds[2]);
/* Reads what fds (as polled; NULL: nothing) says is there, starts the next command when
 * due, reaps ended ones; each whole line of output goes to line(ctx, text). */
void docker_job_step(struct docker_job *j, const struct pollfd fds[2], docker_line_fn line, void *ctx);
/* When docker_job_step must run again without input (ms, dt_now_ms's clock); 0: only on input. */
int64_t docker_job_next_at(const struct docker_job *j);
/* Stops the job: the running command's group gets SIGTERM (SIGKILL after grace_ms) and a
 * running container `<engine> kill`; the job then ends with an error. */
void docker_job_kill(struct docker_job *j);
/* 0 while it runs; 1 when it ended well, with *out (NEW) the task's result; < 0 when it
 * failed, with e set ("Docker process finished with exit code N", …). */
int docker_job_result(struct docker_job *j, json_t **out, struct err *e) WUR;
/* Kills what still runs (SIGKILL), waits for it, removes the files, frees.  NULL is fine. */
void docker_job_free(struct docker_job *j);

#endif
