/* The ansible task's `dockerImage` (ansible_docker.h). */
#include "flow/tasks/ansible_docker.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/docker_spec.h"

#define NO_ANSIBLE 127
#define EXIT_PREFIX "Docker process finished with exit code "

/* A word for /bin/sh: single-quoted, quotes inside closed and escaped. */
static int quote(struct buf *b, const char *w, struct err *e)
{
	if (buf_append_char(b, '\'', e) < 0)
		return -1;
	for (; *w; w++)
		if ((*w == '\'' ? buf_append_str(b, "'\\''", e) : buf_append_char(b, *w, e)) < 0)
			return -1;
	return buf_append_str(b, "' ", e);
}

/* The container's command: Ansible when the image has it, else exit NO_ANSIBLE saying so. */
static char *command(const char *image, char *const *argv, struct err *e)
{
	struct buf b;
	char *out = NULL;

	buf_init(&b, 1u << 20);
	if (buf_printf(&b, e,
		       "command -v ansible-playbook >/dev/null 2>&1 || { echo \"ansible: the image %s has no "
		       "ansible-playbook\" >&2; exit %d; }\nexec ",
		       image, NO_ANSIBLE) < 0)
		goto out;
	for (size_t i = 0; argv[i]; i++)
		if (quote(&b, argv[i], e) < 0)
			goto out;
	out = buf_detach(&b, NULL);
out:
	buf_cleanup(&b);
	return out;
}

/* The step's `in` for the docker task: NEW, or NULL with e set.  The container keeps the
 * image's PATH. */
static json_t *docker_in(const char *image, const struct flow_tool *t, struct err *e)
{
	json_t *env = json_object(), *in = NULL;
	char *cmd = command(image, t->argv, e);

	for (size_t i = 0; env && t->env && t->env[i]; i++) {
		const char *eq = strchr(t->env[i], '=');
		char *k = eq ? strndup(t->env[i], (size_t)(eq - t->env[i])) : NULL;
		if (k && strcmp(k, "PATH") != 0)
			json_object_set_new(env, k, json_string(eq + 1));
		free(k);
	}
	if (cmd && env)
		in = json_pack("{s:s, s:s, s:O, s:b, s:b, s:b}", "image", image, "cmd", cmd, "env", env, "forcePull", 0,
			       "logOut", 1, "logErr", 1);
	if (!in && !e->code)
		oom_fail(e);
	json_decref(env);
	free(cmd);
	return in;
}

static int files_write(const char *workdir, const struct flow_tool *t, size_t *n, struct err *e)
{
	for (*n = 0; *n < t->n_files; (*n)++) {
		const struct flow_tool_file *f = &t->files[*n];
		const char *slash = strrchr(f->path, '/');
		char parent[4300];
		str_fmt_cut(parent, sizeof parent, "%.*s", slash ? (int)(slash - f->path) : 0, f->path);
		if ((parent[0] && path_mkdirs_beneath(workdir, parent, 0700, e) < 0) ||
		    path_write_beneath(workdir, f->path, f->data, f->len, 0600, e) < 0)
			return -1;
	}
	return 0;
}

/* Removes the first n secret files, and their folders when that leaves them empty. */
static void files_remove(const char *workdir, const struct flow_tool *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct err e = {0};
		char *p = path_join_safe(workdir, t->files[i].path, &e), *slash;
		if (!p)
			continue;
		unlink(p);
		if ((slash = strrchr(p, '/')) && slash != p) {
			*slash = '\0';
			rmdir(p);
		}
		free(p);
	}
}

int ansible_docker_run(struct task_ctx *c, const char *image, const struct flow_tool *t, int *code, struct err *e)
{
	const struct flow_host *h = c->h;
	json_t *in = docker_in(image, t, e), *out = NULL;
	size_t n = 0;
	int rc = -1;

	*code = 0;
	if (!in)
		return -1;
	if (files_write(h->workdir, t, &n, e) == 0) {
		rc = h->ops->server_task(h->ctx, "docker", NULL, in, &out, NULL, e);
		/* Ansible's own failure is an exit status of the container, not an error */
		if (rc < 0 && strncmp(e->msg, EXIT_PREFIX, strlen(EXIT_PREFIX)) == 0) {
			const char *num = e->msg + strlen(EXIT_PREFIX);
			int64_t v = 1;
			struct err ignored;
			if (str_to_i64((struct str){num, strlen(num)}, 1, 255, &v, "exit code", &ignored) < 0)
				v = 1;
			*code = (int)v;
			*e = (struct err){0};
			rc = 0;
		}
	}
	files_remove(h->workdir, t, n);
	json_decref(in);
	json_decref(out);
	if (rc == 0 && *code == NO_ANSIBLE)
		rc = err_set(e, ERR_INVALID,
			     "ansible: the image '%s' has no ansible-playbook: use an image with Python and Ansible "
			     "(Concord recommends one based on walmartlabs/concord-ansible)",
			     image);
	return rc;
}

static void event_line(struct task_ctx *c, const char *line)
{
	json_t *v = json_loads(line, JSON_ALLOW_NUL, NULL), *data = json_object_get(v, "data");
	const char *sub = json_string_value(json_object_get(v, "eventType"));

	if (json_is_object(v) && jsonx_strip_nul(v) >= 0) { /* NULs as the tool layer's channel */
		if (sub && json_is_object(data) && strncmp(sub, "ANSIBLE_", 8) == 0 && sub[8])
			c->h->ops->tool_event(c->h->ctx, sub, data);
		else
			c->h->ops->tool_event(c->h->ctx, "ANSIBLE", v);
	}
	json_decref(v);
}

void ansible_docker_events(struct task_ctx *c, const char *dir)
{
	char path[4300], *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (!c->h->ops->tool_event)
		return;
	str_fmt_cut(path, sizeof path, "%s/events.jsonl", dir);
	if (!(f = fopen(path, "re")))
		return;
	while (getline(&line, &cap, f) > 0)
		event_line(c, line);
	free(line);
	fclose(f);
}
