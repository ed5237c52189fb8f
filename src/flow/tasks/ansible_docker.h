#ifndef ACCORD_FLOW_TASKS_ANSIBLE_DOCKER_H
#define ACCORD_FLOW_TASKS_ANSIBLE_DOCKER_H

#include "base/err.h"
#include "flow/tasks/task.h"
#include "flow/tool.h"

/* Internal to the ansible task (ansible.c): Concord's `dockerImage`.  The run t (argv with
 * "ansible-playbook" first, env, secret files; every path in them as the container sees
 * the working directory: at ANSIBLE_DOCKER_WORKSPACE) goes to the `docker` task's path (the
 * server starts the container, docs/flows.md "docker"; `accord run` its own engine): the
 * secret files are written 0600 before and removed after, whatever happens; the output is
 * logged as the docker task logs it.  0 with *code Ansible's exit status, or -1 with e set
 * when the image has no ansible-playbook or no container could run (no engine, the image
 * not found: the docker task's message). */
#define ANSIBLE_DOCKER_WORKSPACE "/workspace"

int ansible_docker_run(struct task_ctx *c, const char *image, const struct flow_tool *t, int *code,
		       struct err *e) WUR;

/* The events the callback left in dir/events.jsonl (dir: the run's folder on this host; a
 * container has no event channel), recorded now, in order: ANSIBLE, or the subtypes it
 * wrote as {eventType, data}.  The file is removed with the folder. */
void ansible_docker_events(struct task_ctx *c, const char *dir);

#endif
