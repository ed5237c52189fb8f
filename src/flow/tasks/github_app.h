#ifndef ACCORD_FLOW_TASKS_GITHUB_APP_H
#define ACCORD_FLOW_TASKS_GITHUB_APP_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* The token the `github` task calls GitHub with, from the step's `auth` (exactly one of):
 *   accessToken: "…" (or {token: "…"}; the deprecated top-level accessToken too);
 *   appInstallation: {clientId, privateKey (PEM, RSA)}: a GitHub App's installation token,
 *     as Concord's AppInstallationTokenProvider gets it — an RS256 JWT (iss clientId, 10
 *     minutes) signed with the key (OpenSSL's libcrypto, loaded on demand), then
 *     GET <apiUrl>/repos/<org>/<repo>/installation and POST its access_tokens_url (which
 *     must lie below apiUrl: the JWT goes nowhere else);
 *   appInstallationSecret: {org, name}: the same details as JSON in a data secret, exported
 *     as the process's initiator (crypto.exportAsString's rules).
 * *token is NEW (wipe it when done) and masked in the log and events from now on. */
int gh_auth_token(struct task_ctx *c, json_t *in, const char *api_url, const char *org, const char *repo,
		  char **token, struct err *e) WUR;

#endif
