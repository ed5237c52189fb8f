#ifndef ACCORD_STORE_PROCESS_CHILDREN_H
#define ACCORD_STORE_PROCESS_CHILDREN_H

#include <jansson.h>

#include "base/err.h"
#include "store/store.h"

/* Parents waiting (suspended) for their children (queue/end/children.c): a wait is a
 * (parent, event) pair and the children it waits for. */

/* Records that parent waits with event for each id of children (array of strings,
 * BORROWED), in one transaction. */
int store_child_wait_add(struct store_conn *c, const char *parent, const char *event, json_t *children,
			 struct err *e) WUR;

/* The waits child takes part in: a NEW array of [parent, event]. */
int store_child_waits_of_child(struct store_conn *c, const char *child, json_t **out, struct err *e) WUR;
/* The events parent waits with: a NEW array of strings. */
int store_child_waits_of_parent(struct store_conn *c, const char *parent, json_t **out, struct err *e) WUR;

/* The children of a wait: a NEW array of {id, status}; *open = how many are not final. */
int store_child_wait_children(struct store_conn *c, const char *parent, const char *event, json_t **out, int *open,
			      struct err *e) WUR;

/* Forgets every wait of parent (it ended). */
int store_child_waits_drop_parent(struct store_conn *c, const char *parent, struct err *e) WUR;

/* Forgets a wait (once the parent is resumed). */
int store_child_wait_drop(struct store_conn *c, const char *parent, const char *event, struct err *e) WUR;

#endif
