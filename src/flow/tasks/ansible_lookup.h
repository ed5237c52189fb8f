#ifndef ACCORD_FLOW_TASKS_ANSIBLE_LOOKUP_H
#define ACCORD_FLOW_TASKS_ANSIBLE_LOOKUP_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* Internal to the ansible task (ansible.c): Concord's lookup plugins concord_data_secret,
 * concord_secret (its old name), concord_public_key_secret and concord_inventory.  They run inside ansible-playbook
 * and ask the runner over the tool layer's request channel (flow/tool.h: requests on fd 3,
 * answers on fd 4, one at a time under the flock of ACCORD_ANSIBLE_LOCK, which the events
 * callback takes too); the runner answers with the server tasks, as the process's
 * initiator (the crypto and inventory tasks' access rules). */

/* Writes the plugins into dir/lookups. */
int ansible_lookup_write(const char *dir, struct err *e) WUR;

/* Answers one request (ctx: the step's struct task_ctx): {"type": "secret", "org", "name",
 * "password"} → {"value": <the data secret as text>} (masked from then on), {"type":
 * "public_key", "org", "name"} → {"value": <the key pair's public key>}, {"type":
 * "inventory", "inventory", "query", "params"} → {"value": <the rows>}, else or on failure
 * {"error": "…"}.  NEW. */
json_t *ansible_lookup_answer(void *ctx, json_t *req);

#endif
