/* Running Debian's git for the `git` task (git_cli.h): the configuration and credential
 * files of each command, handed to the external-tool layer as secret files. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <sodium.h>

#include "base/path.h"
#include "base/str.h"
#include "base/strv.h"
#include "flow/tasks/git_cli.h"
#include "flow/vm_internal.h"

#define GIT_EXE "/usr/bin/git"
#define OUT_MAX (1u << 20)

static int oom(struct err *e)
{
	return err_set(e, ERR_INTERNAL, "out of memory");
}

static void mask(struct git_cli *g, const char *value)
{
	const struct flow_host *h = g->c->h;
	if (value && *value && h->ops->sensitive)
		h->ops->sensitive(h->ctx, value, true);
}

static void wipe_free(char *s, size_t len)
{
	if (s)
		sodium_memzero(s, len);
	free(s);
}

/* privateKey {org, secretName, password}: the key pair exported as the process's initiator;
 * the exported files are read and removed at once (the public key is not needed). */
static int key_from_secret(struct git_cli *g, json_t *pk, struct err *e)
{
	const struct flow_host *h = g->c->h;
	json_t *org = json_object_get(pk, "org"), *name = json_object_get(pk, "secretName"),
	       *pw = json_object_get(pk, "password"), *args, *out = NULL;
	const char *paths[2];
	int rc;

	if (!json_is_string(name))
		return err_set(e, ERR_INVALID, "Secret name is required to export a private key");
	vm_log(g->c->vm, FLOW_INFO, "Using secret: %s%s%s", json_is_string(org) ? json_string_value(org) : "",
	       json_is_string(org) ? "/" : "", json_string_value(name));
	args = json_pack("[O, O, O]", json_is_string(org) ? org : json_null(), name, pw ? pw : json_null());
	rc = args ? h->ops->server_task(h->ctx, "crypto", "exportKeyAsFile", args, &out, NULL, e) : oom(e);
	json_decref(args);
	if (rc < 0)
		return -1;
	paths[0] = json_string_value(json_object_get(out, "private"));
	paths[1] = json_string_value(json_object_get(out, "public"));
	if (paths[0])
		g->key = path_read_beneath(g->workdir, paths[0], 1u << 20, &g->key_len, e);
	for (int i = 0; i < 2; i++) {
		char *p = paths[i] ? path_join_safe(g->workdir, paths[i], &(struct err){0}) : NULL;
		if (p)
			unlink(p);
		free(p);
	}
	json_decref(out);
	if (!g->key)
		return e->code ? -1 : err_set(e, ERR_INTERNAL, "git: the key pair was not exported");
	return 0;
}

static int basic_auth(struct git_cli *g, json_t *basic, struct err *e)
{
	json_t *token = json_object_get(basic, "token"), *user = json_object_get(basic, "username"),
	       *pw = json_object_get(basic, "password");

	if (token) {
		if (!json_is_string(token))
			return err_set(e, ERR_INVALID, "Mandatory parameter 'token' is not a string");
		g->user = strdup(json_string_value(token));
		g->password = strdup("");
	} else if (user) {
		if (!json_is_string(user) || (pw && !json_is_null(pw) && !json_is_string(pw)))
			return err_set(e, ERR_INVALID, "git: auth.basic 'username' and 'password' must be strings");
		g->user = strdup(json_string_value(user));
		g->password = strdup(json_is_string(pw) ? json_string_value(pw) : "");
	} else {
		return 0;
	}
	if (!g->user || !g->password)
		return oom(e);
	mask(g, token ? g->user : g->password);
	return 0;
}

/* A password (or a token as the user) written into the URL itself is masked too: git and
 * the task print the URL. */
static void mask_url(struct git_cli *g, const char *url)
{
	const char *p = url ? strstr(url, "://") : NULL, *end, *at = NULL, *colon;
	char part[1024];

	if (!p)
		return;
	p += 3;
	end = p + strcspn(p, "/?#");
	for (const char *c = p; c < end; c++)
		if (*c == '@')
			at = c;
	if (!at)
		return;
	colon = memchr(p, ':', (size_t)(at - p));
	str_fmt_cut(part, sizeof part, "%.*s", (int)(colon ? at - colon - 1 : at - p), colon ? colon + 1 : p);
	mask(g, part);
	sodium_memzero(part, sizeof part);
}

int git_cli_init(struct git_cli *g, struct task_ctx *c, json_t *in, struct err *e)
{
	json_t *pk = json_object_get(in, "privateKey"), *auth = json_object_get(in, "auth");

	memset(g, 0, sizeof *g);
	g->c = c;
	g->workdir = c->h->workdir;
	buf_init(&g->out, OUT_MAX);
	if (str_fmt(g->run_abs, sizeof g->run_abs - 64, "%s/" GIT_RUN_DIR, g->workdir) < 0)
		return err_set(e, ERR_INVALID, "git: the working directory's path is too long");
	mask_url(g, json_string_value(json_object_get(in, "url")));
	if (pk && !json_is_null(pk)) {
		if (!json_is_object(pk))
			return err_set(e, ERR_INVALID, "git: 'privateKey' must be a map (org, secretName, password)");
		return key_from_secret(g, pk, e);
	}
	if (auth && !json_is_null(auth)) {
		json_t *basic = json_object_get(auth, "basic");
		if (!json_is_object(auth) || (basic && !json_is_object(basic)))
			return err_set(e, ERR_INVALID, "git: 'auth' must be a map {basic: {token | username, password}}");
		return basic ? basic_auth(g, basic, e) : 0;
	}
	return 0;
}

void git_cli_cleanup(struct git_cli *g)
{
	wipe_free(g->key, g->key_len);
	wipe_free(g->user, g->user ? strlen(g->user) : 0);
	wipe_free(g->password, g->password ? strlen(g->password) : 0);
	free(g->name);
	free(g->email);
	buf_cleanup(&g->out);
	memset(g, 0, sizeof *g);
}

int git_cli_identity(struct git_cli *g, const char *name, const char *email, struct err *e)
{
	free(g->name);
	free(g->email);
	g->name = name ? strdup(name) : NULL;
	g->email = email ? strdup(email) : NULL;
	return (name && !g->name) || (email && !g->email) ? oom(e) : 0;
}

bool git_cli_url_ok(const char *url)
{
	static const char *const schemes[] = {"http://", "https://", "ssh://", "git://", "git+ssh://", "ssh+git://"};
	const char *colon = strchr(url, ':'), *slash = strchr(url, '/');

	if (!*url || *url == '-')
		return false;
	for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
		if (strncasecmp(url, schemes[i], strlen(schemes[i])) == 0)
			return true;
	/* scp-like host:path, where no slash comes before the colon (git's own rule) */
	return !strstr(url, "://") && colon && colon != url && (!slash || colon < slash) && !strstr(url, "::");
}

/* A value in a git configuration file: quoted, with backslash and quote escaped; a
 * newline cannot be written and makes the call fail. */
static int cfg_value(struct buf *b, const char *v, struct err *e)
{
	if (strpbrk(v, "\n\r"))
		return err_set(e, ERR_INVALID, "git: a configuration value may not contain a line break");
	if (buf_append_char(b, '"', e) < 0)
		return -1;
	for (; *v; v++)
		if ((*v == '"' || *v == '\\') ? buf_printf(b, e, "\\%c", *v) : buf_append_char(b, *v, e) < 0)
			return -1;
	return buf_append_str(b, "\"\n", e);
}

/* The answer of the credential helper (git-credential(1)'s format): the same user and
 * password for whatever remote asks, the step's being the only one. */
static char *cred_file(struct git_cli *g, size_t *len, struct err *e)
{
	struct buf b;
	buf_init(&b, 64u << 10);
	buf_set_wipe(&b);
	if (strpbrk(g->user, "\n") || strpbrk(g->password, "\n")) {
		buf_cleanup(&b);
		err_set(e, ERR_INVALID, "git: a user name or password may not contain a line break");
		return NULL;
	}
	if (buf_printf(&b, e, "username=%s\npassword=%s\n", g->user, g->password) < 0) {
		buf_cleanup(&b);
		return NULL;
	}
	return buf_detach(&b, len);
}

static char *config_file(struct git_cli *g, size_t *len, struct err *e)
{
	char line[4600];
	struct buf b;
	int rc;

	buf_init(&b, 64u << 10);
	rc = buf_append_str(&b,
			    "[init]\n\tdefaultBranch = master\n[advice]\n\tdetachedHead = false\n"
			    "[protocol \"file\"]\n\tallow = never\n[protocol \"ext\"]\n\tallow = never\n"
			    "[core]\n\tquotePath = false\n\taskPass =\n[credential]\n\thelper =\n",
			    e);
	if (rc == 0 && g->user) {
		str_fmt_cut(line, sizeof line, "!f() { test \"$1\" = get && cat '%s/credentials'; }; f", g->run_abs);
		rc = buf_append_str(&b, "\thelper = ", e) < 0 ? -1 : cfg_value(&b, line, e);
	}
	if (rc == 0 && g->key) {
		str_fmt_cut(line, sizeof line,
			    "ssh -i '%s/key' -F /dev/null -o IdentitiesOnly=yes -o BatchMode=yes "
			    "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null",
			    g->run_abs);
		rc = buf_append_str(&b, "[core]\n\tsshCommand = ", e) < 0 ? -1 : cfg_value(&b, line, e);
	}
	if (rc == 0)
		rc = buf_append_str(&b, "[user]\n\tname = ", e) < 0 || cfg_value(&b, g->name ? g->name : "Accord", e) < 0 ||
			     buf_append_str(&b, "\temail = ", e) < 0 ||
			     cfg_value(&b, g->email ? g->email : "accord@localhost", e) < 0
			 ? -1
			 : 0;
	if (rc < 0) {
		buf_cleanup(&b);
		return NULL;
	}
	return buf_detach(&b, len);
}

static void on_line(void *ctx, const char *text)
{
	struct git_cli *g = ctx;
	struct err e;
	if (!g->quiet)
		vm_log(g->c->vm, FLOW_INFO, "%s", text);
	if (buf_append_str(&g->out, text, &e) < 0 || buf_append_char(&g->out, '\n', &e) < 0)
		return; /* the output is capped: the first of it is kept */
}

int git_cli_run(struct git_cli *g, bool quiet, int *code, struct err *e, const char *const *args)
{
	struct flow_tool_file files[3];
	struct flow_tool_result res;
	struct strv argv = {0}, env = {0};
	char *cfg = NULL, *cred = NULL;
	size_t n = 0, cfg_len = 0, cred_len = 0;
	int rc = -1;

	buf_reset(&g->out);
	g->quiet = quiet;
	g->reason[0] = '\0';
	if (!(cfg = config_file(g, &cfg_len, e)))
		goto out;
	files[n++] = (struct flow_tool_file){GIT_RUN_DIR "/config", cfg, cfg_len};
	if (g->key)
		files[n++] = (struct flow_tool_file){GIT_RUN_DIR "/key", g->key, g->key_len};
	if (g->user) {
		if (!(cred = cred_file(g, &cred_len, e)))
			goto out;
		files[n++] = (struct flow_tool_file){GIT_RUN_DIR "/credentials", cred, cred_len};
	}
	if (strv_add(&argv, "git") < 0 || strv_add(&env, "GIT_CONFIG_GLOBAL=%s/config", g->run_abs) < 0 ||
	    strv_add(&env, "GIT_CONFIG_NOSYSTEM=1") < 0 || strv_add(&env, "GIT_TERMINAL_PROMPT=0") < 0 ||
	    strv_add(&env, "GIT_PROTOCOL_FROM_USER=0") < 0) {
		oom(e);
		goto out;
	}
	for (size_t i = 0; args[i]; i++)
		if (strv_add(&argv, "%s", args[i]) < 0) {
			oom(e);
			goto out;
		}
	struct flow_tool t = {.name = "git",
			      .exe = GIT_EXE,
			      .argv = argv.v,
			      .env = env.v,
			      .files = files,
			      .n_files = n,
			      .line = on_line,
			      .line_ctx = g};
	if ((rc = g->c->h->ops->tool_run(g->c->h->ctx, &t, &res, e)) == 0)
		*code = res.timed_out ? 124 : res.exit_code;
out:
	strv_free(&argv);
	strv_free(&env);
	if (cfg)
		sodium_memzero(cfg, cfg_len);
	free(cfg);
	wipe_free(cred, cred_len);
	return rc;
}

const char *git_cli_reason(struct git_cli *g)
{
	const char *s = g->out.len ? g->out.data : "", *best = NULL, *last = NULL;
	size_t best_len = 0, last_len = 0;

	for (const char *p = s; p < s + g->out.len;) {
		const char *nl = memchr(p, '\n', (size_t)(s + g->out.len - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(s + g->out.len - p);
		if (len) {
			last = p;
			last_len = len;
			if (!best && (strncmp(p, "fatal: ", 7) == 0 || strncmp(p, "error: ", 7) == 0)) {
				best = p;
				best_len = len;
			}
		}
		p += len + 1;
	}
	if (!best) {
		best = last;
		best_len = last_len;
	}
	str_fmt_cut(g->reason, sizeof g->reason, "%.*s", best ? (int)best_len : 0, best ? best : "");
	return g->reason;
}
