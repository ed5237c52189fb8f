#ifndef ACCORD_FLOW_TASKS_ANSIBLE_KRB5_H
#define ACCORD_FLOW_TASKS_ANSIBLE_KRB5_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* Internal to the ansible task (ansible.c): Concord's `auth.krb5` {user, password}.  Gets
 * the user's ticket with Debian's kinit (krb5-user) through the tool layer into the
 * credentials cache ccache (an absolute file inside the working directory, "FILE:" left
 * out); the password reaches kinit as its stdin, from a 0600 file under run_rel (relative to
 * the working directory) removed when kinit ends, and is masked from the moment it is read.
 * 0, or -1 with e set: bad input, kinit missing, or "kinit failed for '<user>' (exit code
 * N): <kinit's last line>". */
int ansible_krb5_kinit(struct task_ctx *c, json_t *krb5, const char *run_rel, const char *ccache,
		       struct err *e) WUR;

#endif
