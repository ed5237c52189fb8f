/* /api/v1/server: liveness and version, no credentials needed. */
#include "api/routes.h"
#include "version.h"

static int ping(struct api_call *c)
{
	return api_reply(c, json_pack("{s:b}", "ok", 1));
}

static int version(struct api_call *c)
{
	return api_reply(c, json_pack("{s:b,s:s,s:s,s:s}", "ok", 1, "version", ACCORD_VERSION, "commitId",
				      ACCORD_VERSION, "env", "accord"));
}

const struct api_route api_server_routes[] = {
    {"GET", "/api/v1/server/ping", ping, API_PUBLIC},
    {"GET", "/api/v1/server/version", version, API_PUBLIC},
    {0},
};
