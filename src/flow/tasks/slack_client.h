#ifndef ACCORD_FLOW_TASKS_SLACK_CLIENT_H
#define ACCORD_FLOW_TASKS_SLACK_CLIENT_H

#include <stdbool.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* One call of Slack's Web API for the `slack` and `slackChannel` tasks: POST
 * <apiUrl><method> with a JSON body and "Authorization: Bearer <token>", as Concord's
 * SlackClient does, over libcurl (flow/tasks/curl_api.h), run as a task_job (task.h).
 *
 * Settings (the step's input over the server's slackParams, flow/tasks/defaults.h):
 * apiToken (or authToken), apiUrl (default https://slack.com/api/; a flow may name its own
 * only together with its own token, so that the server's token never goes to a URL a flow
 * chose), proxyAddress + proxyPort (an HTTP proxy, always tunnelled), connectTimeout and
 * soTimeout (ms, default 30000), retryCount (default 3: a response other than 200 is tried
 * again after its Retry-After, else 10 s, at most 60 s).  The token is masked in the log and
 * events from then on and never appears in a message. */

struct slack_job;

/* Called on the VM's thread with the parsed response (BORROWED; a JSON object) of a call
 * that got a 200: sets *out (NEW) or fails with e set. */
typedef int (*slack_done_fn)(struct task_ctx *t, const char *what, json_t *resp, json_t **out, struct err *e);

/* A call of method with body (taken over) for a task step, described by in (the settings
 * above and ignoreErrors).  what names the call in messages (e.g. the channel).  On
 * success t->job is set and 0 returned; the VM runs it and then done.  A transfer failure
 * fails the step ("<task> task error: …") unless ignoreErrors: then the result is
 * {ok: false, error}; so does a non-200 answer after the retries, as Concord's does. */
int slack_call(struct task_ctx *t, json_t *in, const char *method, json_t *body, const char *what, slack_done_fn done,
	       struct err *e) WUR;

#endif
