#include "api/routes.h"

static const struct api_route *const tables[] = {
    api_server_routes,
    api_apikey_routes,
    api_user_routes,
    api_org_routes,
    api_team_routes,
    api_project_routes,
    api_repository_routes,
    api_secret_routes,
    api_inventory_routes,
    api_process_routes,
    api_process_log_routes,
    api_process_attachment_routes,
    api_process_event_routes,
    api_process_resume_routes,
    api_process_form_routes,
    api_process_children_routes,
    api_process_checkpoint_routes,
    api_trigger_routes,
};

int api_routes_build(struct router *r, struct err *e)
{
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const struct api_route *ar = tables[t]; ar->method; ar++) {
			struct http_route hr = {ar->method, ar->pattern, (void *)ar, ar->flags};
			int rc = router_add(r, &hr, e);
			if (rc)
				return rc;
		}
	return 0;
}
