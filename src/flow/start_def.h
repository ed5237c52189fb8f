#ifndef ACCORD_FLOW_START_DEF_H
#define ACCORD_FLOW_START_DEF_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/model.h"

/* What the start of a process takes from its definition and its start configuration
 * (the request's configuration, or a child's _main.json): the entry point, the timeouts,
 * the handler flows, the exclusive group and the initial metadata.  One reading for every way a process
 * starts (POST /api/v1/process, the concord task's children). */
/* The key of the start configuration (_main.json) that holds the organization's cfg with
 * the project's merged over it (queue/start_staged.c writes it): the lowest layer of the
 * process configuration, below the definition's configuration and profiles and the
 * request (Concord's order).  Its `arguments` are the VM's defaults (vm_start_defaults);
 * entryPoint, processTimeout, suspendTimeout and exclusive are read here when neither the
 * request nor the definition gives them. */
#define START_DEF_ORG_PROJECT_CFG "orgProjectCfg"

/* cfg's value of key, else the org's and project's (BORROWED; NULL: neither gives one): for
 * the switches the definition has no say in (debug, dryRun). */
json_t *start_def_switch(json_t *cfg, const char *key);

struct start_def {
	const char *entry;	      /* BORROWED (cfg, m or "default") */
	int64_t timeout_s;	      /* processTimeout: 0 none */
	int64_t suspend_timeout_s;    /* suspendTimeout: 0 none */
	json_t *handlers;	      /* NEW array: onFailure/onCancel/onTimeout that exist and are not disabled */
	const char *exclusive_group;  /* BORROWED; NULL: none (always NULL without a project) */
	const char *exclusive_mode;   /* cancel, cancelOld or wait */
	bool dry_run;		      /* dryRun: true or "true" (any case) */
	json_t *meta;		      /* NEW: the org's and project's cfg meta, the definition's configuration.meta over it */
};

/* m: the loaded definition; cfg: the start configuration (entryPoint, processTimeout,
 * suspendTimeout, exclusive, disableOn*, dryRun — it wins over m's configuration); timeouts
 * given apart (e.g. multipart parts) in timeout_s/suspend_timeout_s when >= 0.
 * ERR_INVALID for an unknown entry point, one that is not among m's publicFlows (when it
 * declares any: Concord's "entryPoint 'x' is not a public flow"), a bad timeout, a bad
 * exclusive setting or a dryRun that is neither a boolean nor "true"/"false", naming it.
 * Release with start_def_cleanup. */
int start_def_read(const struct model *m, json_t *cfg, int64_t timeout_s, int64_t suspend_timeout_s, bool has_project,
		   struct start_def *out, struct err *e) WUR;
void start_def_cleanup(struct start_def *d);

#endif
