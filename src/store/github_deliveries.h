#ifndef ACCORD_STORE_GITHUB_DELIVERIES_H
#define ACCORD_STORE_GITHUB_DELIVERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

/* The GitHub webhook deliveries seen (schema/025), kept GITHUB_DELIVERY_KEEP_MS. */
#define GITHUB_DELIVERY_KEEP_MS (24LL * 3600 * 1000)

/* Records delivery id at now_ms: *first is false when it was seen already (within the
 * day), so its event must not start anything again.  Deliveries older than a day go. */
int store_github_delivery_seen(struct store_conn *c, const char *id, int64_t now_ms, bool *first,
			       struct err *e) WUR;

#endif
