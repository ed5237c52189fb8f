/* GitHub's webhook (POST /events/github/webhook, docs/api.md "GitHub events"): the body
 * must carry X-Hub-Signature-256, HMAC-SHA256 of its bytes keyed with the secret the
 * server was given (ACCORD_GITHUB_SECRET), compared in constant time — nothing is parsed or
 * started before that; a delivery (X-GitHub-Delivery) is acted on once; `ping` is answered;
 * every other event goes to the github triggers (triggers/github.c).  Answers "ok" as
 * Concord does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "base/datetime.h"
#include "base/log.h"
#include "store/audit.h"
#include "store/github_deliveries.h"
#include "triggers/triggers.h"

#define DELIVERY_MAX 128
#define EVENT_MAX 64

/* "sha256=<64 hex>" of the body under the secret, in constant time. */
static bool signature_ok(const char *secret, const struct buf *body, const char *header)
{
	unsigned char mac[crypto_auth_hmacsha256_BYTES], given[crypto_auth_hmacsha256_BYTES];
	crypto_auth_hmacsha256_state st;
	size_t n = 0;

	if (!header || strncmp(header, "sha256=", 7) != 0 || strlen(header + 7) != 2 * sizeof given ||
	    sodium_hex2bin(given, sizeof given, header + 7, 2 * sizeof given, NULL, &n, NULL) != 0 || n != sizeof given)
		return false;
	crypto_auth_hmacsha256_init(&st, (const unsigned char *)secret, strlen(secret));
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)body->data, body->len);
	crypto_auth_hmacsha256_final(&st, mac);
	return sodium_memcmp(mac, given, sizeof mac) == 0;
}

static bool token_ok(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > max)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_' || *s == '.'))
			return false;
	return true;
}

static int reply_ok(struct api_call *c)
{
	http_resp_static(c->resp, 200, "text/plain", "ok", 2);
	return 0;
}

static void audit_event(struct api_call *c, const char *delivery, const char *name, size_t started)
{
	json_t *details = json_pack("{s:s, s:s, s:s, s:I}", "source", "github", "eventId", delivery, "githubEvent", name,
				    "startedProcesses", (json_int_t)started);
	struct audit_entry a = {.object = "EXTERNAL_EVENT",
				.action = "ACCESS",
				.source = "API_REQUEST",
				.address = c->req->remote_addr[0] ? c->req->remote_addr : NULL,
				.details = details};
	struct err e;

	if (details && store_audit_insert(c->db, &a, &e))
		LOG_E("audit: cannot record the github event %s: %s", delivery, e.msg);
	json_decref(details);
}

static int webhook(struct api_call *c)
{
	const char *secret = c->app->github_secret, *name = http_header(c->req, "X-GitHub-Event");
	const char *delivery = http_header(c->req, "X-GitHub-Delivery");
	json_t *payload, *ids = NULL;
	json_error_t jerr;
	bool first;
	int rc;

	if (!secret || !*secret)
		return api_fail(c, ERR_UNAVAILABLE,
				"GitHub events are not configured on this server (ACCORD_GITHUB_SECRET, docs/api.md "
				"\"GitHub events\")");
	if (!signature_ok(secret, &c->req->body, http_header(c->req, "X-Hub-Signature-256")))
		return api_fail(c, ERR_UNAUTH,
				"X-Hub-Signature-256 is missing or does not match the body (the webhook's secret must "
				"be the server's ACCORD_GITHUB_SECRET)");
	if (!token_ok(name, EVENT_MAX))
		return api_fail(c, ERR_INVALID, "X-GitHub-Event is missing or not an event name");
	if (strcmp(name, "ping") == 0)
		return reply_ok(c);
	if (!token_ok(delivery, DELIVERY_MAX))
		return api_fail(c, ERR_INVALID, "X-GitHub-Delivery is missing or not a delivery id");
	if (!c->app->triggers)
		return api_fail(c, ERR_UNAVAILABLE, "triggers are not running on this server");
	payload = json_loadb(c->req->body.data, c->req->body.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(payload)) {
		json_decref(payload);
		return api_fail(c, ERR_INVALID, "the body is not a JSON object: %s", jerr.text);
	}
	if ((rc = store_github_delivery_seen(c->db, delivery, dt_now_ms(), &first, &c->err)) || !first) {
		json_decref(payload);
		if (!rc)
			LOG_I("github event %s (%s): delivered before, nothing started again", delivery, name);
		return rc ? rc : reply_ok(c);
	}
	rc = triggers_github(c->app->triggers, c->db, name, delivery, payload, &ids, &c->err);
	json_decref(payload);
	if (rc)
		return rc;
	LOG_I("github event %s (%s): %zu process(es) started", delivery, name, json_array_size(ids));
	audit_event(c, delivery, name, json_array_size(ids));
	json_decref(ids);
	return reply_ok(c);
}

static const struct api_doc doc_webhook = {
    .summary = "GitHub's webhook: starts the processes of the matching github triggers (signed with "
	       "X-Hub-Signature-256)",
    .body = SCHEMA_OBJECT,
    .response_type = "text/plain",
    .errors = "400 401 413 503",
};

const struct api_route api_github_routes[] = {
    {"POST", "/events/github/webhook", webhook, API_PUBLIC | API_SLOW, &doc_webhook},
    {0},
};
