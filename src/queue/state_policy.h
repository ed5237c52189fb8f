#ifndef ACCORD_QUEUE_STATE_POLICY_H
#define ACCORD_QUEUE_STATE_POLICY_H

#include <jansson.h>

#include "base/err.h"
#include "store/store.h"

/* The state rules of a process's policy (rules.state; docs/security.md "Policies",
 * Concord's StatePolicy, which checks the state each time a process's state is stored):
 * Accord's state is the working directory, checked at start (start_policy.c) and when the
 * process saves it at a suspend or a checkpoint. */

/* Receives a warn rule's match: "Potentially restricted state …" */
typedef void (*state_policy_warn)(void *ctx, const char *line);

/* The rules of state (NULL: none) of the policy named policy on the regular files below dir:
 * a deny rule's pattern matching a file (its path below dir, or its full path) is
 * ERR_FORBIDDEN, its maxFilesCount / maxSizeInBytes exceeded ERR_TOO_LARGE, with the rule's
 * message naming the policy; warn rules' matches go to warn. */
int state_policy_check(const json_t *state, const char *policy, const char *dir, state_policy_warn warn, void *ctx,
		       struct err *e) WUR;

/* state_policy_check with the rules process id keeps (store_process_policy_get) on the
 * working directory it is about to save; warnings become WARN lines of its log (at most
 * 50). */
int state_policy_saved(struct store_conn *c, const char *id, const char *workdir, struct err *e) WUR;

#endif
