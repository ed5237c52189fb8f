#ifndef ACCORD_CLI_BOOTSTRAP_H
#define ACCORD_CLI_BOOTSTRAP_H

#include "base/err.h"
#include "store/store.h"

/* Start-up work on the data folder (DESIGN.md §1):
 * - on the first start, gives admin its first API key: ACCORD_ADMIN_API_KEY if set, else
 *   a generated key written once to <data>/initial-admin-api-key (mode 0600; its path is
 *   logged, never the key);
 * - on every start, ACCORD_ADMIN_API_KEY (if set) is made a valid key of admin, and
 *   ACCORD_ADMIN_PASSWORD (if set) becomes admin's password for Basic authentication. */
int bootstrap_run(struct store *s, const char *data_dir, struct err *e) WUR;

#endif
