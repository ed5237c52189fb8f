/* The ansible task's `auth.krb5` (ansible_krb5.h). */
#include "flow/tasks/ansible_krb5.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/oom.h"
#include "base/str.h"
#include "flow/vm_internal.h"

#define KINIT_EXE "/usr/bin/kinit"

struct kinit_run {
	struct task_ctx *c;
	char last[512]; /* kinit's last output line */
};

static void on_line(void *ctx, const char *text)
{
	struct kinit_run *k = ctx;

	vm_log(k->c->vm, FLOW_INFO, "%s", text);
	if (*text)
		str_fmt_cut(k->last, sizeof k->last, "%s", text);
}

static const char *field(json_t *krb5, const char *key)
{
	json_t *v = json_object_get(krb5, key);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

int ansible_krb5_kinit(struct task_ctx *c, json_t *krb5, const char *run_rel, const char *ccache, struct err *e)
{
	const struct flow_host *h = c->h;
	struct kinit_run k = {.c = c};
	const char *user = field(krb5, "user"), *password = field(krb5, "password");
	char pw_rel[4300], cc[4400], *pw = NULL;
	struct flow_tool_result res;
	int rc;

	if (!json_is_object(krb5) || !user || !password)
		return err_set(e, ERR_INVALID, "ansible: auth.krb5 needs 'user' and 'password'");
	if (h->ops->sensitive)
		h->ops->sensitive(h->ctx, password, true);
	if (*user == '-' || strpbrk(user, " \t\r\n"))
		return err_set(e, ERR_INVALID, "ansible: bad auth.krb5 user '%s'", user);
	if (access(KINIT_EXE, X_OK) != 0)
		return err_set(e, ERR_UNAVAILABLE,
			       "ansible: auth.krb5 needs " KINIT_EXE ", not installed on this node: install the Debian "
			       "package 'krb5-user' (apt-get install krb5-user)");
	if (asprintf(&pw, "%s\n", password) < 0)
		return oom_fail(e);
	str_fmt_cut(pw_rel, sizeof pw_rel, "%s/krb5_password", run_rel);
	str_fmt_cut(cc, sizeof cc, "FILE:%s", ccache);
	{
		char *const argv[] = {"kinit", "-c", cc, (char *)user, NULL};
		const struct flow_tool_file files[] = {{pw_rel, pw, strlen(pw)}};
		struct flow_tool t = {.name = "ansible",
				      .exe = KINIT_EXE,
				      .argv = argv,
				      .files = files,
				      .n_files = 1,
				      .stdin_path = pw_rel,
				      .timeout_ms = 60000,
				      .line = on_line,
				      .line_ctx = &k};
		vm_log(c->vm, FLOW_INFO, "ansible: getting a Kerberos ticket for '%s'", user);
		rc = h->ops->tool_run(h->ctx, &t, &res, e);
	}
	sodium_memzero(pw, strlen(pw));
	free(pw);
	if (rc == 0 && (res.exit_code != 0 || res.timed_out))
		rc = err_set(e, ERR_INVALID, "ansible: kinit failed for '%s' (exit code %d)%s%s", user,
			     res.timed_out ? 124 : res.exit_code, k.last[0] ? ": " : "", k.last);
	return rc;
}
