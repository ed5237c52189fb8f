#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/path.h"
#include "cli/run.h"
#include "flow/log_line.h"
#include "flow/procdir.h"
#include "flow/tasks/docker_local.h"
#include "runner/tool.h"

void run_log_line(struct run_host *h, enum flow_level level, const char *msg)
{
	flow_log_line(stdout, level, msg, h ? h->workdir : NULL, h ? &h->sensitive : NULL);
}

static void host_log(void *ctx, enum flow_level level, const char *msg)
{
	run_log_line(ctx, level, msg);
}

static void write_event(struct run_host *h, const char *type, json_t *data)
{
	char iso[DT_ISO_LEN], *line;
	json_t *ev;
	if (!h->events)
		return;
	dt_format_iso(dt_now_ms(), iso);
	ev = json_pack("{s:s, s:s, s:O}", "eventType", type, "eventDate", iso, "data", data);
	if (h->sensitive.n || h->sensitive.lost) {
		json_object_set_new(ev, "data", json_deep_copy(data));
		mask_json(&h->sensitive, json_object_get(ev, "data"));
	}
	line = json_dumps(ev, JSON_COMPACT);
	if (line)
		fprintf(h->events, "%s\n", line);
	free(line);
	json_decref(ev);
}

static void host_event(void *ctx, json_t *data)
{
	write_event(ctx, "ELEMENT", data);
}

static int host_server_task(void *ctx, const char *task, const char *method, json_t *args, json_t **out, char **suspend,
			    struct err *e)
{
	(void)suspend;
	if (!method && strcmp(task, "docker") == 0) {
		struct run_host *h = ctx;
		const struct docker_local_cfg cfg = {getenv("ACCORD_DOCKER_COMMAND"), getenv("ACCORD_DOCKER_NETWORK"),
						     getenv("ACCORD_DOCKER_RUN_OPTIONS")};
		return docker_local_run(&h->host, &cfg, args, out, e);
	}
	if (method)
		return err_set(e, ERR_UNAVAILABLE, "Task '%s' (%s.%s) is not available when running locally", task,
			       task, method);
	return err_set(e, ERR_UNAVAILABLE, "Task '%s' is not available when running locally", task);
}

static int host_checkpoint(void *ctx, const char *name, json_t *state, struct err *e)
{
	struct run_host *h = ctx;
	return procdir_write_checkpoint(h->workdir, name, state, e);
}

static bool host_sensitive(void *ctx, const char *value, bool add)
{
	struct run_host *h = ctx;
	return add ? mask_add(&h->sensitive, value) || true : mask_has(&h->sensitive, value);
}

static int host_script_open(void *ctx, const char *engine, int *fd, struct err *e)
{
	struct run_host *h = ctx;
	return script_hosts_open(&h->scripts, engine, fd, e);
}

static void host_script_lost(void *ctx, const char *engine)
{
	struct run_host *h = ctx;
	script_hosts_lost(&h->scripts, engine);
}

static void tool_line(void *ctx, const char *text)
{
	run_log_line(ctx, FLOW_INFO, text);
}

static void tool_event(void *ctx, const char *type, json_t *data)
{
	write_event(ctx, type, data);
}

static int host_tool_run(void *ctx, const struct flow_tool *t, struct flow_tool_result *r, struct err *e)
{
	struct run_host *h = ctx;
	fflush(stdout);
	const struct tool_sink out = {tool_line, tool_event, h};
	return tool_run(h->workdir, t, &out, r, e);
}

static const struct flow_host_ops ops_events = {
    .log = host_log,
    .event = host_event,
    .server_task = host_server_task,
    .checkpoint = host_checkpoint,
    .sensitive = host_sensitive,
    .script_open = host_script_open,
    .script_lost = host_script_lost,
    .tool_run = host_tool_run,
    .tool_event = tool_event,
};

/* Without --events no event is built at all. */
static const struct flow_host_ops ops_quiet = {
    .log = host_log,
    .server_task = host_server_task,
    .checkpoint = host_checkpoint,
    .sensitive = host_sensitive,
    .script_open = host_script_open,
    .script_lost = host_script_lost,
    .tool_run = host_tool_run,
    .tool_event = tool_event,
};

void run_host_init(struct run_host *h, const char *workdir, FILE *events, int debug)
{
	h->host.ops = events ? &ops_events : &ops_quiet;
	h->host.ctx = h;
	h->host.workdir = workdir;
	h->host.debug = debug != 0;
	h->events = events;
	h->workdir = (char *)workdir;
	h->sensitive = (struct mask){0};
	script_hosts_init(&h->scripts, workdir);
}

void run_host_cleanup(struct run_host *h)
{
	script_hosts_cleanup(&h->scripts);
	mask_cleanup(&h->sensitive);
}
