/* /api/v1/server: liveness, health and version, no credentials needed. */
#include <string.h>
#include <sys/statvfs.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "base/str.h"
#include "store/meta.h"
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

/* The database answers a trivial query (the bootstrap mark every installation has). */
static json_t *check_store(struct api_call *c)
{
	char done[64];
	struct err e = {0};

	if (store_meta_get(c->db, "bootstrapped_at", done, sizeof done, &e) != 0)
		return json_pack("{s:b,s:s}", "ok", 0, "message", e.msg);
	return json_pack("{s:b}", "ok", 1);
}

static json_t *check_workers(struct api_call *c)
{
	unsigned busy = 0, slots = 0;
	bool alive = c->app->queue && queue_workers_alive(c->app->queue, &busy, &slots);
	json_t *v = json_pack("{s:b,s:I,s:I}", "ok", alive, "busy", (json_int_t)busy, "slots", (json_int_t)slots);

	if (!alive)
		json_object_set_new(v, "message", json_string("the process dispatcher is not running"));
	return v;
}

/* The free space of the file system holding dir, against --health-min-free-bytes. */
static json_t *check_free(struct api_call *c, const char *dir, const char *what)
{
	struct statvfs st;
	uint64_t free_bytes, min = c->app->health_min_free_bytes;
	char msg[160];
	json_t *v;

	if (statvfs(dir, &st) != 0) {
		str_fmt_cut(msg, sizeof msg, "cannot read the free space of the %s", what);
		return json_pack("{s:b,s:s}", "ok", 0, "message", msg);
	}
	free_bytes = (uint64_t)st.f_bavail * st.f_frsize;
	v = json_pack("{s:b,s:I,s:I}", "ok", free_bytes >= min, "freeBytes", (json_int_t)free_bytes, "minFreeBytes",
		      (json_int_t)min);
	if (free_bytes < min) {
		str_fmt_cut(msg, sizeof msg, "free space of the %s is below the minimum (--health-min-free-bytes)", what);
		json_object_set_new(v, "message", json_string(msg));
	}
	return v;
}

static json_t *check_disk(struct api_call *c)
{
	return check_free(c, c->app->data_dir, "data folder");
}

/* 200 {"ok":true,"status":"ok","checks":{…}} or 503 with the failed checks' "ok":false. */
static int health(struct api_call *c)
{
	json_t *checks =
	    json_pack("{s:o,s:o,s:o}", "store", check_store(c), "workers", check_workers(c), "disk", check_disk(c));
	/* processes' files live elsewhere (--work-dir, often a tmpfs): that one fills up too */
	if (c->app->work_dir && c->app->work_dir != c->app->data_dir && strcmp(c->app->work_dir, c->app->data_dir))
		json_object_set_new(checks, "workDisk", check_free(c, c->app->work_dir, "work folder (--work-dir)"));
	const char *name;
	json_t *check;
	bool ok = true;

	json_object_foreach(checks, name, check) ok = ok && json_is_true(json_object_get(check, "ok"));
	http_resp_json(c->resp, ok ? 200 : 503,
		       json_pack("{s:b,s:s,s:o}", "ok", ok, "status", ok ? "ok" : "unhealthy", "checks", checks));
	return 0;
}

#define SCHEMA_CHECK "{'type':'object','properties':{'ok':{'type':'boolean'},'message':{'type':'string'}}}"

/* Concord's agents and console connect to /websocket; Accord runs processes itself and its
 * console needs no socket, so the answer says so instead of a bare "no such endpoint". */
static int websocket(struct api_call *c)
{
	return api_fail(c, ERR_NOT_FOUND,
			"/websocket is Concord's endpoint for external agents and its console's live updates: "
			"Accord has neither (it runs processes on its own nodes; its console polls the REST API). "
			"See docs/api.md \"Server\"");
}

static const struct api_doc doc_websocket = {
    .summary = "Concord's agent and console socket: always 404 with an explanation (Accord has no external agents)",
    .response = SCHEMA_OK,
    .errors = "404",
};
static const struct api_doc doc_ping = {.summary = "Liveness: the server answers", .response = SCHEMA_OK};
static const struct api_doc doc_health = {
    .summary = "Health: the store answers, the workers run, the data folder (and a separate --work-dir) has free "
	       "space (503 with this body, status unhealthy, when not)",
    .response = "{'type':'object','required':['ok','status','checks'],'properties':{'ok':{'type':'boolean'},"
		"'status':{'enum':['ok','unhealthy']},'checks':{'type':'object','properties':{'store':" SCHEMA_CHECK
		",'workers':" SCHEMA_CHECK ",'disk':" SCHEMA_CHECK
		",'workDisk':" SCHEMA_CHECK "}}}}",
};
static const struct api_doc doc_version = {
    .summary = "The server's version",
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},'version':{'type':'string'},"
		"'commitId':{'type':'string'},'env':{'type':'string'}}}",
};

const struct api_route api_server_routes[] = {
    {"GET", "/api/v1/server/ping", ping, API_PUBLIC, &doc_ping},
    {"GET", "/api/v1/server/health", health, API_PUBLIC, &doc_health},
    {"GET", "/api/v1/server/version", version, API_PUBLIC, &doc_version},
    {"GET", "/websocket", websocket, API_PUBLIC, &doc_websocket},
    {0},
};
