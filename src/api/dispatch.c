/* The request pipeline: route → authenticate → handler → error mapping. */
#include <stdio.h>
#include <string.h>

#include "api/routes.h"
#include "auth/authn.h"
#include "base/log.h"
#include "base/str.h"
#include "http/negotiate.h"
#include "store/store.h"

/* What is full, for the client (507): the database (store/sqlite.c says so), else a file
 * a request writes, which lives in the work folder (tmp/, ready/; the data folder unless
 * --work-dir).  The detail, with the server's paths, goes to the server log. */
static void fail_no_space(const struct app *app, struct http_response *resp, const struct err *e)
{
	const char *what = "the work folder's disk (--work-dir)";
	struct err shown;

	if (strncmp(e->msg, STORE_NO_SPACE, strlen(STORE_NO_SPACE)) == 0)
		what = "the database's disk";
	else if (!app->work_dir || !app->data_dir || strcmp(app->work_dir, app->data_dir) == 0)
		what = "the data folder's disk";
	LOG_E("no space left: %s", e->msg);
	err_set(&shown, ERR_NO_SPACE, "Insufficient storage: %s is full; nothing was stored (GET /api/v1/server/health)",
		what);
	http_resp_error(resp, &shown);
}

static void fail(const struct app *app, struct http_response *resp, const struct err *e)
{
	if (e->code == ERR_NO_SPACE) {
		fail_no_space(app, resp, e);
		return;
	}
	if (e->code == ERR_INTERNAL || e->code <= 0 || e->code >= ERR__COUNT) {
		struct err shown;
		LOG_E("internal error: %s", e->msg);
		err_set(&shown, ERR_INTERNAL, "internal error (see the server log)");
		http_resp_error(resp, &shown);
		return;
	}
	http_resp_error(resp, e);
}

/* A 401 makes browsers show their own password dialog when it carries WWW-Authenticate:
 * not for the console (Concord's rule: its whoami, and requests marked as the UI's). */
static void fail_call(struct api_call *c, const struct api_route *route)
{
	const char *ui = http_header(c->req, "X-Concord-UI-Request");

	fail(c->app, c->resp, &c->err);
	if (c->err.code == ERR_UNAUTH && ((route->flags & API_NO_CHALLENGE) || (ui && cstr_ieq(ui, "true"))))
		http_resp_header_drop(c->resp, "WWW-Authenticate");
}

static bool may_take_long(const struct api_route *route, struct http_request *req)
{
	if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0)
		return true;
	if (route->flags & API_SLOW)
		return true;
	return !(route->flags & API_PUBLIC) && !authn_is_quick(http_header(req, "Authorization"));
}

static int dispatch(void *app, struct http_request *req, struct http_response *resp)
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
		fail(app, resp, &c.err);
		if (c.err.code == ERR_METHOD)
			http_resp_header(resp, "Allow", allow);
		return HTTP_HANDLED;
	}
	route = hr->handler;
	c.route = route;
	req->route_id = hr->id;
	if (!atomic_load(&((struct app *)app)->ready)) {
		http_resp_json(
		    resp, 503,
		    json_pack("{s:b,s:s,s:s}", "ok", 0, "status", "starting", "message",
			      "the server is starting (data folder, migrations, recovery): try again shortly"));
		http_resp_header(resp, "Retry-After", "1");
		return HTTP_HANDLED;
	}
	if (!req->on_worker && (route->flags & API_FETCHES))
		return HTTP_DEFER_APART;
	if (!req->on_worker && may_take_long(route, req))
		return HTTP_DEFER;
	c.db = store_conn(((struct app *)app)->store, &c.err);
	if (!c.db) {
		fail(app, resp, &c.err);
		return HTTP_HANDLED;
	}
	if (!req->on_worker)
		store_prefer_map(c.db); /* the event loop's connections serve reads only */
	c.changes = (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) || (route->flags & API_CHANGES);
	if (!(route->flags & API_PUBLIC)) {
		rc = api_authenticate(&c);
		if (rc == API_AUTH_DEFER)
			return HTTP_DEFER;
		if (rc) {
			fail_call(&c, route);
			return HTTP_HANDLED;
		}
	}
	rc = route->fn(&c);
	if (rc) {
		if (c.err.code == ERR_OK)
			err_set(&c.err, ERR_INTERNAL, "handler for %s %s failed without a reason", route->method,
				route->pattern);
		fail_call(&c, route);
	} else {
		if (route->doc && route->doc->audit.object)
			api_audit_record(&c, route);
		http_negotiate_json(req, resp);
	}
	json_decref(c.audit);
	return HTTP_HANDLED;
}

int api_dispatch(void *app, struct http_request *req, struct http_response *resp)
{
	struct store *store = ((struct app *)app)->store;
	int rc = dispatch(app, req, resp);

	/* This thread's next request, or another thread's, takes a connection from the
	 * store's idle ones (store_conn_release): a few sessions for all the workers. */
	if (store)
		store_conn_release(store);
	return rc;
}
