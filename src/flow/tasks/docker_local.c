/* The docker task run by `accord run` (docker_local.h). */
#include "flow/tasks/docker_local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/docker_spec.h"

#define ENV_FILE_MAX (1u << 20)
#define TOOL_PATH "/usr/local/bin:/usr/bin:/bin"

struct local_run {
	const struct flow_host *h;
	const struct docker_spec *s;
	bool running; /* the container, not the pull */
	struct buf cap[2];
	bool over;
};

static void on_stream(struct local_run *r, bool err, const char *text)
{
	char line[16500];
	struct err e;
	bool log = !r->running || (err ? r->s->log_err : r->s->log_out);
	bool save = r->running && (err ? r->s->save_err : r->s->save_out);

	if (log) {
		str_fmt_cut(line, sizeof line, "DOCKER: %s", text);
		r->h->ops->log(r->h->ctx, FLOW_INFO, line);
	}
	if (save && (buf_append(&r->cap[err], text, strlen(text), &e) || buf_append(&r->cap[err], "\n", 1, &e)))
		r->over = true;
}

static void on_out(void *ctx, const char *text)
{
	on_stream(ctx, false, text);
}

static void on_err(void *ctx, const char *text)
{
	on_stream(ctx, true, text);
}

/* One engine command; 0 with *code its exit status. */
static int tool(struct local_run *r, const char *exe, struct strv *argv, const struct flow_tool_file *files,
		size_t n_files, int *code, struct err *e)
{
	struct flow_tool t = {.name = "docker",
			      .exe = exe,
			      .argv = argv->v,
			      .files = files,
			      .n_files = n_files,
			      .line = on_out,
			      .err_line = on_err,
			      .line_ctx = r};
	struct flow_tool_result res;

	if (r->h->ops->tool_run(r->h->ctx, &t, &res, e) < 0)
		return -1;
	*code = res.exit_code;
	return 0;
}

static int pull(struct local_run *r, const char *exe, char *const *engine, struct err *e)
{
	struct strv argv = {0};
	int code = 0, rc = 0;

	if (docker_pull_argv(engine, r->s->image, &argv, e))
		return -1;
	for (long long i = 0; i <= r->s->pull_retry_count; i++) {
		if (i)
			nanosleep(&(struct timespec){r->s->pull_retry_interval_ms / 1000,
						     (r->s->pull_retry_interval_ms % 1000) * 1000000},
				  NULL);
		if ((rc = tool(r, exe, &argv, NULL, 0, &code, e)) < 0 || code == 0)
			break;
	}
	strv_free(&argv);
	if (rc == 0 && code != 0)
		rc = err_set(e, ERR_INVALID, "docker: pulling the image failed with exit code %d", code);
	return rc;
}

/* The environment file and the script, as the tool layer's 0600 files (removed after). */
static int files(const struct flow_host *h, const struct docker_spec *s, char **env_text, char **script,
		 struct flow_tool_file *f, size_t *n, struct err *e)
{
	char *file = NULL;
	size_t len = 0;

	*n = 0;
	if (s->env_file && !(file = path_read_beneath(h->workdir, s->env_file, ENV_FILE_MAX, &len, e))) {
		if (e->code == ERR_NOT_FOUND)
			err_set(e, ERR_INVALID, "'envFile' file not found: %s", s->env_file);
		return -1;
	}
	*env_text = docker_env_text(s, file, len, e);
	free(file);
	if (!*env_text)
		return -1;
	if (**env_text)
		f[(*n)++] = (struct flow_tool_file){".concord/docker.env", *env_text, strlen(*env_text)};
	if (s->cmd) {
		if (!(*script = docker_script_text(s)))
			return err_set(e, ERR_INTERNAL, "out of memory");
		f[(*n)++] = (struct flow_tool_file){".concord/docker.sh", *script, strlen(*script)};
	}
	return 0;
}

static int run_container(struct local_run *r, const struct docker_local_cfg *cfg, const char *exe, struct strv *engine,
			 struct err *e)
{
	struct strv extra = {0}, argv = {0};
	struct flow_tool_file f[2];
	char *env_text = NULL, *script = NULL, name[64], env_path[4200], user[48];
	size_t n = 0;
	int code = 0, rc = -1;

	str_fmt_cut(name, sizeof name, "accord-local-%ld-%ld", (long)getpid(), (long)time(NULL));
	str_fmt_cut(env_path, sizeof env_path, "%s/.concord/docker.env", r->h->workdir);
	str_fmt_cut(user, sizeof user, "%u:%u", (unsigned)geteuid(), (unsigned)getegid());
	if (files(r->h, r->s, &env_text, &script, f, &n, e) || docker_words(cfg->run_options, &extra, e) ||
	    docker_run_argv(
		&(struct docker_run_opts){.engine = engine->v,
					  .name = name,
					  .workdir = r->h->workdir,
					  .network = cfg->network,
					  .extra = extra.v,
					  .user = user,
					  .env_path = *env_text ? env_path : NULL,
					  .script_path = r->s->cmd ? DOCKER_WORKSPACE "/.concord/docker.sh" : NULL},
		r->s, &argv, e))
		goto out;
	r->running = true;
	if ((rc = tool(r, exe, &argv, f, n, &code, e)) == 0 && code != 0)
		rc = err_set(e, ERR_INVALID, "Docker process finished with exit code %d", code);
out:
	strv_free(&extra);
	strv_free(&argv);
	if (env_text)
		explicit_bzero(env_text, strlen(env_text));
	free(env_text);
	free(script);
	return rc;
}

int docker_local_run(const struct flow_host *h, const struct docker_local_cfg *cfg, json_t *in, json_t **out,
		     struct err *e)
{
	struct docker_spec s;
	struct strv engine = {0};
	struct local_run r = {.h = h, .s = &s};
	char *exe = NULL, zero = '\0';
	int rc = -1;

	*out = NULL;
	if (!h->ops->tool_run)
		return err_set(e, ERR_UNAVAILABLE, "docker: programs cannot run here");
	if (docker_spec_parse(in, &s, e) ||
	    docker_words(cfg->command && *cfg->command ? cfg->command : "docker", &engine, e))
		goto out;
	if (!engine.n) {
		err_set(e, ERR_UNAVAILABLE, "docker: no container engine is configured (ACCORD_DOCKER_COMMAND)");
		goto out;
	}
	if (!(exe = docker_engine_path(engine.v[0], TOOL_PATH))) {
		err_set(e, ERR_UNAVAILABLE,
			"docker: the container engine '%s' is not installed (ACCORD_DOCKER_COMMAND)", engine.v[0]);
		goto out;
	}
	buf_init(&r.cap[0], 64u << 20);
	buf_init(&r.cap[1], 64u << 20);
	if ((s.force_pull && pull(&r, exe, engine.v, e)) || run_container(&r, cfg, exe, &engine, e))
		goto out;
	if (r.over) {
		err_set(e, ERR_TOO_LARGE, "docker: the saved output is larger than 64 MiB");
		goto out;
	}
	if (buf_append(&r.cap[0], &zero, 1, e) || buf_append(&r.cap[1], &zero, 1, e))
		goto out;
	if (!(*out = docker_result(&s, r.cap[0].data, r.cap[1].data))) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	rc = 0;
out:
	buf_cleanup(&r.cap[0]);
	buf_cleanup(&r.cap[1]);
	strv_free(&engine);
	free(exe);
	return rc;
}
