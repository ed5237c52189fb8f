/* The ansible task's `auth.krb5` (ansible_krb5.h). */
#include "flow/tasks/ansible_krb5.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/datetime.h"
#include "base/krb5_ccache.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/defaults.h"
#include "flow/vm_internal.h"

#define KINIT_EXE "/usr/bin/kinit"
#define KINIT_TIMEOUT_MS 60000
#define RENEW_BEFORE_S 60 /* Concord's: a minute before the ticket expires */
#define RETRY_S 30	  /* Concord's: after a failed renewal */

struct ansible_krb5 {
	struct task_ctx *c;
	char *user;
	char *password; /* "<password>\n", kinit's stdin; zeroed when freed */
	char dir[4200], run_rel[4200];
	char config_env[4300]; /* "KRB5_CONFIG=<dir>/krb5.conf", or "" */
	int64_t renew_at;      /* seconds since the epoch; 0: never */
	int64_t end;	       /* when the current ticket ends, likewise */
	char last[512];	       /* kinit's last output line */
};

static void on_line(void *ctx, const char *text)
{
	struct ansible_krb5 *k = ctx;

	vm_log(k->c->vm, FLOW_INFO, "%s", text);
	if (*text)
		str_fmt_cut(k->last, sizeof k->last, "%s", text);
}

static const char *field(json_t *krb5, const char *key)
{
	json_t *v = json_object_get(krb5, key);
	return json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
}

/* A ticket into dir/name: 0, or -1 with e set. */
static int kinit(struct ansible_krb5 *k, const char *name, struct err *e)
{
	const struct flow_host *h = k->c->h;
	char pw_rel[4300], cc[4400];
	char *const env[] = {k->config_env, NULL};
	struct flow_tool_result res;
	int rc;

	k->last[0] = '\0';
	str_fmt_cut(pw_rel, sizeof pw_rel, "%s/krb5_password", k->run_rel);
	str_fmt_cut(cc, sizeof cc, "FILE:%s/%s", k->dir, name);
	{
		char *const argv[] = {"kinit", "-c", cc, k->user, NULL};
		const struct flow_tool_file files[] = {{pw_rel, k->password, strlen(k->password)}};
		struct flow_tool t = {.name = "ansible",
				      .exe = KINIT_EXE,
				      .argv = argv,
				      .env = k->config_env[0] ? env : NULL,
				      .files = files,
				      .n_files = 1,
				      .stdin_path = pw_rel,
				      .timeout_ms = KINIT_TIMEOUT_MS,
				      .line = on_line,
				      .line_ctx = k};
		rc = h->ops->tool_run(h->ctx, &t, &res, e);
	}
	if (rc == 0 && (res.exit_code != 0 || res.timed_out))
		rc = err_set(e, ERR_INVALID, "ansible: kinit failed for '%s' (exit code %d)%s%s", k->user,
			     res.timed_out ? 124 : res.exit_code, k->last[0] ? ": " : "", k->last);
	return rc;
}

/* After a ticket was written to dir/name: when to renew it, logged as Concord does. */
static void schedule(struct ansible_krb5 *k, const char *name, const char *what)
{
	char path[4400], iso[DT_ISO_LEN];
	int64_t now = dt_now_ms() / 1000, end, before;
	struct err e;
	size_t len;
	char *data;

	str_fmt_cut(path, sizeof path, "%s/%s", k->dir, name);
	data = path_read_file(path, 1u << 20, &len, &e);
	if (!data || krb5_ccache_tgt_end(data, len, &end) < 0) {
		free(data);
		k->renew_at = 0;
		vm_log(k->c->vm, FLOW_WARN, "ansible: the Kerberos ticket's end time is unknown: it is not renewed");
		return;
	}
	free(data);
	k->end = end;
	before = end - now < 2 * RENEW_BEFORE_S ? (end - now) / 2 : RENEW_BEFORE_S;
	k->renew_at = end - (before > 0 ? before : 0);
	dt_format_iso(end * 1000, iso);
	vm_log(k->c->vm, FLOW_INFO, "ansible: Kerberos ticket for '%s' %s, valid until %s", k->user, what, iso);
}

void ansible_krb5_tick(void *ctx)
{
	struct ansible_krb5 *k = ctx;
	int64_t now = dt_now_ms() / 1000, wait;
	char from[4400], to[4400];
	struct err e = {0};

	if (!k->renew_at || now < k->renew_at)
		return;
	str_fmt_cut(from, sizeof from, "%s/krb5cc.new", k->dir);
	str_fmt_cut(to, sizeof to, "%s/krb5cc", k->dir);
	if (kinit(k, "krb5cc.new", &e) < 0 || (rename(from, to) != 0 && err_set(&e, ERR_INTERNAL, "%s", strerror(errno)))) {
		unlink(from);
		/* tried again after RETRY_S, or sooner while the ticket has less than twice that
		 * left (after half of what is left, at least a second) */
		wait = k->end <= now || k->end - now >= 2 * RETRY_S ? RETRY_S : (k->end - now) / 2;
		wait = wait < 1 ? 1 : wait;
		k->renew_at = now + wait;
		vm_log(k->c->vm, FLOW_WARN, "ansible: renewing the Kerberos ticket for '%s' failed: %s; trying again in %lld s",
		       k->user, e.msg, (long long)wait);
		return;
	}
	schedule(k, "krb5cc", "renewed");
}

struct ansible_krb5 *ansible_krb5_start(struct task_ctx *c, json_t *krb5, const char *dir, const char *run_rel,
					struct err *e)
{
	const char *user = field(krb5, "user"), *password = field(krb5, "password");
	const char *conf = json_string_value(json_object_get(task_defaults_get(c->h, "krb5"), "config"));
	struct ansible_krb5 *k;
	char path[4300];

	if (!json_is_object(krb5) || !user || !password) {
		err_set(e, ERR_INVALID, "ansible: auth.krb5 needs 'user' and 'password'");
		return NULL;
	}
	if (c->h->ops->sensitive)
		c->h->ops->sensitive(c->h->ctx, password, true);
	if (*user == '-' || strpbrk(user, " \t\r\n")) {
		err_set(e, ERR_INVALID, "ansible: bad auth.krb5 user '%s'", user);
		return NULL;
	}
	if (access(KINIT_EXE, X_OK) != 0) {
		err_set(e, ERR_UNAVAILABLE,
			"ansible: auth.krb5 needs " KINIT_EXE ", not installed on this node: install the Debian "
			"package 'krb5-user' (apt-get install krb5-user)");
		return NULL;
	}
	if (!(k = calloc(1, sizeof *k)) || !(k->user = strdup(user)) || asprintf(&k->password, "%s\n", password) < 0) {
		if (k)
			free(k->user);
		free(k);
		oom_fail(e);
		return NULL;
	}
	k->c = c;
	str_fmt_cut(k->dir, sizeof k->dir, "%s", dir);
	str_fmt_cut(k->run_rel, sizeof k->run_rel, "%s", run_rel);
	if (conf) {
		str_fmt_cut(path, sizeof path, "%s/krb5.conf", dir);
		str_fmt_cut(k->config_env, sizeof k->config_env, "KRB5_CONFIG=%s", path);
		if (path_write_file(path, conf, strlen(conf), 0600, e) < 0) {
			ansible_krb5_free(k);
			return NULL;
		}
	}
	vm_log(c->vm, FLOW_INFO, "ansible: getting a Kerberos ticket for '%s'", user);
	if (kinit(k, "krb5cc", e) < 0) {
		ansible_krb5_free(k);
		return NULL;
	}
	schedule(k, "krb5cc", "obtained");
	return k;
}

bool ansible_krb5_config(const struct ansible_krb5 *k)
{
	return k->config_env[0] != '\0';
}

void ansible_krb5_free(struct ansible_krb5 *k)
{
	if (!k)
		return;
	if (k->password) {
		sodium_memzero(k->password, strlen(k->password));
		free(k->password);
	}
	free(k->user);
	free(k);
}
