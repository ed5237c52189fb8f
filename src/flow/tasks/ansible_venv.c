/* The ansible task's `virtualenv` (ansible_venv.h). */
#include "flow/tasks/ansible_venv.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/oom.h"
#include "base/str.h"
#include "base/strv.h"
#include "flow/vm_internal.h"

#define PYTHON_EXE "/usr/bin/python3"

struct venv_run {
	struct task_ctx *c;
	char error[512]; /* pip's last "ERROR: …" line */
};

static void on_line(void *ctx, const char *text)
{
	struct venv_run *v = ctx;

	vm_log(v->c->vm, FLOW_INFO, "%s", text);
	if (strncasecmp(text, "ERROR:", 6) == 0)
		str_fmt_cut(v->error, sizeof v->error, "%s", text);
}

/* Runs exe with argv through the tool layer: 0 with *code its exit status, or -1. */
static int run(struct venv_run *v, const char *exe, char *const *argv, int *code, struct err *e)
{
	struct flow_tool t = {.name = "ansible", .exe = exe, .argv = argv, .line = on_line, .line_ctx = v};
	struct flow_tool_result res;
	int rc = v->c->h->ops->tool_run(v->c->h->ctx, &t, &res, e);
	*code = res.timed_out ? 124 : res.exit_code;
	return rc;
}

/* packages as pip arguments (after "--") and as one text for messages. */
static int packages(json_t *list, struct strv *argv, char *text, size_t cap, struct err *e)
{
	json_t *p;
	size_t i, used = 0;

	if (list && !json_is_array(list))
		return err_set(e, ERR_INVALID, "ansible: virtualenv 'packages' must be a list of package names");
	json_array_foreach(list, i, p)
	{
		const char *s = json_string_value(p);
		if (!s || !*s || *s == '-' || strpbrk(s, " \t\r\n"))
			return err_set(e, ERR_INVALID, "ansible: invalid virtualenv package '%s'", s ? s : "(not a string)");
		if (strv_add(argv, "%s", s) < 0)
			return oom_fail(e);
		used += (size_t)snprintf(text + used, used < cap ? cap - used : 0, "%s%s", i ? ", " : "", s);
	}
	return 0;
}

static int install(struct venv_run *v, json_t *venv, const char *ve, struct err *e)
{
	json_t *index = json_object_get(venv, "indexUrl");
	struct strv argv = {0};
	char python[4400], names[1024] = "";
	int code = 0, rc = -1;

	if (index && !json_is_null(index) &&
	    (!json_is_string(index) || !json_string_length(index) || *json_string_value(index) == '-'))
		return err_set(e, ERR_INVALID, "ansible: virtualenv 'indexUrl' must be a URL");
	str_fmt_cut(python, sizeof python, "%s/bin/python3", ve);
	/* the full path: python finds its virtualenv from its argv[0] */
	if (strv_add(&argv, "%s", python) < 0 || strv_add(&argv, "-m") < 0 || strv_add(&argv, "pip") < 0 ||
	    strv_add(&argv, "install") < 0 || strv_add(&argv, "--no-input") < 0 ||
	    strv_add(&argv, "--disable-pip-version-check") < 0 || strv_add(&argv, "--no-cache-dir") < 0 ||
	    (json_is_string(index) &&
	     (strv_add(&argv, "--index-url") < 0 || strv_add(&argv, "%s", json_string_value(index)) < 0)) ||
	    strv_add(&argv, "--") < 0) {
		oom_fail(e);
		goto out;
	}
	if (packages(json_object_get(venv, "packages"), &argv, names, sizeof names, e) < 0)
		goto out;
	if (!names[0]) {
		rc = 0;
		goto out;
	}
	vm_log(v->c->vm, FLOW_INFO, "ansible: installing into the virtualenv: %s", names);
	if ((rc = run(v, python, argv.v, &code, e)) == 0 && code != 0)
		rc = err_set(e, ERR_INVALID, "ansible: virtualenv: pip could not install %s (exit code %d)%s%s", names,
			     code, v->error[0] ? ": " : "", v->error);
out:
	strv_free(&argv);
	return rc;
}

int ansible_venv_make(struct task_ctx *c, json_t *venv, const char *ve, struct err *e)
{
	struct venv_run v = {.c = c};
	char *const argv[] = {"python3", "-m", "venv", "--system-site-packages", "--without-pip", (char *)ve, NULL};
	int code = 0;

	if (!json_is_object(venv))
		return err_set(e, ERR_INVALID, "ansible: Invalid 'virtualenv' value. Expected a virtualenv definition "
					       "{packages, indexUrl}");
	if (access(PYTHON_EXE, X_OK) != 0)
		return err_set(e, ERR_UNAVAILABLE, "ansible: virtualenv needs " PYTHON_EXE " (apt-get install python3-venv)");
	if (run(&v, PYTHON_EXE, argv, &code, e) < 0)
		return -1;
	if (code != 0)
		return err_set(e, ERR_INVALID,
			       "ansible: virtualenv: python3 -m venv failed (exit code %d): is python3-venv installed?",
			       code);
	return install(&v, venv, ve, e);
}
