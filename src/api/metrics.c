/* GET /metrics: the node's counters and histograms (base/metrics.h) and the gauges read
 * at scrape time — live processes by status, the due queue and the age of its oldest
 * entry (from the store, so across all nodes), this node's worker slots and the RSA key
 * pool — in the Prometheus text format (docs/operations.md "Metrics").
 *
 * Who may read it (--metrics): `loopback` (default) answers clients on this host without
 * credentials and asks others for an admin's or system reader's; `authenticated` asks
 * everyone; `public` asks nobody; `off` has no endpoint and counts nothing. */
#include <stdlib.h>
#include <string.h>

#include "api/routes.h"
#include "auth/authn.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/str.h"
#include "crypto/keypool.h"
#include "store/process_stats.h"
#include "store/users.h"

const char *const api_metrics_access_names[] = {
    [METRICS_LOOPBACK] = "loopback",
    [METRICS_AUTHENTICATED] = "authenticated",
    [METRICS_PUBLIC] = "public",
    [METRICS_OFF] = "off",
};

/* A client on this host, but not a process's runner (or anything a flow started): the
 * socket it connects from belongs to another user than the runners'.  Unknown owner: not
 * trusted. */
static bool trusted_local(struct api_call *c)
{
	struct err e;
	uid_t uid;

	if (!c->req->from_loopback)
		return false;
	if (http_peer_uid(c->req, &uid, &e)) {
		LOG_D("metrics: the owner of a loopback client is unknown (%s): credentials needed", e.msg);
		return false;
	}
	return uid != c->app->runner_uid;
}

static int check_access(struct api_call *c)
{
	enum metrics_access a = c->app->metrics_access;

	if (a == METRICS_PUBLIC || (a == METRICS_LOOPBACK && trusted_local(c)))
		return 0;
	if (authn_header(c->db, http_header(c->req, "Authorization"), &c->who, &c->err) ||
	    rbac_grants_load(c->db, &c->who, &c->err)) /* a system reader through an LDAP group too */
		return -1;
	str_fmt_cut(c->req->principal, sizeof c->req->principal, "%s", c->who.user.username);
	if (!(c->who.user.roles & (ROLE_ADMIN | ROLE_SYSTEM_READER)))
		return api_fail(c, ERR_FORBIDDEN, "metrics are for administrators and system readers");
	return 0;
}

static int gauge(struct buf *b, const char *name, const char *help, long long v, struct err *e)
{
	return metrics_gauge_head(b, name, help, e) || buf_printf(b, e, "%s %lld\n", name, v);
}

static int store_gauges(struct api_call *c, struct buf *b)
{
	static const enum proc_status live[] = {PS_NEW,	    PS_PREPARING, PS_ENQUEUED,  PS_WAITING,
						PS_STARTING, PS_RUNNING,   PS_SUSPENDED, PS_RESUMING};
	struct process_stats ps;
	int64_t now = dt_now_ms();
	int rc;

	if (store_process_stats(c->db, now, &ps, &c->err))
		return -1;
	rc = metrics_gauge_head(b, "accord_processes",
				"Processes that are not final, by status (all nodes; final ones: "
				"accord_process_finished_total).",
				&c->err);
	for (size_t i = 0; rc == 0 && i < sizeof live / sizeof live[0]; i++)
		rc = buf_printf(b, &c->err, "accord_processes{status=\"%s\"} %llu\n", proc_status_name(live[i]),
				(unsigned long long)ps.by_status[live[i]]);
	if (rc == 0)
		rc = gauge(b, "accord_queue_depth", "ENQUEUED processes that are due (all nodes).", (long long)ps.due,
			   &c->err) ||
		     metrics_gauge_head(b, "accord_queue_oldest_age_seconds",
					"How long the oldest due ENQUEUED process has waited (0: none).", &c->err) ||
		     buf_printf(b, &c->err, "accord_queue_oldest_age_seconds %.3f\n",
				ps.oldest_due_at && now > ps.oldest_due_at ? (double)(now - ps.oldest_due_at) / 1e3
									   : 0.0);
	return rc;
}

static int node_gauges(struct api_call *c, struct buf *b)
{
	unsigned busy = 0, slots = 0;

	if (c->app->queue)
		(void)queue_workers_alive(c->app->queue, &busy, &slots);
	return gauge(b, "accord_workers_busy", "Worker slots of this node running a process.", busy, &c->err) ||
	       gauge(b, "accord_workers_slots", "Worker slots of this node (--workers).", slots, &c->err) ||
	       gauge(b, "accord_keypool_ready", "RSA key pairs generated ahead of demand and ready.",
		     (long long)keypool_ready(), &c->err);
}

static int get_metrics(struct api_call *c)
{
	struct buf b;
	char *text;
	size_t len;

	if (c->app->metrics_access == METRICS_OFF || !metrics_enabled())
		return api_fail(c, ERR_NOT_FOUND, "metrics are switched off on this server (--metrics=off)");
	if (check_access(c))
		return -1;
	buf_init(&b, 0);
	if (metrics_render(&b, &c->err) || store_gauges(c, &b) || node_gauges(c, &b)) {
		buf_cleanup(&b);
		return -1;
	}
	text = buf_detach(&b, &len);
	http_resp_take(c->resp, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
	return 0;
}

static const struct api_doc doc_metrics = {
    .summary = "Prometheus metrics of this node (--metrics: loopback clients without credentials by default, others "
	       "need an admin or a system reader)",
    .response = "{'type':'string'}",
    .response_type = "text/plain",
    .errors = "401 403 404",
};

const struct api_route api_metrics_routes[] = {
    {"GET", "/metrics", get_metrics, API_PUBLIC | API_SLOW, &doc_metrics}, /* a worker: credentials may need Argon2id */
    {0},
};
