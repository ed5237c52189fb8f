/* The request pipeline: route → authenticate → handler → error mapping. */
#include <stdio.h>
#include <string.h>

#include "api/routes.h"
#include "auth/authn.h"
#include "base/log.h"
#include "base/str.h"

static void fail(struct http_response *resp, const struct err *e)
{
	if (e->code == ERR_INTERNAL || e->code <= 0 || e->code >= ERR__COUNT) {
		struct err shown;
		LOG_E("internal error: %s", e->msg);
		err_set(&shown, ERR_INTERNAL, "internal error (see the server log)");
		http_resp_error(resp, &shown);
		return;
	}
	http_resp_error(resp, e);
}

static bool may_take_long(const struct api_route *route, struct http_request *req)
{
	if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0)
		return true;
	if (route->flags & API_SLOW)
		return true;
	return !(route->flags & API_PUBLIC) && !authn_is_quick(http_header(req, "Authorization"));
}

int api_dispatch(void *app, struct http_request *req, struct http_response *resp)
{
	struct api_call c = {.app = app, .req = req, .resp = resp};
	const struct http_route *hr;
	const struct api_route *route;
	char allow[128];
	const char *method = req->method;
	int rc;

	if (strcmp(method, "HEAD") == 0)
		req->method = "GET";
	hr = router_match(((struct app *)app)->router, req, allow, sizeof allow, &c.err);
	req->method = method;
	if (!hr) {
		fail(resp, &c.err);
		if (c.err.code == ERR_METHOD)
			http_resp_header(resp, "Allow", allow);
		return HTTP_HANDLED;
	}
	route = hr->handler;
	req->route_id = hr->id;
	if (!atomic_load(&((struct app *)app)->ready)) {
		http_resp_json(
		    resp, 503,
		    json_pack("{s:b,s:s,s:s}", "ok", 0, "status", "starting", "message",
			      "the server is starting (data folder, migrations, recovery): try again shortly"));
		http_resp_header(resp, "Retry-After", "1");
		return HTTP_HANDLED;
	}
	if (!req->on_worker && may_take_long(route, req))
		return HTTP_DEFER;
	c.db = store_conn(((struct app *)app)->store, &c.err);
	if (!c.db) {
		fail(resp, &c.err);
		return HTTP_HANDLED;
	}
	if (!(route->flags & API_PUBLIC)) {
		const char *session = http_header(req, "X-Concord-SessionToken");
		if (session && !http_header(req, "Authorization") ? authn_session(c.db, session, &c.who, &c.err)
								   : authn_header(c.db, http_header(req, "Authorization"), &c.who, &c.err)) {
			fail(resp, &c.err);
			return HTTP_HANDLED;
		}
		str_fmt_cut(req->principal, sizeof req->principal, "%s", c.who.user.username);
	}
	rc = route->fn(&c);
	if (rc) {
		if (c.err.code == ERR_OK)
			err_set(&c.err, ERR_INTERNAL, "handler for %s %s failed without a reason", route->method,
				route->pattern);
		fail(resp, &c.err);
	}
	return HTTP_HANDLED;
}
