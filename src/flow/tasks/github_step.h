#ifndef ACCORD_FLOW_TASKS_GITHUB_STEP_H
#define ACCORD_FLOW_TASKS_GITHUB_STEP_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/host.h"
#include "flow/tasks/github_client.h"

/* One step of the `github` task (github.c) and the helpers its actions share; the actions
 * on pull requests and issues live in github_pulls.c, the others in github.c.  An action
 * is int (*)(struct gh_step *, json_t **out, struct err *): *out NEW on success.  It runs
 * as the step's task_job (task.h): it touches only the step's own data — no VM, no host. */
struct gh_step {
	struct gh g;
	json_t *in;	 /* the step's input: the action's own copy */
	json_t *logs;	 /* [[level, text], …] the action logged, for the VM's thread to log */
	char repo[1100]; /* "/repos/<org>/<repo>", escaped */
	const char *org, *name;
	bool api_failed; /* a call failed: the action's prefix goes on the message */
};

int ghs_oom(struct err *e);
/* An action runs off the VM's thread (task.h, struct task_job): it logs through this, and
 * the lines reach the process log when the step finishes. */
void ghs_log(struct gh_step *s, enum flow_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A string parameter (BORROWED), NULL when absent or not a string. */
const char *ghs_opt(struct gh_step *s, const char *key);
/* A mandatory string parameter, or "Mandatory parameter '<key>' is required". */
int ghs_need(struct gh_step *s, const char *key, const char **out, struct err *e) WUR;
/* A mandatory number (an integer or a string of digits). */
int ghs_need_int(struct gh_step *s, const char *key, long long *out, struct err *e) WUR;
/* The path /repos/<org>/<repo> followed by fmt, written into buf; returns buf. */
const char *ghs_at(struct gh_step *s, char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* *out = r with ok: true (r taken over); 0, or out of memory when r is NULL. */
int ghs_done(json_t **out, json_t *r, struct err *e) WUR;
/* gh_call with body taken over (NULL: none); a failure marks s->api_failed. */
int ghs_call(struct gh_step *s, const char *method, const char *path, json_t *body, json_t **resp,
	     struct err *e) WUR;
/* gh_list; a failure marks s->api_failed. */
int ghs_list(struct gh_step *s, const char *path, json_t **out, struct err *e) WUR;
/* ghs_call whose answer is not needed. */
int ghs_fire(struct gh_step *s, const char *method, const char *path, json_t *body, struct err *e) WUR;

/* char *var = value escaped for a path segment, or return out of memory. */
#define GHS_ESC(var, value)                                                                                           \
	char *var = gh_escape(value);                                                                                  \
	if (!var)                                                                                                      \
	return ghs_oom(e)

int ghs_create_pr(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_comment_pr(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_pr_commits(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_merge_pr(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_close_pr(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_create_issue(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_get_pr(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_pr_list(struct gh_step *s, json_t **out, struct err *e) WUR;
int ghs_pr_files(struct gh_step *s, json_t **out, struct err *e) WUR;

#endif
