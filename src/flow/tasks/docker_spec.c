/* The docker task's parameters and command lines (docker_spec.h). */
#include "flow/tasks/docker_spec.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/task.h"
#include "flow/value.h"

#define DOCKER_ARG_MAX 1024
#define DOCKER_HOSTS_MAX 256
#define DOCKER_ENV_MAX 1024
#define DOCKER_RETRY_MAX 100
#define DOCKER_INTERVAL_MAX_MS 3600000

static int opt_int(json_t *in, const char *key, long long def, long long max, long long *out, struct err *e)
{
	int64_t n;

	if (task_opt_long(in, key, def, &n, e) < 0)
		return -1;
	if (n < 0 || n > max)
		return err_set(e, ERR_INVALID, "'%s' must be between 0 and %lld, got %lld", key, max, (long long)n);
	*out = n;
	return 0;
}

/* A word the engine gets as one argument: not empty, no blank or control character, not
 * taken for an option. */
static bool plain_word(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > DOCKER_ARG_MAX || s[0] == '-')
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* An image reference ([registry[:port]/]name[:tag][@digest]): its characters only, and no
 * transport of the engine ("docker-archive:/path", "dir:/path", "oci:…") that would have it
 * read an image from a path of the host. */
static bool image_ok(const char *image)
{
	static const char *const transports[] = {"docker", "docker-archive",	 "docker-daemon", "oci", "oci-archive",
						 "dir",	   "containers-storage", "ostree",	  "sif", "tarball"};
	size_t pre = strcspn(image, ":/");

	if (!plain_word(image) ||
	    strspn(image, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:@-") != strlen(image))
		return false;
	if (image[pre] == ':')
		for (size_t i = 0; i < sizeof transports / sizeof transports[0]; i++)
			if (strlen(transports[i]) == pre && strncmp(image, transports[i], pre) == 0)
				return false;
	return true;
}

static int parse_hosts(json_t *in, struct docker_spec *s, struct err *e)
{
	json_t *v = json_object_get(in, "hosts"), *h;
	size_t i;

	s->hosts = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v))
		return err_set(e, ERR_INVALID, "'hosts' must be a list of \"name:address\" strings, got %s",
			       value_class_name(v));
	if (json_array_size(v) > DOCKER_HOSTS_MAX)
		return err_set(e, ERR_INVALID, "'hosts' has more than %d entries", DOCKER_HOSTS_MAX);
	json_array_foreach(v, i, h)
	{
		const char *t = json_string_value(h);
		if (!t || !plain_word(t) || !strchr(t, ':'))
			return err_set(e, ERR_INVALID, "'hosts' entry %zu must be a \"name:address\" string", i);
	}
	s->hosts = v;
	return 0;
}

static int parse_env(json_t *in, struct docker_spec *s, struct err *e)
{
	json_t *v = json_object_get(in, "env");

	s->env = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return err_set(e, ERR_INVALID, "'env' must be a map of variables, got %s", value_class_name(v));
	if (json_object_size(v) > DOCKER_ENV_MAX)
		return err_set(e, ERR_INVALID, "'env' has more than %d variables", DOCKER_ENV_MAX);
	s->env = v;
	return 0;
}

static int parse_strings(json_t *in, struct docker_spec *s, struct err *e)
{
	json_t *image = json_object_get(in, "image");

	if (!image || json_is_null(image))
		return err_set(e, ERR_INVALID, "the mandatory parameter 'image' is missing");
	if (!json_is_string(image) || !image_ok(json_string_value(image)))
		return err_set(
		    e, ERR_INVALID,
		    "'image' must be an image reference ([registry/]name[:tag][@digest]: letters, digits and "
		    "._/:@-, not starting with '-', no transport such as docker-archive:, at most %d bytes)",
		    DOCKER_ARG_MAX);
	s->image = json_string_value(image);
	if (task_opt_str(in, "cmd", &s->cmd, e) < 0 || task_opt_str(in, "envFile", &s->env_file, e) < 0)
		return -1;
	if (s->cmd && !*s->cmd)
		s->cmd = NULL;
	if (s->env_file && !path_is_safe_relative(s->env_file))
		return err_set(e, ERR_INVALID, "'envFile' must be a path inside the working directory: %s",
			       s->env_file);
	return 0;
}

int docker_spec_parse(json_t *in, struct docker_spec *s, struct err *e)
{
	memset(s, 0, sizeof *s);
	if (!json_is_object(in))
		return err_set(e, ERR_INVALID, "docker: the task's input must be a map");
	if (parse_strings(in, s, e) || parse_env(in, s, e) || parse_hosts(in, s, e) ||
	    task_opt_bool(in, "forcePull", true, &s->force_pull, e) ||
	    task_opt_bool(in, "debug", false, &s->debug, e) ||
	    task_opt_bool(in, "redirectErrorStream", false, &s->redirect_err, e) ||
	    task_opt_bool(in, "logOut", true, &s->log_out, e) || task_opt_bool(in, "logErr", true, &s->log_err, e) ||
	    task_opt_bool(in, "saveOut", false, &s->save_out, e) ||
	    task_opt_bool(in, "saveErr", false, &s->save_err, e) ||
	    opt_int(in, "pullRetryCount", 3, DOCKER_RETRY_MAX, &s->pull_retry_count, e) ||
	    opt_int(in, "pullRetryInterval", 10000, DOCKER_INTERVAL_MAX_MS, &s->pull_retry_interval_ms, e)) {
		err_prefix(e, "docker");
		return -1;
	}
	return 0;
}

/* An environment variable's name as the engines accept it in a file. */
static bool env_name_ok(const char *p, size_t n)
{
	if (n == 0 || (p[0] >= '0' && p[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z') || (p[i] >= '0' && p[i] <= '9') ||
		      p[i] == '_'))
			return false;
	return true;
}

static int env_file_lines(const char *p, size_t len, struct buf *b, struct err *e)
{
	size_t line = 1;

	while (len) {
		const char *nl = memchr(p, '\n', len);
		size_t n = nl ? (size_t)(nl - p) : len;
		struct str t = str_trim((struct str){p, n});
		const char *eq = t.len ? memchr(t.p, '=', t.len) : NULL;

		if (t.len && t.p[0] != '#' && eq) {
			if (!env_name_ok(t.p, (size_t)(eq - t.p)))
				return err_set(e, ERR_INVALID, "docker: 'envFile' line %zu: not a variable name", line);
			if (buf_append(b, t.p, t.len, e) || buf_append(b, "\n", 1, e))
				return -1;
		}
		p += n + (nl ? 1 : 0);
		len -= n + (nl ? 1 : 0);
		line++;
	}
	return 0;
}

static int env_map_lines(const struct docker_spec *s, struct buf *b, struct err *e)
{
	const char *k;
	json_t *v;

	json_object_foreach(s->env, k, v)
	{
		char *text;
		int rc;
		if (json_is_null(v))
			continue;
		if (!env_name_ok(k, strlen(k)))
			return err_set(e, ERR_INVALID, "docker: 'env': '%s' is not a variable name", k);
		if (!(text = task_text(v)))
			return err_set(e, ERR_INTERNAL, "out of memory");
		if (strchr(text, '\n') || strchr(text, '\r')) {
			free(text);
			return err_set(e, ERR_INVALID,
				       "docker: 'env': the value of %s holds a line break (not supported)", k);
		}
		rc = buf_printf(b, e, "%s=%s\n", k, text);
		free(text);
		if (rc)
			return -1;
	}
	return 0;
}

char *docker_env_text(const struct docker_spec *s, const char *file_text, size_t file_len, struct err *e)
{
	struct buf b;

	buf_init(&b, 0);
	if ((file_text && env_file_lines(file_text, file_len, &b, e)) || (s->env && env_map_lines(s, &b, e)) ||
	    buf_append(&b, "", 1, e)) {
		buf_cleanup(&b);
		return NULL;
	}
	return b.data;
}

char *docker_script_text(const struct docker_spec *s)
{
	struct buf b;
	struct err e;

	buf_init(&b, 0);
	if (buf_printf(&b, &e, "cd %s\n%s\n", DOCKER_WORKSPACE, s->cmd ? s->cmd : "")) {
		buf_cleanup(&b);
		return NULL;
	}
	return b.data;
}

static int add_all(struct strv *argv, char *const *words)
{
	for (; words && *words; words++)
		if (strv_add(argv, "%s", *words))
			return -1;
	return 0;
}

static int run_options(const struct docker_run_opts *o, struct strv *a)
{
	if (add_all(a, o->engine) || strv_add(a, "run") || strv_add(a, "--rm") || strv_add(a, "--name") ||
	    strv_add(a, "%s", o->name) || strv_add(a, "-v") || strv_add(a, "%s:%s", o->workdir, DOCKER_WORKSPACE) ||
	    strv_add(a, "-w") || strv_add(a, DOCKER_WORKSPACE) || strv_add(a, "--cap-drop") || strv_add(a, "ALL") ||
	    strv_add(a, "--security-opt") || strv_add(a, "no-new-privileges"))
		return -1;
	if (o->network && *o->network && (strv_add(a, "--network") || strv_add(a, "%s", o->network)))
		return -1;
	if (o->user && (strv_add(a, "--user") || strv_add(a, "%s", o->user)))
		return -1;
	if (add_all(a, o->extra))
		return -1;
	if ((o->cpus && (strv_add(a, "--cpus") || strv_add(a, "%s", o->cpus))) ||
	    (o->memory && (strv_add(a, "--memory") || strv_add(a, "%s", o->memory))))
		return -1;
	if (o->env_path && (strv_add(a, "--env-file") || strv_add(a, "%s", o->env_path)))
		return -1;
	return 0;
}

int docker_run_argv(const struct docker_run_opts *o, const struct docker_spec *s, struct strv *argv, struct err *e)
{
	size_t i;
	json_t *h;

	if (strpbrk(o->workdir, ":,") || (o->env_path && strchr(o->env_path, ',')))
		return err_set(e, ERR_INVALID, "docker: the working directory's path holds ':' or ',': %s", o->workdir);
	if (run_options(o, argv))
		goto oom;
	json_array_foreach(s->hosts, i,
			   h) if (strv_add(argv, "--add-host") || strv_add(argv, "%s", json_string_value(h))) goto oom;
	if (o->script_path && (strv_add(argv, "--entrypoint") || strv_add(argv, "/bin/sh")))
		goto oom;
	if (strv_add(argv, "%s", s->image) || (o->script_path && strv_add(argv, "%s", o->script_path)))
		goto oom;
	return 0;
oom:
	return err_set(e, ERR_INTERNAL, "out of memory");
}

int docker_pull_argv(char *const *engine, const char *image, struct strv *argv, struct err *e)
{
	if (add_all(argv, engine) || strv_add(argv, "pull") || strv_add(argv, "%s", image))
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

int docker_kill_argv(char *const *engine, const char *name, struct strv *argv, struct err *e)
{
	if (add_all(argv, engine) || strv_add(argv, "kill") || strv_add(argv, "%s", name))
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

int docker_words(const char *setting, struct strv *out, struct err *e)
{
	const char *p = setting ? setting : "";

	while (*p) {
		size_t n;
		p += strspn(p, " \t");
		n = strcspn(p, " \t");
		if (n && strv_add(out, "%.*s", (int)n, p))
			return err_set(e, ERR_INTERNAL, "out of memory");
		p += n;
	}
	return 0;
}

char *docker_engine_path(const char *word, const char *path)
{
	char cand[4096];

	if (strchr(word, '/'))
		return access(word, X_OK) == 0 ? strdup(word) : NULL;
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		if (n && str_fmt(cand, sizeof cand, "%.*s/%s", (int)n, p, word) == 0 && access(cand, X_OK) == 0)
			return strdup(cand);
		p += n + (p[n] == ':');
	}
	return NULL;
}

json_t *docker_result(const struct docker_spec *s, const char *out, const char *err)
{
	return json_pack("{s:b, s:o, s:o}", "ok", 1, "stdout",
			 s->save_out ? jsonx_string_lossy(out ? out : "") : json_null(), "stderr",
			 jsonx_string_lossy(s->save_err && err ? err : ""));
}
