/* Task calls answered when a program of the server ends (task_jobs.h). */
#include "queue/tasks/task_jobs.h"

#include <errno.h>
#include <string.h>

#include "base/datetime.h"

int task_jobs_add(struct task_jobs *t, json_t *id, struct docker_job *job, struct err *e)
{
	if (t->n == TASK_JOBS_MAX) {
		docker_job_free(job);
		return err_set(e, ERR_INVALID, "docker: more than %d containers at once in one process", TASK_JOBS_MAX);
	}
	t->v[t->n].id = json_incref(id ? id : json_null());
	t->v[t->n].job = job;
	t->n++;
	return 0;
}

size_t task_jobs_fds(const struct task_jobs *t, struct pollfd *fds)
{
	for (size_t i = 0; i < t->n; i++)
		docker_job_fds(t->v[i].job, fds + 2 * i);
	return 2 * t->n;
}

static void drop(struct task_jobs *t, size_t i)
{
	docker_job_free(t->v[i].job);
	json_decref(t->v[i].id);
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof t->v[0]);
	t->n--;
}

void task_jobs_step(struct task_jobs *t, const struct pollfd *fds, docker_line_fn line, task_jobs_reply_fn reply,
		    void *ctx)
{
	struct pollfd polled[2 * TASK_JOBS_MAX];
	size_t n = t->n;

	/* Answering drops entries: step them all against the descriptors as polled first. */
	if (fds)
		memcpy(polled, fds, 2 * n * sizeof fds[0]);
	for (size_t i = 0; i < n; i++)
		docker_job_step(t->v[i].job, fds ? polled + 2 * i : NULL, line, ctx);
	for (size_t i = 0; i < t->n;) {
		json_t *out = NULL, *ans;
		struct err e;
		int rc = docker_job_result(t->v[i].job, &out, &e);
		if (rc == 0) {
			i++;
			continue;
		}
		ans = json_pack("{s:s, s:O}", "type", "task_result", "id", t->v[i].id);
		if (ans && rc > 0)
			json_object_set_new(ans, "out", out);
		else if (ans)
			json_object_set_new(ans, "error", json_string(e.msg));
		else
			json_decref(out);
		if (ans)
			reply(ctx, ans);
		drop(t, i);
	}
}

int64_t task_jobs_next_at(const struct task_jobs *t)
{
	int64_t at = 0;

	for (size_t i = 0; i < t->n; i++) {
		int64_t a = docker_job_next_at(t->v[i].job);
		if (a && (!at || a < at))
			at = a;
	}
	return at;
}

void task_jobs_kill(struct task_jobs *t)
{
	for (size_t i = 0; i < t->n; i++)
		docker_job_kill(t->v[i].job);
}

void task_jobs_end(struct task_jobs *t, unsigned wait_ms, docker_line_fn line, void *ctx)
{
	int64_t until = dt_now_ms() + wait_ms;

	task_jobs_kill(t);
	while (t->n && dt_now_ms() < until) {
		struct pollfd fds[2 * TASK_JOBS_MAX];
		size_t n = task_jobs_fds(t, fds);
		json_t *out = NULL;
		struct err e;
		int64_t at = task_jobs_next_at(t), now = dt_now_ms();
		int ms = at ? (at > now ? (int)(at - now) : 0) : 100;

		if (poll(fds, n, ms > 100 ? 100 : ms) < 0 && errno != EINTR)
			break;
		for (size_t i = 0; i < t->n; i++)
			docker_job_step(t->v[i].job, fds + 2 * i, line, ctx);
		for (size_t i = 0; i < t->n;) {
			if (docker_job_result(t->v[i].job, &out, &e) != 0) {
				json_decref(out);
				out = NULL;
				drop(t, i);
			} else {
				i++;
			}
		}
	}
	while (t->n)
		drop(t, t->n - 1);
}
