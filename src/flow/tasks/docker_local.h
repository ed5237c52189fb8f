#ifndef ACCORD_FLOW_TASKS_DOCKER_LOCAL_H
#define ACCORD_FLOW_TASKS_DOCKER_LOCAL_H

#include <jansson.h>

#include "base/err.h"
#include "flow/host.h"

/* The `docker` task under `accord run` (no server): the host runs the engine's CLI itself
 * through its tool layer (flow_host_ops.tool_run), as the user who runs `accord run`.
 * Same parameters, command lines and result as on the server (docker_spec.h). */

struct docker_local_cfg {
	const char *command;	 /* the engine's command, split at blanks (NULL: docker) */
	const char *network;	 /* --network (NULL: the engine's default) */
	const char *run_options; /* more `run` options (NULL: none) */
};

/* Runs the task's `in` (BORROWED): 0 with *out (NEW) its result, < 0 with e set. */
int docker_local_run(const struct flow_host *h, const struct docker_local_cfg *cfg, json_t *in, json_t **out,
		     struct err *e) WUR;

#endif
