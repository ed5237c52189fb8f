#ifndef ACCORD_AUTH_RBAC_START_H
#define ACCORD_AUTH_RBAC_START_H

#include <stdbool.h>

#include "auth/principal.h"
#include "base/err.h"
#include "store/orgs.h"
#include "store/projects.h"
#include "store/store.h"

/* May p start a process in org o and project pr (NULL: none)?  The one rule for the start
 * API and for child processes (the concord task): READER on the project, and a raw payload
 * (an archive, definition files, a payload folder) only as the project's rawPayloadMode
 * allows; without a project, membership of o (every user may start in the Default org).
 * The cron user starts only in the project of the process whose session it acts from.
 * 0, or ERR_FORBIDDEN / ERR_INVALID with the message the caller answers. */
int rbac_process_start(struct store_conn *c, const struct principal *p, const struct org *o, const struct project *pr,
		       bool raw_payload, struct err *e) WUR;

/* May p name the out variables of a process of project pr (NULL: always)?  Its
 * outVariablesMode decides, with rawPayloadMode's values: DISABLED (Concord's default) is
 * ERR_INVALID "The project is not accepting custom out variables: <id>". */
int rbac_process_out_vars(struct store_conn *c, const struct principal *p, const struct org *o,
			  const struct project *pr, struct err *e) WUR;

/* The access-rule view of a project. */
struct rbac_resource rbac_project_res(const struct project *p);

#endif
