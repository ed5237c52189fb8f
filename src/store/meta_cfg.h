#ifndef ACCORD_STORE_META_CFG_H
#define ACCORD_STORE_META_CFG_H

#include "store/store.h"

/* The meta and cfg JSON texts of one row, shared by organizations and projects (orgs.c,
 * projects.c): sql selects (meta, cfg) by one id; *meta and *cfg are new strings (NULL for
 * SQL NULL), both NULL on failure; ERR_NOT_FOUND "<what> not found: <id>" without a row. */
int store_meta_cfg_read(struct store_conn *c, const char *sql, const char *id, const char *what, char **meta,
			char **cfg, struct err *e) WUR;

#endif
