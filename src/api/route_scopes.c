/* The scope each route needs (route_scopes.h), and the check of a key's scopes and rate. */
#include "api/route_scopes.h"

#include <stdio.h>
#include <string.h>

#include "auth/ratelimit.h"
#include "base/datetime.h"
#include "base/str.h"

/* action RW: read for GET, write for anything else. */
#define RW SCOPE_ACT__COUNT

struct rule {
	const char *method;  /* NULL: any */
	const char *pattern; /* ending with '*': a prefix */
	enum route_scope_kind kind;
	enum scope_resource resource;
	unsigned action; /* enum scope_action, or RW */
	unsigned flags;
};

#define OPEN(p)                                                                                                        \
	{                                                                                                              \
		NULL, p, ROUTE_SCOPE_OPEN, 0, 0, 0                                                                     \
	}
#define NEED(m, p, r, a, f)                                                                                            \
	{                                                                                                              \
		m, p, ROUTE_SCOPE_NEEDS, r, a, f                                                                       \
	}
#define ORG "/api/v1/org/{org}"
#define PROJECT ORG "/project/{project}"

static const struct rule rules[] = {
    OPEN("/api/service/console/*"),
    OPEN("/api/service/oidc/*"),
    OPEN("/api/v1/server/*"),
    OPEN("/api/openapi.json"),
    OPEN("/metrics"),
    OPEN("/websocket"),
    OPEN("/"),
    OPEN("/favicon.ico"),
    OPEN("/assets/*"),
    OPEN("/events/github/webhook"), /* public, signed by GitHub */
    NEED("GET", "/forms/*", SCOPE_PROCESS, SCOPE_READ, 0),
    NEED(NULL, "/api/service/custom_form/*", SCOPE_PROCESS, SCOPE_WRITE, 0),
    NEED(NULL, "/api/v1/apikey*", SCOPE_APIKEY, RW, 0),
    NEED(NULL, "/api/v1/audit*", SCOPE_AUDIT, SCOPE_READ, 0),
    NEED(NULL, "/api/v1/user*", SCOPE_USER, RW, 0),
    NEED(NULL, "/api/v2/user*", SCOPE_USER, RW, 0),
    NEED(NULL, "/api/v1/role*", SCOPE_USER, RW, 0), /* roles are given to users: the same scope */
    NEED("POST", "/api/v1/events/*", SCOPE_TRIGGER, SCOPE_WRITE, ROUTE_SCOPE_WIDE),
    NEED("GET", PROJECT "/repo/{repo}/start/*", SCOPE_PROCESS, SCOPE_START, 0),
    NEED(NULL, PROJECT "/repository/{repo}/trigger*", SCOPE_TRIGGER, RW, 0),
    NEED(NULL, PROJECT "/repo/{repo}/trigger*", SCOPE_TRIGGER, RW, 0),
    NEED("GET", "/api/v2/trigger", SCOPE_TRIGGER, SCOPE_READ, ROUTE_SCOPE_WIDE),
    NEED("POST", "/api/v2/trigger/refresh", SCOPE_TRIGGER, SCOPE_WRITE, ROUTE_SCOPE_WIDE),
    NEED("POST", "/api/v1/org/trigger/refresh", SCOPE_TRIGGER, SCOPE_WRITE, ROUTE_SCOPE_WIDE),
    NEED(NULL, PROJECT "/repository*", SCOPE_REPOSITORY, RW, 0),
    NEED("POST", "/api/v1/repository/validate", SCOPE_REPOSITORY, SCOPE_READ, 0),
    NEED("GET", ORG "/project", SCOPE_PROJECT, SCOPE_READ, ROUTE_SCOPE_ORG_LIST),
    NEED(NULL, ORG "/project*", SCOPE_PROJECT, RW, 0),
    NEED(NULL, "/api/v2/org/{org}/project*", SCOPE_PROJECT, RW, 0),
    NEED("POST", ORG "/secret/{name}/data", SCOPE_SECRET, SCOPE_READ, 0),
    NEED(NULL, ORG "/secret*", SCOPE_SECRET, RW, 0),
    NEED(NULL, "/api/v2/org/{org}/secret*", SCOPE_SECRET, RW, 0),
    NEED("POST", ORG "/inventory/{inv}/query/{q}/exec", SCOPE_INVENTORY, SCOPE_READ, 0),
    NEED(NULL, ORG "/inventory*", SCOPE_INVENTORY, RW, 0),
    NEED("POST", ORG "/jsonstore/{store}/query/{q}/exec", SCOPE_JSONSTORE, SCOPE_READ, 0),
    NEED(NULL, ORG "/jsonstore*", SCOPE_JSONSTORE, RW, 0),
    NEED(NULL, ORG "/team*", SCOPE_TEAM, RW, 0),
    NEED(NULL, "/api/v2/policy*", SCOPE_ORG, RW, ROUTE_SCOPE_WIDE), /* server-wide governance */
    NEED("GET", "/api/v1/{entityType}/canCreate", SCOPE_ORG, SCOPE_READ, 0), /* a policy check, reads only */
    NEED("GET", "/api/v1/org", SCOPE_ORG, SCOPE_READ, ROUTE_SCOPE_WIDE),
    NEED(NULL, "/api/v1/org*", SCOPE_ORG, RW, 0),
    NEED("POST", "/api/v1/process", SCOPE_PROCESS, SCOPE_START, 0),
    NEED("GET", "/api/v2/process", SCOPE_PROCESS, SCOPE_READ, ROUTE_SCOPE_WIDE),
    NEED("GET", "/api/v2/process/count", SCOPE_PROCESS, SCOPE_READ, ROUTE_SCOPE_WIDE),
    NEED(NULL, "/api/v1/process/*", SCOPE_PROCESS, RW, 0),
    NEED(NULL, "/api/v2/process/*", SCOPE_PROCESS, RW, 0),
    NEED(NULL, "/api/v3/process/*", SCOPE_PROCESS, RW, 0),
};

static bool pattern_matches(const char *rule, const char *pattern)
{
	size_t n = strlen(rule);

	if (n && rule[n - 1] == '*')
		return strncmp(rule, pattern, n - 1) == 0;
	return strcmp(rule, pattern) == 0;
}

struct route_scope route_scope_of(const char *method, const char *pattern)
{
	for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
		const struct rule *r = &rules[i];
		struct route_scope out = {.kind = r->kind, .flags = r->flags};

		if ((r->method && strcmp(r->method, method) != 0) || !pattern_matches(r->pattern, pattern))
			continue;
		if (r->kind == ROUTE_SCOPE_NEEDS) {
			out.need.set = true;
			out.need.resource = r->resource;
			out.need.action = r->action == RW ? (strcmp(method, "GET") == 0 ? SCOPE_READ : SCOPE_WRITE)
							  : (enum scope_action)r->action;
		}
		return out;
	}
	return (struct route_scope){.kind = ROUTE_SCOPE_NONE};
}

static int rate_check(struct api_call *c)
{
	int64_t retry = 1;
	char header[24];

	if (!ratelimit_take(c->who.apikey_id, c->who.rate_count, c->who.rate_window_ms, dt_now_ms(), &retry, &c->err))
		return 0;
	str_fmt_cut(header, sizeof header, "%lld", (long long)retry);
	http_resp_header(c->resp, "Retry-After", header);
	return -ERR_TOO_MANY;
}

/* Who holds the scopes, for messages. */
static const char *holder(const struct api_call *c)
{
	return c->who.method == AUTH_SESSION ? "process session (of a scoped API key)" : "API key";
}

static int scope_check(struct api_call *c, const struct api_route *route)
{
	struct route_scope rs = route_scope_of(route->method, route->pattern);
	const char *res, *act;
	bool project_only;

	if (rs.kind == ROUTE_SCOPE_OPEN)
		return 0;
	if (rs.kind == ROUTE_SCOPE_NONE)
		return api_fail(c, ERR_FORBIDDEN,
				"This %s has scopes and no scope covers %s %s: use a key without "
				"scopes",
				holder(c), route->method, route->pattern);
	res = scope_resource_name(rs.need.resource);
	act = scope_action_name(rs.need.action);
	if (!scope_find(&c->who.scopes, &rs.need))
		return api_fail(c, ERR_FORBIDDEN, "This %s lacks the scope %s:%s needed for %s %s", holder(c), res,
				act, route->method, route->pattern);
	project_only = !(rs.flags & ROUTE_SCOPE_WIDE);
	if ((rs.flags & (ROUTE_SCOPE_WIDE | ROUTE_SCOPE_ORG_LIST)) &&
	    scope_narrowed(&c->who.scopes, &rs.need, project_only))
		return api_fail(
		    c, ERR_FORBIDDEN, "The scopes %s:%s of this %s are narrowed %s: %s %s would reach beyond them", res,
		    act, holder(c), project_only ? "to projects" : "to organizations or projects", route->method, route->pattern);
	c->who.need = rs.need;
	return 0;
}

int api_route_scope_check(struct api_call *c, const struct api_route *route)
{
	int rc;

	/* A process's session carries the scopes of the key that started it (authn_session). */
	if (c->who.method != AUTH_APIKEY && c->who.method != AUTH_SESSION)
		return 0;
	if (c->who.rate_count && (rc = rate_check(c)))
		return rc;
	return c->who.scopes.n ? scope_check(c, route) : 0;
}
