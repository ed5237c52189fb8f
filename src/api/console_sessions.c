/* /api/service/console/session: the user's own console sessions (the profile page), and
 * ending one (docs/api.md "Console sessions").  Accord's own: Concord keeps its sessions
 * in the servlet container and lists none.
 *
 * A session is named by a public id derived one way from its token's hash
 * (console_session_id): listing shows nothing that finds or opens a session, and ending one
 * needs the user's own session list, so nobody ends another user's session. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/console_session.h"
#include "base/datetime.h"
#include "base/oom.h"

/* A key with scopes or a rate limit cannot open a session; nor may it see or end them. */
static int full_rights(struct api_call *c)
{
	if (c->who.scopes.n || c->who.rate_count)
		return api_fail(c, ERR_FORBIDDEN, "An API key with scopes or a rate limit cannot see or end console sessions");
	return 0;
}

/* The user's live sessions: those not idle past --session-idle. */
static int live_sessions(struct api_call *c, struct console_session_entry **out, size_t *n)
{
	int64_t idle = c->app->session_idle_ms;

	return store_console_session_list_user(c->db, c->who.user.id, idle > 0 ? dt_now_ms() - idle : 0, out, n,
					       &c->err);
}

static json_t *session_json(const struct console_session_entry *s, bool current)
{
	char id[CONSOLE_SESSION_ID_LEN], created[DT_ISO_LEN], seen[DT_ISO_LEN];

	console_session_id(s->hash, id);
	dt_format_iso(s->created_at, created);
	dt_format_iso(s->last_seen_at, seen);
	return json_pack("{s:s,s:s,s:s,s:b}", "id", id, "createdAt", created, "lastSeenAt", seen, "current", current);
}

static int list(struct api_call *c)
{
	struct console_session_entry *all = NULL;
	uint8_t mine[CONSOLE_SESSION_HASH_LEN];
	bool has_cookie;
	json_t *arr = NULL, *v;
	size_t n = 0;
	int rc;

	if ((rc = full_rights(c)) || (rc = live_sessions(c, &all, &n)))
		goto out;
	has_cookie = c->who.method == AUTH_CONSOLE && console_session_cookie_hash(http_header(c->req, "Cookie"), mine);
	if (!(arr = json_array())) {
		rc = oom_fail(&c->err);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		bool current = has_cookie && sodium_memcmp(all[i].hash, mine, sizeof mine) == 0;
		if (!(v = session_json(&all[i], current)) || json_array_append_new(arr, v)) {
			rc = oom_fail(&c->err);
			goto out;
		}
	}
	rc = api_reply(c, arr);
	arr = NULL;
out:
	json_decref(arr);
	sodium_memzero(mine, sizeof mine);
	free(all);
	return rc;
}

static int end(struct api_call *c)
{
	const char *want = api_param(c, "id");
	struct console_session_entry *all = NULL;
	char id[CONSOLE_SESSION_ID_LEN];
	size_t n = 0, gone = 0;
	int rc;

	if ((rc = full_rights(c)) || (rc = live_sessions(c, &all, &n)))
		goto out;
	rc = api_fail(c, ERR_NOT_FOUND, "Console session not found: %.64s", want);
	for (size_t i = 0; i < n; i++) {
		console_session_id(all[i].hash, id);
		if (strcmp(id, want) != 0)
			continue;
		rc = store_console_session_delete_user(c->db, all[i].hash, c->who.user.id, &gone, &c->err);
		if (rc == 0)
			rc = gone ? api_reply_result(c, "DELETED", id)
				  : api_fail(c, ERR_NOT_FOUND, "Console session not found: %.64s", want);
		break;
	}
out:
	free(all);
	return rc;
}

#define SCHEMA_SESSION                                                                                                 \
	"{'type':'object','properties':{'id':{'type':'string'},'createdAt':" SCHEMA_DATE ",'lastSeenAt':" SCHEMA_DATE     \
	",'current':{'type':'boolean'}}}"

static const struct api_doc doc_list = {
    .summary = "Your console sessions that have not expired, the most recently used first (Accord's own)",
    .response = "{'type':'array','items':" SCHEMA_SESSION "}",
    .errors = "401 403",
};
static const struct api_doc doc_end = {
    .summary = "End one of your console sessions (Accord's own); the browser that held it must log in again",
    .params = (const struct api_param_doc[]){{"id", "string", "the session's id, from the list"}, {0}},
    .response = SCHEMA_RESULT,
    .errors = "401 403 404",
    .audit = {"USER", "UPDATE", "end a console session"},
};

const struct api_route api_console_session_routes[] = {
    {"GET", "/api/service/console/session", list, 0, &doc_list},
    {"DELETE", "/api/service/console/session/{id}", end, 0, &doc_end},
    {0},
};
