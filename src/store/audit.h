#ifndef ACCORD_STORE_AUDIT_H
#define ACCORD_STORE_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

/* The audit log (schema/013_audit.sql): who changed what, when, from where.  Entries are
 * written by the API dispatcher after a successful change (api/audit.c) and read by
 * GET /api/v1/audit; --retention-audit expires them (store/retention.c). */

/* One entry to record.  Every pointer is borrowed for the call; NULL strings are stored
 * as NULL.  details must be a JSON object of ids and names — never a secret's value. */
struct audit_entry {
	const char *object;  /* "PROJECT", … */
	const char *action;  /* "CREATE", … */
	const char *user_id; /* who */
	const char *username;
	const char *source;	 /* "API_REQUEST" or "PROCESS" (a process's session or server task) */
	const char *api_key_id;	 /* the API key of the request, if it used one */
	const char *instance_id; /* the process whose session token the request carried */
	const char *address;	 /* the client's IP address */
	json_t *details;
};

/* Appends the entry to the audit chain (audit_chain.h) in the same transaction. */
int store_audit_insert(struct store_conn *c, const struct audit_entry *a, struct err *e) WUR;
/* The same chained with k (NULL: the keys of store_audit_chain_use). */
struct audit_keys;
int store_audit_insert_with(struct store_conn *c, const struct audit_entry *a, const struct audit_keys *k,
			    struct err *e) WUR;

/* A process started or stopped by the server itself — a cron trigger's start, an
 * onFailure/onCancel/onTimeout handler, a timeout — as object PROCESS, source "SYSTEM", on
 * behalf of the user the process runs as (NULLs: none); details {instanceId, reason} plus
 * parentInstanceId when given.  A failure is logged: the server's work goes on. */
void store_audit_system(struct store_conn *c, const char *action, const char *instance_id, const char *parent_id,
			const char *user_id, const char *username, const char *reason);

/* What GET /api/v1/audit asks for: NULL strings and 0 times match everything. */
struct audit_filter {
	const char *object, *action, *username;
	int64_t after, before; /* Unix ms, exclusive; 0: no bound */
	size_t limit, offset;
};

/* Entries matching f, newest first, as Concord's AuditLogEntry objects
 * ({"entryDate","action","object","user":{"id","username"},"details":{…,
 * "actionSource":{"type","instanceId","apiKeyId","address"}}}) in a new array *out. */
int store_audit_list(struct store_conn *c, const struct audit_filter *f, json_t **out, struct err *e) WUR;

/* Deletes at most batch of the oldest entries written before cutoff (Unix ms); *n gets
 * how many went (0: none older is left). */
int store_audit_expire(struct store_conn *c, int64_t cutoff, size_t batch, size_t *n, struct err *e) WUR;

#endif
