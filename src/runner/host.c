/* The flow host of `accord runner`: log lines on stdout, events and server-task calls as
 * frames on the IPC socket (docs/operations.md "Runner protocol"). */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/oom.h"
#include "base/uuid.h"
#include "flow/log_line.h"
#include "flow/procdir.h"
#include "runner/runner.h"
#include "runner/tool.h"

void runner_host_add_sensitive(struct runner_host *h, json_t *list)
{
	mask_add_list(&h->sensitive, list);
}

void runner_log(struct runner_host *h, enum flow_level level, const char *msg)
{
	if (level == FLOW_DEBUG && h && !h->host.debug)
		return;
	flow_log_line(stdout, level, msg, h ? h->workdir : NULL, h ? &h->sensitive : NULL);
}

int runner_send(struct runner_host *h, json_t *v)
{
	struct err e;
	int rc;

	if (!v)
		return -1;
	/* Log lines written before a frame reach the supervisor first. */
	fflush(stdout);
	rc = frame_write(h->ipc, v, &e);
	json_decref(v);
	return rc;
}

static void host_log(void *ctx, enum flow_level level, const char *msg)
{
	runner_log(ctx, level, msg);
}

/* An event of type (NULL: ELEMENT), masked. */
static void send_event(struct runner_host *h, const char *type, json_t *data)
{
	json_t *copy = h->sensitive.n || h->sensitive.lost ? json_deep_copy(data) : json_incref(data), *f;

	if (!copy)
		return; /* never send unmasked data */
	if (h->sensitive.n || h->sensitive.lost)
		mask_json(&h->sensitive, copy);
	f = json_pack("{s:s, s:o, s:I}", "type", "event", "data", copy, "date", (json_int_t)dt_now_ms());
	if (f && type)
		json_object_set_new(f, "eventType", json_string(type));
	runner_send(h, f);
}

static void host_event(void *ctx, json_t *data)
{
	send_event(ctx, NULL, data);
}

/* Asks the supervisor to run a server task and waits for its answer. */
static int host_server_task(void *ctx, const char *task, const char *method, json_t *args, json_t **out, char **suspend,
			    struct err *e)
{
	struct runner_host *h = ctx;
	long long id = h->next_call++;
	json_t *req = json_pack("{s:s, s:I, s:s, s:O}", "type", "task", "id", (json_int_t)id, "task", task, "args",
				args ? args : json_null());
	json_t *reply = NULL, *v;
	const char *msg;
	int rc;

	*out = NULL;
	if (method)
		json_object_set_new(req, "method", json_string(method));
	if (suspend)
		json_object_set_new(req, "suspendable", json_true());
	if (runner_send(h, req) < 0)
		return err_set(e, ERR_UNAVAILABLE, "Task '%s': the server is not reachable", task);
	rc = frame_read(h->ipc, &h->in, &reply, e);
	if (rc != 1)
		return rc < 0 ? -1 : err_set(e, ERR_UNAVAILABLE, "Task '%s': the server went away", task);
	if (strcmp(json_string_value(json_object_get(reply, "type")), "task_result") != 0 ||
	    json_integer_value(json_object_get(reply, "id")) != id) {
		json_decref(reply);
		return err_set(e, ERR_INTERNAL, "Task '%s': unexpected answer from the server", task);
	}
	if ((msg = json_string_value(json_object_get(reply, "error")))) {
		rc = err_set(e, ERR_UNAVAILABLE, "%s", msg);
	} else {
		v = json_object_get(reply, "out");
		*out = json_incref(v ? v : json_null());
		rc = 0;
		if (json_is_array(json_object_get(reply, "sensitive")))
			runner_host_add_sensitive(h, json_object_get(reply, "sensitive"));
		if (suspend && (msg = json_string_value(json_object_get(reply, "suspend"))) &&
		    !(*suspend = strdup(msg)))
			rc = oom_fail(e);
	}
	json_decref(reply);
	return rc;
}

/* Writes the checkpoint state, then has the supervisor snapshot the working directory
 * (it is consistent while the flow waits here) and waits for its answer. */
static int host_checkpoint(void *ctx, const char *name, json_t *state, struct err *e)
{
	struct runner_host *h = ctx;
	char id[UUID_STR_LEN];
	json_t *reply = NULL;
	const char *type, *msg, *got;
	int rc;

	if (runner_host_files(h, e) < 0 || procdir_write_checkpoint(h->workdir, name, state, e) < 0)
		return -1;
	uuid_v4(id);
	if (runner_send(h, json_pack("{s:s, s:s, s:s}", "type", "checkpoint", "name", name, "id", id)) < 0)
		return err_set(e, ERR_UNAVAILABLE, "Checkpoint '%s': the server is not reachable", name);
	rc = frame_read(h->ipc, &h->in, &reply, e);
	if (rc != 1)
		return rc < 0 ? -1 : err_set(e, ERR_UNAVAILABLE, "Checkpoint '%s': the server went away", name);
	type = json_string_value(json_object_get(reply, "type"));
	got = json_string_value(json_object_get(reply, "id"));
	if ((msg = json_string_value(json_object_get(reply, "error"))))
		rc = err_set(e, ERR_UNAVAILABLE, "Checkpoint '%s': %s", name, msg);
	else if (!type || strcmp(type, "checkpoint_done") != 0 || !got || strcmp(got, id) != 0)
		rc = err_set(e, ERR_INTERNAL, "Checkpoint '%s': unexpected answer from the server", name);
	else
		rc = 0;
	json_decref(reply);
	return rc;
}

/* A value the flow marked sensitive: masked here, and sent to the supervisor, which keeps
 * it in the process's sealed list so that a resumed runner masks it too. */
static bool host_sensitive(void *ctx, const char *value, bool add)
{
	struct runner_host *h = ctx;
	if (!add)
		return mask_has(&h->sensitive, value);
	if (mask_add(&h->sensitive, value))
		runner_send(h, json_pack("{s:s, s:[s]}", "type", "sensitive", "values", value));
	return true;
}

static int host_script_open(void *ctx, const char *engine, int *fd, struct err *e)
{
	struct runner_host *h = ctx;
	return script_hosts_open(&h->scripts, engine, fd, e);
}

static void host_script_lost(void *ctx, const char *engine)
{
	struct runner_host *h = ctx;
	script_hosts_lost(&h->scripts, engine);
}

static void tool_line(void *ctx, const char *text)
{
	runner_log(ctx, FLOW_INFO, text);
}

static void tool_event(void *ctx, const char *type, json_t *data)
{
	send_event(ctx, type, data);
}

static int host_tool_run(void *ctx, const struct flow_tool *t, struct flow_tool_result *r, struct err *e)
{
	struct runner_host *h = ctx;
	fflush(stdout);
	const struct tool_sink out = {tool_line, tool_event, h};
	if (runner_host_files(h, e) < 0)
		return -1;
	return tool_run(h->workdir, t, &out, r, e);
}

int runner_host_files(struct runner_host *h, struct err *e)
{
	if (!h->files_pending)
		return 0;
	if (memdir_write(&h->files, h->workdir, e) < 0) {
		err_prefix(e, "cannot write the working directory");
		return -1;
	}
	h->files_pending = false;
	memdir_cleanup(&h->files);
	return 0;
}

static int host_files(void *ctx, struct err *e)
{
	return runner_host_files(ctx, e);
}

static const struct flow_host_ops ops = {
    .log = host_log,
    .event = host_event,
    .server_task = host_server_task,
    .checkpoint = host_checkpoint,
    .sensitive = host_sensitive,
    .script_open = host_script_open,
    .script_lost = host_script_lost,
    .tool_run = host_tool_run,
    .tool_event = tool_event,
    .files = host_files,
};

void runner_host_init(struct runner_host *h, const char *workdir, int ipc)
{
	memset(h, 0, sizeof *h);
	h->host.ops = &ops;
	h->host.ctx = h;
	h->host.workdir = workdir;
	h->workdir = workdir;
	h->ipc = ipc;
	h->next_call = 1;
	frame_reader_init(&h->in);
	script_hosts_init(&h->scripts, workdir);
}

void runner_host_cleanup(struct runner_host *h)
{
	script_hosts_cleanup(&h->scripts);
	memdir_cleanup(&h->files);
	frame_reader_cleanup(&h->in);
	mask_cleanup(&h->sensitive);
}

void runner_host_flush(struct runner_host *h)
{
	(void)h;
	fflush(stdout);
}
