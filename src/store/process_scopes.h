#ifndef ACCORD_STORE_PROCESS_SCOPES_H
#define ACCORD_STORE_PROCESS_SCOPES_H

#include "store/store.h"

/* The scopes a process is held to (schema 043, docs/security.md "Scoped API keys"): those of
 * the API key that started it, as auth/scope.h scope_set_dump writes them.  A process without
 * a row is not narrowed. */

/* Keeps scopes for process id (inside the start's transaction, store_process_create). */
int store_process_scopes_put(struct store_conn *c, const char *id, const char *scopes, struct err *e) WUR;
/* Gives process id the scopes of parent_id, when it has any (a child or a handler). */
int store_process_scopes_inherit(struct store_conn *c, const char *id, const char *parent_id, struct err *e) WUR;
/* The scopes of process id: *out NEW, NULL when it has none. */
int store_process_scopes_get(struct store_conn *c, const char *id, char **out, struct err *e) WUR;

#endif
