#ifndef ACCORD_API_ROUTES_H
#define ACCORD_API_ROUTES_H

#include "api/api.h"
#include "http/router.h"

/* Every resource module exports one route table ending with a {0} entry; routes.c lists
 * them.  api_routes_build adds them all to a router. */
extern const struct api_route api_server_routes[];
extern const struct api_route api_apikey_routes[];
extern const struct api_route api_user_routes[];
extern const struct api_route api_role_routes[];
extern const struct api_route api_org_routes[];
extern const struct api_route api_team_routes[];
extern const struct api_route api_team_ldap_group_routes[];
extern const struct api_route api_project_routes[];
extern const struct api_route api_project_cfg_routes[];
extern const struct api_route api_project_kv_routes[];
extern const struct api_route api_lock_routes[];
extern const struct api_route api_repository_routes[];
extern const struct api_route api_repository_definition_routes[];
extern const struct api_route api_secret_routes[];
extern const struct api_route api_inventory_routes[];
extern const struct api_route api_jsonstore_routes[];
extern const struct api_route api_jsonstore_data_routes[];
extern const struct api_route api_process_routes[];
extern const struct api_route api_process_log_routes[];
extern const struct api_route api_process_attachment_routes[];
extern const struct api_route api_process_event_routes[];
extern const struct api_route api_process_ansible_routes[];
extern const struct api_route api_process_ansible_run_routes[];
extern const struct api_route api_process_resume_routes[];
extern const struct api_route api_process_form_routes[];
extern const struct api_route api_custom_form_routes[];
extern const struct api_route api_process_children_routes[];
extern const struct api_route api_process_checkpoint_routes[];
extern const struct api_route api_process_state_routes[];
extern const struct api_route api_process_wait_routes[];
extern const struct api_route api_process_ops_routes[];
extern const struct api_route api_trigger_routes[];
extern const struct api_route api_github_routes[];
extern const struct api_route api_policy_routes[];
extern const struct api_route api_policy_can_create_routes[];

extern const struct api_route api_metrics_routes[];
/* The console (api/web.c): /, /assets/<hash>/…, /favicon.ico. */
extern const struct api_route api_web_routes[];
extern const struct api_route api_console_routes[];
extern const struct api_route api_oidc_routes[];
extern const struct api_route api_console_session_routes[];
extern const struct api_route api_process_link_routes[];
extern const struct api_route api_audit_routes[];
extern const struct api_route api_openapi_routes[];

/* Adds every route, numbering them (http_route.id) in table order. */
int api_routes_build(struct router *r, struct err *e) WUR;
/* Metrics on (per route) or off, once the routes are built (base/metrics.h). */
int api_routes_metrics_init(bool enabled, struct err *e) WUR;

/* Calls fn for every route of every table, in table order; stops at and returns fn's
 * first non-zero value. */
int api_routes_each(int (*fn)(void *ctx, const struct api_route *r), void *ctx);

/* Writes the audit entry of route (route->doc->audit) for a call its handler answered
 * successfully: object and action, the path parameters, what the handler noted, the ids
 * of the answer, who and from where (api/audit.c).  A failure is logged, not answered. */
void api_audit_record(struct api_call *c, const struct api_route *route);

/* The audit entry of the call's route, built before the change for a handler that stores it
 * in the change's own transaction (a process start: instance_id, the id its answer will
 * carry).  *entry's details are NEW (json_decref them); the handler sets c->audited once
 * the change is stored, and the dispatcher then writes no second entry.  False when the
 * route has no entry of its own (or one that depends on the answer). */
struct audit_entry;
bool api_audit_prepare(struct api_call *c, const char *instance_id, struct audit_entry *entry);

/* The http_handler for the server: routing, authentication, the handler, errors.
 * Defers (HTTP_DEFER) to a worker thread every request that may take long: anything but
 * GET/HEAD, routes flagged API_SLOW, and Basic credentials not in the cache (Argon2id). */
int api_dispatch(void *app, struct http_request *req, struct http_response *resp);

#endif
