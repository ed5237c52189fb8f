#ifndef ACCORD_FLOW_TASKS_DEFAULTS_H
#define ACCORD_FLOW_TASKS_DEFAULTS_H

#include <jansson.h>

#include "flow/host.h"

/* Server-side defaults of tasks, as the host got them from the server's configuration
 * (`accord serve`/`accord run` flags and environment, cli/task_settings.h):
 *   {"smtpParams": {host, port, starttls, username?, password?},
 *    "slackParams": {apiUrl, apiToken?, proxyAddress?, proxyPort?},
 *    "githubParams": {apiUrl}}
 * A flow never sees them as variables. */

/* The defaults object named key (BORROWED from h), or NULL. */
json_t *task_defaults_get(const struct flow_host *h, const char *key);

/* The secret values in d (the SMTP password, the Slack token): a NEW array of strings the
 * host masks in every log line and event. */
json_t *task_defaults_secrets(const json_t *d);

#endif
