#ifndef ACCORD_API_API_H
#define ACCORD_API_API_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "auth/principal.h"
#include "base/err.h"
#include "http/request.h"
#include "http/response.h"
#include "queue/queue.h"
#include "store/store.h"

/* The API layer: one file per resource, handlers only.  A handler receives a call with
 * the request, a response to fill, the thread's store connection and the authenticated
 * principal.  It returns 0 after filling the response, or a negative code after filling
 * c->err (the dispatcher turns that into the JSON error response). */

/* Who may read GET /metrics (--metrics; api/metrics.c). */
enum metrics_access { METRICS_LOOPBACK, METRICS_AUTHENTICATED, METRICS_PUBLIC, METRICS_OFF, METRICS__COUNT };
extern const char *const api_metrics_access_names[METRICS__COUNT];

/* Process-wide state the handlers share; set up by `accord serve`. */
struct router;
struct repos;
struct triggers;
struct masterkey;

struct app {
	struct router *router; /* built once by `accord serve` before the server starts */
	struct store *store;
	const char *data_dir;
	const char *work_dir; /* tmp/, ready/, work/: the data folder or --work-dir */
	struct masterkey *secrets_key; /* the master key, in locked read-only memory (api_secrets_init) */
	struct queue *queue;	       /* the process queue of this node */
	unsigned char session_key[32]; /* derives process session tokens (crypto/session.h) */
	const char *node_id;
	/* false while `accord serve` starts after binding its address (data folder,
	 * migrations, recovery): every request is answered 503 "starting" until then. */
	atomic_bool ready;
	uint64_t health_min_free_bytes; /* GET /api/v1/server/health: disk check threshold */
	enum metrics_access metrics_access;
	uid_t runner_uid; /* the user runners run as (the server's own unless it started as root) */
	struct repos *repos;	   /* git clones of repositories (repo/repo.h) */
	struct triggers *triggers; /* cron scheduler and generic events (triggers/triggers.h) */
	const char *github_secret; /* ACCORD_GITHUB_SECRET: the webhook's HMAC key (NULL: off) */
	int64_t session_idle_ms;   /* console sessions end after this long unused (--session-idle) */
};

struct api_call {
	struct app *app;
	struct http_request *req;
	struct http_response *resp;
	struct store_conn *db;
	struct principal who; /* valid unless the route is API_PUBLIC */
	struct err err;
	json_t *audit; /* what the handler noted for the audit entry (api_audit_note); owned */
	bool changes;  /* the route changes state (not a GET, or a GET flagged API_CHANGES) */
	const struct api_route *route; /* the matched route: what a scoped API key must allow */
	bool audited; /* the handler stored the audit entry with its change (api_audit_prepare) */
};

typedef int (*api_handler)(struct api_call *c);

enum api_route_flags {
	API_PUBLIC = 1 << 0,	   /* no credentials needed */
	API_SLOW = 1 << 1,	   /* a GET that may take long: always run on a worker thread */
	API_NO_CHALLENGE = 1 << 2, /* a 401 never carries WWW-Authenticate (console whoami) */
	API_CHANGES = 1 << 3,	   /* a GET that changes state, as Concord's API has it: with the
				    * console's cookie it needs the CSRF check like a POST */
	API_FETCHES = 1 << 4,	   /* may wait for a git fetch: runs on the HTTP server's pool
				    * apart (HTTP_DEFER_APART), never holding a common worker */
};

/* What a route is, kept next to its route table: the OpenAPI document is built from it
 * (api/openapi.c, GET /api/openapi.json) and the dispatcher writes the audit entry it
 * names (api/audit.c).  Every route has one (tests/unit/test_openapi.c). */
struct api_param_doc {
	const char *name; /* a path parameter of the pattern (describes it) or a query parameter */
	const char *type; /* its JSON-schema type: "string", "integer", "boolean" */
	const char *desc;
};

/* The audit entry of a successful call: object NULL for a route that changes nothing.
 * action "CREATE_OR_UPDATE" is CREATE or UPDATE by the "result" of the answer.  part, when
 * set, goes to the details as "changed" (e.g. "access" for an access rule of a project). */
struct api_audit_doc {
	const char *object, *action, *part;
};

struct api_doc {
	const char *summary;
	const struct api_param_doc *params; /* ends with {0}; NULL: none */
	const char *body;		    /* JSON schema (text) of the request body; NULL: none */
	const char *body_type;		    /* its media types, space-separated; NULL: application/json */
	const char *response;		    /* JSON schema (text) of the success body; NULL: any */
	const char *response_type;	    /* NULL: application/json */
	int status;			    /* of success, 0: 200 (204: no body) */
	const char *errors;		    /* error statuses besides 401 and 500, e.g. "400 403 404" */
	struct api_audit_doc audit;
};

struct api_route {
	const char *method;
	const char *pattern;
	api_handler fn;
	unsigned flags;
	const struct api_doc *doc;
};

/* Authenticates the request into c->who (api/authenticate.c): Authorization (Basic or an
 * API key), else X-Concord-SessionToken, else the console session cookie.  A request
 * authenticated by the cookie that is not GET/HEAD must pass the CSRF rule (header
 * X-Accord-CSRF equal to the session's token, or an Origin equal to the server's own):
 * ERR_FORBIDDEN otherwise.  Returns 0, a negative code with c->err set, or API_AUTH_DEFER
 * when the check has to write (a session's last use) and the request is not on a worker.
 * An API key's scopes and rate limit are checked here too, against c->route
 * (api/route_scopes.h): ERR_FORBIDDEN or ERR_TOO_MANY.
 * The dispatcher calls it for every route but API_PUBLIC ones, which may call it
 * themselves. */
#define API_AUTH_DEFER 1
int api_authenticate(struct api_call *c) WUR;

/* The request came over TLS: to a proxy in front that says so (X-Forwarded-Proto: https
 * or Forwarded: proto=https; `accord serve` itself speaks plain HTTP). */
bool api_request_tls(const struct http_request *req);

/* ---- helpers for handlers ---- */

/* 200 with a JSON body (steals v). Returns 0. */
int api_reply(struct api_call *c, json_t *v);
/* 200 {"ok":true,"result":<result>} plus, when id is given, "id". Returns 0. */
int api_reply_result(struct api_call *c, const char *result, const char *id);
/* Sets c->err and returns its negative code: `return api_fail(c, ERR_INVALID, "...")`. */
int api_fail(struct api_call *c, enum err_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Keeps the message of c->err and gives it another code (a store's "not found" that is a
 * 400 for this request): `return api_recode(c, ERR_INVALID)`. */
int api_recode(struct api_call *c, enum err_code code);

/* The body as a JSON object (415 for another content type, 400 for invalid JSON or a
 * body that is not an object).  New reference in *out. */
int api_body_object(struct api_call *c, json_t **out) WUR;
/* The body as a JSON array. */
int api_body_array(struct api_call *c, json_t **out) WUR;

/* An optional object field of body as compact JSON text in *out (new string, caller
 * frees; NULL when the field is absent or null); 400 when it is not an object. */
int api_body_json_text(struct api_call *c, json_t *body, const char *key, char **out) WUR;

/* limit and offset query parameters: defaults limits.list_default and 0; limit is
 * capped to 1..limits.list_max (400 for a bad number). */
int api_paging(struct api_call *c, size_t *limit, size_t *offset) WUR;

/* An optional boolean query parameter: absent leaves *out unchanged; "true"/"false" in
 * any case set it; anything else is 400 naming the parameter. */
int api_query_bool(struct api_call *c, const char *name, bool *out) WUR;

/* Adds key: value (a copy) to the details of the call's audit entry: ids and names that
 * the path and the answer do not carry.  Never a secret's value.  Out of memory leaves the
 * entry without it. */
void api_audit_note(struct api_call *c, const char *key, const char *value);

/* Adds key: n (a number) to the details of the call's audit entry, e.g. how many items a
 * bulk write wrote. */
void api_audit_note_count(struct api_call *c, const char *key, size_t n);

/* A path parameter that the router guarantees to exist. */
const char *api_param(struct api_call *c, const char *name);

#endif
