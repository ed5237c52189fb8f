#ifndef ACCORD_FLOW_TASKS_ANSIBLE_POLICY_H
#define ACCORD_FLOW_TASKS_ANSIBLE_POLICY_H

#include <stdbool.h>

#include "base/err.h"

struct task_ctx;

/* Internal to the ansible task (ansible.c): the process's policy as Ansible enforces it
 * (docs/security.md "Policies", the ansible rule; processCfg.arguments.ansibleVerboseLimits).
 * When the policy handed to the runner (flow_host.policy) has either, writes dir/policy.json
 * (the policy's name, its ansible rules with their ${…} evaluated in the flow's context,
 * the verbose limits) and the plugin dir/callbacks/accord_policy.py, which checks every task
 * before it runs on a host — a denied one runs as a failing task with the rule's message,
 * a warned one logs a warning — and turns verbose output off past the limits; *on is then
 * true and Ansible must get the file's path as ACCORD_ANSIBLE_POLICY.  *on false: nothing
 * to enforce.  < 0 with e set when a rule's expression fails or a file cannot be written. */
int ansible_policy_write(struct task_ctx *c, const char *dir, bool *on, struct err *e) WUR;

#endif
