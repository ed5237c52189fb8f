#ifndef ACCORD_STORE_PROCESS_ATTACHMENTS_H
#define ACCORD_STORE_PROCESS_ATTACHMENTS_H

#include <stddef.h>

#include <jansson.h>

#include "store/store.h"

/* Files a process left in _attachments/, by name relative to it ("out.json",
 * "reports/a.txt"). */

int store_process_attachment_put(struct store_conn *c, const char *id, const char *name, const void *data, size_t len,
				 struct err *e) WUR;
/* Removes every attachment of a process (a restored process's new run replaces them). */
int store_process_attachment_clear(struct store_conn *c, const char *id, struct err *e) WUR;

/* New buffer (caller frees).  ERR_NOT_FOUND when there is no such attachment. */
int store_process_attachment_get(struct store_conn *c, const char *id, const char *name, void **data, size_t *len,
				 struct err *e) WUR;
/* New JSON array of names, sorted. */
int store_process_attachment_list(struct store_conn *c, const char *id, json_t **out, struct err *e) WUR;

#endif
