#ifndef ACCORD_FLOW_TASKS_ANSIBLE_ROLES_H
#define ACCORD_FLOW_TASKS_ANSIBLE_ROLES_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* Internal to the ansible task (ansible.c): Concord's `roles`, a list of {src, name, path,
 * version} (and the git task's `auth` or `privateKey` for a repository that needs them).
 * Each is cloned with Debian's git (flow/tasks/git_cli.h: http(s), ssh and git URLs only,
 * credentials as 0600 files, masked) into roles_rel/<name> (relative to the working
 * directory; created), checked out at version when given.  Returns the roles path to put
 * first (NEW): <roles>/<name>[/<path>] of each role, then <roles> itself, colon-separated,
 * absolute; NULL with e set on bad input, a failed clone or checkout ("GIT finished with
 * exit code N: <git's reason>") or a path the repository does not have. */
char *ansible_roles_fetch(struct task_ctx *c, json_t *roles, const char *roles_rel, struct err *e);

#endif
