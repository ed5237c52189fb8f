#ifndef ACCORD_FLOW_TASKS_ANSIBLE_VENV_H
#define ACCORD_FLOW_TASKS_ANSIBLE_VENV_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* Internal to the ansible task (ansible.c): Concord's `virtualenv` {packages, indexUrl}.
 * Makes a Python virtual environment at ve (an absolute folder inside the working
 * directory) with Debian's python3 (`-m venv --system-site-packages --without-pip`: the
 * system's Ansible and pip stay visible) through the tool layer, then installs packages
 * (a list of pip requirements, each refused when pip could read it as an option) with
 * pip from indexUrl when given.  0, or -1 with e set: bad input, python3 missing, or
 * "virtualenv: pip could not install <packages> (exit code N): <pip's ERROR line>". */
int ansible_venv_make(struct task_ctx *c, json_t *venv, const char *ve, struct err *e) WUR;

#endif
