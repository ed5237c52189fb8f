#ifndef ACCORD_STORE_META_H
#define ACCORD_STORE_META_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"

/* Small key/value facts about the installation (table server_meta). */
/* Copies the value into out; ERR_NOT_FOUND when the key is absent. */
int store_meta_get(struct store_conn *c, const char *key, char *out, size_t cap, struct err *e) WUR;
int store_meta_set(struct store_conn *c, const char *key, const char *value, struct err *e) WUR;
/* Writes the value only when the key has none yet (two nodes writing a first value: one
 * wins); *added says whether this call wrote it. */
int store_meta_add(struct store_conn *c, const char *key, const char *value, bool *added, struct err *e) WUR;

#endif
