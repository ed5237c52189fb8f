/* /api/v1/process and /api/v2/process: start, status, stop, list, count.  The log,
 * attachment and event endpoints live in their own files. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/process_access.h"
#include "api/process_json.h"
#include "api/process_routes.h"
#include "api/routes.h"
#include "base/log.h"
#include "queue/logwatch.h"
#include "queue/queue.h"

static int status(struct api_call *c, unsigned includes)
{
	struct process p;
	json_t *v;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_READ, &p)))
		return rc;
	rc = api_process_json(c, &p, includes, &v);
	store_process_cleanup(&p);
	return rc ? rc : api_reply(c, v);
}

static int status_v2(struct api_call *c)
{
	unsigned includes;
	int rc = api_process_includes(c, &includes);

	return rc ? rc : status(c, includes);
}

static int status_v1(struct api_call *c)
{
	return status(c, 0);
}

/* Stop (reference §6.8, DESIGN.md §2): a process that is not running is cancelled at once;
 * a running one is stopped by its supervisor (SIGTERM, SIGKILL after the grace period) and
 * the answer comes once it is CANCELLED; a finished one is left as it is.  204 in all
 * three cases, as Concord. */
static int stop(struct api_call *c)
{
	struct process p;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_WRITE, &p)))
		return rc;
	for (int tries = 0; tries < 100 && rc == 0; tries++) {
		struct err e;
		if (PS_BIT(p.status) & PS_TERMINAL)
			break;
		if (PS_BIT(p.status) & PS_SERVER_SIDE) {
			if (store_process_transition(c->db, p.instance_id, PS_SERVER_SIDE, PS_CANCELLED, &e) == 0) {
				queue_log_line(c->db, p.instance_id, "WARN", "Process cancelled by %s",
					       c->who.user.username);
				logwatch_end(p.instance_id); /* followers see the line above, then the end */
				queue_process_ended(c->app->queue, c->db, p.instance_id, PS_CANCELLED);
				if (store_process_payload_drop(c->db, p.instance_id, &e))
					LOG_W("process %s: cannot drop its payload: %s", p.instance_id, e.msg);
				break;
			}
		} else if (queue_stop_process(c->app->queue, p.instance_id, &e) == 0) {
			break;
		} else if (e.code != ERR_NOT_FOUND) {
			rc = api_fail(c, e.code, "%s", e.msg);
			break;
		} else {
			/* Claimed but its supervisor is not registered yet: look again shortly. */
			struct timespec ts = {0, 10 * 1000000};
			nanosleep(&ts, NULL);
		}
		store_process_cleanup(&p);
		if ((rc = store_process_get(c->db, api_param(c, "id"), &p, &c->err)))
			return rc;
	}
	store_process_cleanup(&p);
	if (rc)
		return rc;
	http_resp_bytes(c->resp, 204, "", NULL, 0);
	return 0;
}

const struct api_route api_process_routes[] = {
    {"POST", "/api/v1/process", api_process_start, 0},
    {"GET", "/api/v1/process/{id}", status_v1, 0},
    {"DELETE", "/api/v1/process/{id}", stop, 0},
    {"GET", "/api/v2/process", api_process_list, 0},
    {"GET", "/api/v2/process/count", api_process_count, 0},
    {"GET", "/api/v2/process/{id}", status_v2, 0},
    {0},
};
