#include "api/routes.h"

#include "base/metrics.h"

static const struct api_route *const tables[] = {
    api_server_routes,
    api_apikey_routes,
    api_user_routes,
    api_role_routes,
    api_org_routes,
    api_team_routes,
    api_team_ldap_group_routes,
    api_project_routes,
    api_project_cfg_routes,
    api_project_kv_routes,
    api_lock_routes,
    api_repository_routes,
    api_repository_definition_routes,
    api_secret_routes,
    api_inventory_routes,
    api_jsonstore_routes,
    api_jsonstore_data_routes,
    api_process_ops_routes,
    api_process_routes,
    api_process_log_routes,
    api_process_attachment_routes,
    api_process_event_routes,
    api_process_ansible_routes,
    api_process_ansible_run_routes,
    api_process_resume_routes,
    api_process_form_routes,
    api_custom_form_routes,
    api_process_children_routes,
    api_process_checkpoint_routes,
    api_process_state_routes,
    api_process_wait_routes,
    api_trigger_routes,
    api_github_routes,
    api_policy_routes,
    api_policy_can_create_routes,
    api_metrics_routes,
    api_web_routes,
    api_console_routes,
    api_oidc_routes,
    api_console_session_routes,
    api_process_link_routes,
    api_audit_routes,
    api_openapi_routes,
};

int api_routes_each(int (*fn)(void *ctx, const struct api_route *r), void *ctx)
{
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const struct api_route *ar = tables[t]; ar->method; ar++) {
			int rc = fn(ctx, ar);
			if (rc)
				return rc;
		}
	return 0;
}

/* Methods and patterns by route id (the order of the tables), for the metrics' labels. */
#define MAX_ROUTES 512
static const char *methods[MAX_ROUTES], *patterns[MAX_ROUTES];
static size_t n_routes;

int api_routes_build(struct router *r, struct err *e)
{
	n_routes = 0;
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const struct api_route *ar = tables[t]; ar->method; ar++) {
			struct http_route hr = {ar->method, ar->pattern, (void *)ar, ar->flags, n_routes};
			int rc;

			if (n_routes == MAX_ROUTES)
				return err_set(e, ERR_INTERNAL, "more than %d routes", MAX_ROUTES);
			if ((rc = router_add(r, &hr, e)))
				return rc;
			methods[n_routes] = ar->method;
			patterns[n_routes++] = ar->pattern;
		}
	return 0;
}

int api_routes_metrics_init(bool enabled, struct err *e)
{
	return metrics_init(enabled, methods, patterns, n_routes, e);
}
