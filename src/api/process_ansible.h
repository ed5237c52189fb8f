#ifndef ACCORD_API_PROCESS_ANSIBLE_H
#define ACCORD_API_PROCESS_ANSIBLE_H

#include <jansson.h>

#include "api/api.h"

/* Shared by Concord's Ansible views of a process (process_ansible.c: events and hosts;
 * process_ansible_runs.c: playbooks, plays, tasks and stats), all built from the process's
 * events when asked, so that they are live while a playbook runs. */

/* The process's events of type (ANSIBLE, ANSIBLE_PLAYBOOK_INFO, …), oldest first, after the
 * read-access check of the process {id}: NEW, or NULL with the reply's status in *rc. */
json_t *api_ansible_events(struct api_call *c, const char *type, int *rc);

/* Folds one ANSIBLE event's data into hosts ({host: {host, hostGroup, status, duration,
 * running}}, BORROWED): the worst outcome and the sum of the durations per host. */
void api_ansible_host_fold(json_t *hosts, json_t *data);

/* A folded host as listed: RUNNING while one of its tasks runs, the counter removed. */
void api_ansible_host_final(json_t *host);

#endif
