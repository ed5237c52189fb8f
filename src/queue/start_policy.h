#ifndef ACCORD_QUEUE_START_POLICY_H
#define ACCORD_QUEUE_START_POLICY_H

#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "store/policies.h"
#include "store/store.h"

/* The effective policy of a new process, applied by start_staged (docs/security.md
 * "Policies"): what is checked before the process exists is refused with the rule's message
 * naming the policy (ERR_INVALID, or ERR_TOO_LARGE for sizes) and nothing is stored. */

struct start_policy {
	json_t *rules; /* the effective rules (NULL: no policy applies) */
	char name[POLICY_NAME_MAX + 1];
	json_t *warnings; /* the warn lists' matches at start (strings), NULL: none */
	size_t warnings_cut; /* matches past START_POLICY_WARNINGS_MAX, not kept */
};

/* At most this many warnings of a start are written to the process's log. */
#define START_POLICY_WARNINGS_MAX 50

struct staged_start;

/* Loads the effective policy of the process's org, project and initiator. */
int start_policy_load(struct store_conn *c, const struct staged_start *s, struct start_policy *p, struct err *e) WUR;

/* Before the definition is read: processCfg merged over cfg (the request's configuration,
 * which wins over the definition's), defaultProcessCfg below the org's and project's cfg;
 * then the rules on the staged folder (workspace, file: a warn list's matches are kept in
 * p->warnings), the runtime and the fork depth.
 * *timeout_override is set when processCfg names processTimeout (the request's then gives
 * way).  The caller saves cfg. */
int start_policy_before(struct store_conn *c, struct start_policy *p, const struct staged_start *s, json_t *cfg,
			bool *timeout_override, struct err *e) WUR;

/* queue.processTimeout: the process's timeout in seconds (0: none) against the max. */
int start_policy_timeout(const struct start_policy *p, int64_t timeout_s, struct err *e) WUR;

/* The container rule (rules.container, Concord's ContainerPolicy) on the process's
 * container options, the request's configuration.container {cpu, ram} (cfg; a definition
 * cannot name them: concord-v2 has no such configuration key): more cpu than maxCpu, or
 * more ram than maxRam, is refused. */
int start_policy_container(const struct start_policy *p, const json_t *cfg, struct err *e) WUR;

/* The number of processes per status (queue.process, processPerOrg, processPerProject),
 * inside the transaction that stores the process: starts with such rules take turns on all
 * nodes (store_policy_count_turn), so two cannot both take the last place. */
int start_policy_count(struct store_conn *c, const struct start_policy *p, const struct staged_start *s,
		       struct err *e) WUR;

/* Writes the warnings of the start (file rules' warn lists) to the new process's log as
 * Concord does: "[WARN ] Potentially restricted file '<path>' (file policy: <msg>)". */
void start_policy_warn_log(struct store_conn *c, const struct start_policy *p, const char *instance_id);

/* Writes what the process keeps (store_process_policy_put); nothing when no policy. */
int start_policy_record(struct store_conn *c, const struct start_policy *p, const char *instance_id, struct err *e) WUR;

void start_policy_cleanup(struct start_policy *p);

#endif
