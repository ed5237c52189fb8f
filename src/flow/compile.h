#ifndef ACCORD_FLOW_COMPILE_H
#define ACCORD_FLOW_COMPILE_H

#include "flow/model.h"

/* Internal to the loader: the grammar of steps, forms and options.  Everything is
 * allocated in the model's arena.  Errors name the offending node's position. */

/* A flow body: a non-empty sequence of steps.  flow names the flow for error messages. */
int compile_steps(struct model *m, const struct ynode *seq, const char *flow, struct steps **out, struct err *e) WUR;

/* The fields of a form (`forms.<name>` or inline `fields:`). */
int compile_form_fields(struct model *m, const struct ynode *seq, const char *name, struct form_def **out,
			struct err *e) WUR;

/* Fails when map has a key not in allowed (NULL-terminated), in Concord's words. */
int compile_check_keys(const struct ynode *map, const char *const *allowed, struct err *e) WUR;

/* Type checks with Concord-like messages. */
int compile_want(const struct ynode *n, enum ynode_kind kind, const char *what, struct err *e) WUR;
int compile_want_string(const struct ynode *n, const char *what, struct err *e) WUR;

/* Keeps v alive as long as the model (takes the reference over); returns v. */
json_t *compile_own(struct model *m, json_t *v);

#endif
