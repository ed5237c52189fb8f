/* The `ansible` task (docs/flows.md "ansible"): runs Debian's ansible-playbook through the
 * external-tool layer (flow/tool.h) with Concord's parameters.  The run's own folder inside
 * the working directory holds the callback plugin and Ansible's temporary files; the
 * configuration, inline inventories, extra variables, keys and vault passwords are handed
 * to the layer as secret files (0600, removed when the run ends, however it ends). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "base/strv.h"
#include "flow/tasks/ansible_docker.h"
#include "flow/tasks/ansible_krb5.h"
#include "flow/tasks/ansible_lookup.h"
#include "flow/tasks/ansible_policy.h"
#include "flow/tasks/ansible_prep.h"
#include "flow/tasks/ansible_roles.h"
#include "flow/tasks/ansible_venv.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

#define ANSIBLE_EXE "/usr/bin/ansible-playbook"
#define RUN_DIR ".ansible_run" /* the run's folder, relative to the working directory */
#define OUT_MAX (64u << 20)

struct run {
	struct task_ctx *c;
	json_t *in;
	const char *workdir;
	char dir[4200]; /* absolute RUN_DIR */
	char view[4200]; /* RUN_DIR as Ansible sees it: dir, or its path in the container */
	const char *image; /* dockerImage, or NULL */
	char exe[4400]; /* the program: ANSIBLE_EXE, or the virtualenv's */
	struct strv argv, env;
	struct flow_tool_file *files;
	size_t n_files;
	int n_inline;		/* inline inventories so far */
	bool callbacks, events; /* Accord's callback plugins; ANSIBLE events among them */
	bool policy;		/* the policy's plugin (ansible_policy.h) */
	struct ansible_krb5 *krb5; /* auth.krb5's ticket, renewed while Ansible runs; NULL: none */
};

static json_t *param(struct run *r, const char *key)
{
	json_t *v = json_object_get(r->in, key);
	return json_is_null(v) ? NULL : v;
}

static bool flag_or(struct run *r, const char *key, bool dflt)
{
	json_t *v = param(r, key);
	if (!v)
		return dflt;
	return json_is_true(v) || (json_is_string(v) && strcmp(json_string_value(v), "true") == 0);
}

static bool flag(struct run *r, const char *key)
{
	return flag_or(r, key, false);
}

static int oom(struct err *e)
{
	return oom_fail(e);
}

static int arg(struct run *r, const char *a, struct err *e)
{
	return strv_add(&r->argv, "%s", a) < 0 ? oom(e) : 0;
}

/* A secret file for the layer at rel (relative to the working directory); rel and data
 * are taken over, whatever happens. */
static int secret_file_at(struct run *r, char *rel, char *data, size_t len, struct err *e)
{
	struct flow_tool_file *f = rel ? realloc(r->files, (r->n_files + 1) * sizeof *f) : NULL;
	if (!f) {
		free(rel);
		free(data);
		return oom(e);
	}
	r->files = f;
	r->files[r->n_files++] = (struct flow_tool_file){rel, data, len};
	return 0;
}

/* A secret file named RUN_DIR/name (data taken over); *abs its full path. */
static int secret_file(struct run *r, const char *name, char *data, size_t len, char *abs, size_t abs_cap,
		       struct err *e)
{
	char *rel = NULL;
	if (asprintf(&rel, RUN_DIR "/%s", name) < 0)
		rel = NULL;
	if (secret_file_at(r, rel, data, len, e) < 0)
		return -1;
	str_fmt_cut(abs, abs_cap, "%s/%s", r->view, name);
	return 0;
}

/* A path the flow named: it must exist inside the working directory. */
static int user_path(struct run *r, const char *what, json_t *v, struct err *e)
{
	int rc;
	if (!json_is_string(v) || !json_string_length(v))
		return err_set(e, ERR_INVALID, "ansible: '%s' must be a path in the working directory", what);
	if ((rc = path_exists_beneath(r->workdir, json_string_value(v), e)) < 0)
		return -1;
	if (rc == 0)
		return err_set(e, ERR_NOT_FOUND, "ansible: %s '%s' not found", what, json_string_value(v));
	return 0;
}

static int inline_inventory(struct run *r, json_t *inv, struct err *e)
{
	char name[32], abs[4300], *text = ansible_inventory_text(inv, r->view, e);
	if (!text)
		return -1;
	str_fmt_cut(name, sizeof name, "inventory_%d.json", r->n_inline++);
	if (secret_file(r, name, text, strlen(text), abs, sizeof abs, e) < 0)
		return -1;
	return strv_add(&r->argv, "-i") < 0 || strv_add(&r->argv, "%s", abs) < 0 ? oom(e) : 0;
}

static int path_inventory(struct run *r, const char *what, json_t *v, bool exec, struct err *e)
{
	if (user_path(r, what, v, e) < 0)
		return -1;
	if (exec) {
		/* Concord marks a dynamic inventory script executable */
		char *p = path_join_safe(r->workdir, json_string_value(v), e);
		if (!p || chmod(p, 0700) != 0) {
			free(p);
			return err_set(e, ERR_INVALID, "ansible: cannot make '%s' executable", json_string_value(v));
		}
		free(p);
	}
	return strv_add(&r->argv, "-i") < 0 || strv_add(&r->argv, "%s", json_string_value(v)) < 0 ? oom(e) : 0;
}

/* inventoryFile and dynamicInventoryFile: a path, or a list of them (Concord's too). */
static int path_inventories(struct run *r, const char *what, json_t *v, bool exec, struct err *e)
{
	json_t *x;
	size_t i;

	if (!json_is_array(v))
		return path_inventory(r, what, v, exec, e);
	json_array_foreach(v, i, x) if (path_inventory(r, what, x, exec, e) < 0) return -1;
	return 0;
}

static int inventories(struct run *r, struct err *e)
{
	json_t *inv = param(r, "inventory"), *v;
	size_t i;
	int n = 0;

	if (json_is_array(inv)) {
		json_array_foreach(inv, i, v)
		{
			if ((json_is_string(v) ? path_inventory(r, "inventory", v, false, e)
					       : inline_inventory(r, v, e)) < 0)
				return -1;
			n++;
		}
	} else if (inv) {
		if (inline_inventory(r, inv, e) < 0)
			return -1;
		n++;
	}
	if ((v = param(r, "inventoryFile")) && n++ >= 0 && path_inventories(r, "inventoryFile", v, false, e) < 0)
		return -1;
	if ((v = param(r, "dynamicInventoryFile")) && n++ >= 0 &&
	    path_inventories(r, "dynamicInventoryFile", v, true, e) < 0)
		return -1;
	if (n == 0)
		return err_set(e, ERR_INVALID,
			       "ansible: 'inventory', 'inventoryFile' or 'dynamicInventoryFile' is required");
	return 0;
}

/* A string or a list of strings as one comma-separated value (tags, limit); NEW or NULL. */
static char *list_text(json_t *v)
{
	struct buf b;
	struct err e;
	json_t *x;
	size_t i;
	char *out = NULL;

	if (!json_is_array(v))
		return v ? task_text(v) : NULL;
	buf_init(&b, 1u << 20);
	json_array_foreach(v, i, x)
	{
		char *t = task_text(x);
		int rc = t ? buf_printf(&b, &e, "%s%s", i ? "," : "", t) : -1;
		free(t);
		if (rc < 0)
			goto out;
	}
	if ((out = malloc(b.len + 1))) {
		if (b.len)
			memcpy(out, b.data, b.len);
		out[b.len] = '\0';
	}
out:
	buf_cleanup(&b);
	return out;
}

static int list_option(struct run *r, const char *key, const char *opt, struct err *e)
{
	json_t *v = param(r, key);
	char *t;
	int rc = 0;
	if (!v)
		return 0;
	if (!(t = list_text(v)))
		return oom(e);
	if (*t)
		rc = strv_add(&r->argv, "%s", opt) < 0 || strv_add(&r->argv, "%s", t) < 0 ? oom(e) : 0;
	free(t);
	return rc;
}

static int extra_vars(struct run *r, struct err *e)
{
	json_t *v = param(r, "extraVars"), *f;
	char abs[4300], *text;
	size_t i;

	if (v) {
		if (!json_is_object(v))
			return err_set(e, ERR_INVALID, "ansible: 'extraVars' must be a map");
		if (!(text = json_dumps(v, JSON_COMPACT)))
			return oom(e);
		if (secret_file(r, "extra_vars.json", text, strlen(text), abs, sizeof abs, e) < 0 ||
		    strv_add(&r->argv, "-e") < 0 || strv_add(&r->argv, "@%s", abs) < 0)
			return e->code ? -1 : oom(e);
	}
	if ((v = param(r, "extraVarsFiles")) && !json_is_array(v))
		return err_set(e, ERR_INVALID, "ansible: 'extraVarsFiles' must be a list of paths");
	json_array_foreach(v, i, f)
	{
		if (user_path(r, "extraVarsFiles", f, e) < 0)
			return -1;
		if (strv_add(&r->argv, "-e") < 0 || strv_add(&r->argv, "@%s", json_string_value(f)) < 0)
			return oom(e);
	}
	return 0;
}

static bool sensitive(struct run *r, const char *value)
{
	const struct flow_host *h = r->c->h;
	return h->ops->sensitive && h->ops->sensitive(h->ctx, value, true);
}

static int vault_one(struct run *r, const char *id, json_t *pw, int i, struct err *e)
{
	char name[32], abs[4300], *text;
	if (!json_is_string(pw))
		return err_set(e, ERR_INVALID, "ansible: a vault password must be a string");
	sensitive(r, json_string_value(pw));
	str_fmt_cut(name, sizeof name, "vault_%d", i);
	if (!(text = strdup(json_string_value(pw))) || secret_file(r, name, text, strlen(text), abs, sizeof abs, e) < 0)
		return e->code ? -1 : oom(e);
	if (id)
		return strv_add(&r->argv, "--vault-id") < 0 || strv_add(&r->argv, "%s@%s", id, abs) < 0 ? oom(e) : 0;
	return strv_add(&r->argv, "--vault-password-file") < 0 || strv_add(&r->argv, "%s", abs) < 0 ? oom(e) : 0;
}

static int vault(struct run *r, struct err *e)
{
	json_t *v = param(r, "vaultPassword"), *x;
	const char *id;
	int i = 0;

	if (json_is_object(v)) {
		json_object_foreach(v, id, x) if (vault_one(r, id, x, i++, e) < 0) return -1;
	} else if (v && vault_one(r, NULL, v, i++, e) < 0) {
		return -1;
	}
	v = param(r, "vaultPasswordFile");
	if (json_is_object(v)) {
		json_object_foreach(v, id, x)
		{
			if (user_path(r, "vaultPasswordFile", x, e) < 0 || strv_add(&r->argv, "--vault-id") < 0 ||
			    strv_add(&r->argv, "%s@%s", id, json_string_value(x)) < 0)
				return e->code ? -1 : oom(e);
		}
	} else if (v) {
		if (user_path(r, "vaultPasswordFile", v, e) < 0 || arg(r, "--vault-password-file", e) < 0 ||
		    arg(r, json_string_value(v), e) < 0)
			return -1;
	}
	return 0;
}

/* auth.privateKey.secret: the key pair exported by the server's crypto task as the
 * process's initiator; the exported files are read and removed at once, the private key
 * goes to the layer as a secret file. */
static int key_from_secret(struct run *r, json_t *s, char *abs, size_t cap, struct err *e)
{
	const struct flow_host *h = r->c->h;
	json_t *org = json_object_get(s, "org"), *name = json_object_get(s, "name"),
	       *pw = json_object_get(s, "password");
	json_t *args, *out = NULL;
	const char *priv, *pub;
	char *data = NULL;
	size_t len = 0;
	int rc;

	if (!json_is_string(name))
		return err_set(e, ERR_INVALID, "ansible: auth.privateKey.secret.name is required");
	args = json_pack("[O, O, O]", org ? org : json_null(), name, pw ? pw : json_null());
	rc = h->ops->server_task(h->ctx, "crypto", "exportKeyAsFile", args, &out, NULL, e);
	json_decref(args);
	if (rc < 0)
		return -1;
	priv = json_string_value(json_object_get(out, "private"));
	pub = json_string_value(json_object_get(out, "public"));
	if (priv)
		data = path_read_beneath(r->workdir, priv, 1u << 20, &len, e);
	for (int i = 0; i < 2; i++) {
		char *p = (i ? pub : priv) ? path_join_safe(r->workdir, i ? pub : priv, &(struct err){0}) : NULL;
		if (p)
			unlink(p);
		free(p);
	}
	json_decref(out);
	if (!data)
		return e->code ? -1 : err_set(e, ERR_INTERNAL, "ansible: the key pair was not exported");
	return secret_file(r, "private_key", data, len, abs, cap, e);
}

/* One groupVars entry {group: {orgName, secretName, password, type}}: the data secret,
 * exported as the process's initiator, as <the playbook's folder>/group_vars/<group>.<type>
 * for the run (Concord's GroupVarsProcessor). */
static int group_var(struct run *r, const char *group, json_t *g, struct err *e)
{
	const struct flow_host *h = r->c->h;
	const char *pb = json_string_value(param(r, "playbook")), *slash = strrchr(pb, '/');
	json_t *name = json_object_get(g, "secretName"), *type = json_object_get(g, "type"), *args, *out = NULL;
	char *rel = NULL, *data;
	int rc;

	if (!json_is_object(g) || !json_is_string(name))
		return err_set(e, ERR_INVALID, "ansible: groupVars '%s' needs a secretName", group);
	if (!*group || strchr(group, '/') || strcmp(group, "..") == 0 || strcmp(group, ".") == 0 ||
	    (type && (!json_is_string(type) || strchr(json_string_value(type), '/'))))
		return err_set(e, ERR_INVALID, "ansible: bad groupVars group or type '%s'", group);
	args = json_pack("[O, O, O]", json_object_get(g, "orgName") ? json_object_get(g, "orgName") : json_null(), name,
			 json_object_get(g, "password") ? json_object_get(g, "password") : json_null());
	rc = h->ops->server_task(h->ctx, "crypto", "exportAsString", args, &out, NULL, e);
	json_decref(args);
	if (rc < 0)
		return -1;
	data = json_is_string(out) ? strdup(json_string_value(out)) : NULL;
	if (asprintf(&rel, "%.*sgroup_vars/%s.%s", slash ? (int)(slash - pb + 1) : 0, pb, group,
		     type ? json_string_value(type) : "yml") < 0)
		rel = NULL;
	if (data)
		rc = secret_file_at(r, rel, data, strlen(data), e);
	else if (json_is_string(out))
		rc = (free(rel), oom_fail(e));
	else
		rc = (free(rel), err_set(e, ERR_INVALID, "ansible: groupVars '%s': the secret is not text", group));
	json_decref(out);
	return rc;
}

static int group_vars(struct run *r, struct err *e)
{
	json_t *list = param(r, "groupVars"), *item, *g;
	const char *group;
	size_t i;

	if (list && !json_is_array(list))
		return err_set(e, ERR_INVALID, "ansible: 'groupVars' must be a list of {group: {secretName, …}}");
	json_array_foreach(list, i, item)
	{
		json_object_foreach(item, group, g) if (group_var(r, group, g, e) < 0) return -1;
	}
	return 0;
}

/* auth.krb5: a ticket for user in the run's folder, Ansible's SSH connections use it
 * (Concord's KerberosAuth: GSSAPI, the user as the remote user). */
static int krb5(struct run *r, json_t *k, struct err *e)
{
	if (!(r->krb5 = ansible_krb5_start(r->c, k, r->dir, RUN_DIR, e)))
		return -1;
	if (strv_add(&r->env, "KRB5CCNAME=FILE:%s/krb5cc", r->view) < 0 ||
	    (ansible_krb5_config(r->krb5) && strv_add(&r->env, "KRB5_CONFIG=%s/krb5.conf", r->view) < 0) ||
	    arg(r, "--user", e) < 0 ||
	    arg(r, json_string_value(json_object_get(k, "user")), e) < 0 || arg(r, "--ssh-extra-args", e) < 0 ||
	    arg(r, "-o GSSAPIAuthentication=yes", e) < 0)
		return e->code ? -1 : oom(e);
	return 0;
}

static int auth(struct run *r, struct err *e)
{
	json_t *pk = json_object_get(param(r, "auth"), "privateKey"), *v;
	char abs[4300];

	if ((v = json_object_get(param(r, "auth"), "krb5")) && !json_is_null(v) && krb5(r, v, e) < 0)
		return -1;
	if (!pk)
		return 0;
	if (!json_is_object(pk))
		return err_set(e, ERR_INVALID, "ansible: auth.privateKey must be a map (user, path or secret)");
	if ((v = json_object_get(pk, "user"))) {
		if (!json_is_string(v))
			return err_set(e, ERR_INVALID, "ansible: auth.privateKey.user must be a string");
		if (arg(r, "--user", e) < 0 || arg(r, json_string_value(v), e) < 0)
			return -1;
	}
	if ((v = json_object_get(pk, "path"))) {
		if (user_path(r, "auth.privateKey.path", v, e) < 0 || arg(r, "--private-key", e) < 0 ||
		    arg(r, json_string_value(v), e) < 0)
			return -1;
	} else if ((v = json_object_get(pk, "secret"))) {
		if (!json_is_object(v))
			return err_set(e, ERR_INVALID,
				       "ansible: auth.privateKey.secret must be a map (org, name, password)");
		if (key_from_secret(r, v, abs, sizeof abs, e) < 0 || arg(r, "--private-key", e) < 0 ||
		    arg(r, abs, e) < 0)
			return -1;
	} else {
		return err_set(e, ERR_INVALID, "ansible: auth.privateKey needs 'path' or 'secret'");
	}
	return 0;
}

static int options(struct run *r, struct err *e)
{
	json_t *v = param(r, "verbose");
	long long n = json_is_integer(v) ? json_integer_value(v) : 0;

	if (v && (!json_is_integer(v) || n < 0 || n > 4))
		return err_set(e, ERR_INVALID, "ansible: 'verbose' must be a number from 0 to 4");
	if (n > 0 && arg(r, (const char *const[]){"-v", "-vv", "-vvv", "-vvvv"}[n - 1], e) < 0)
		return -1;
	if (flag(r, "retry")) {
		const char *pb = json_string_value(param(r, "playbook"));
		const char *dot = strrchr(pb, '.');
		if (strv_add(&r->argv, "--limit") < 0 ||
		    strv_add(&r->argv, "@%.*s.retry", (int)(dot ? dot - pb : (long)strlen(pb)), pb) < 0)
			return oom(e);
	} else if (list_option(r, "limit", "--limit", e) < 0) {
		return -1;
	}
	if (list_option(r, "tags", "--tags", e) < 0 || list_option(r, "skipTags", "--skip-tags", e) < 0)
		return -1;
	if (flag(r, "check") && arg(r, "--check", e) < 0)
		return -1;
	if (flag(r, "syntaxCheck") && arg(r, "--syntax-check", e) < 0)
		return -1;
	return 0;
}

static int environment(struct run *r, struct err *e)
{
	json_t *extra = param(r, "extraEnv"), *v;
	const char *k, *outs = NULL;
	char *names = NULL;

	if ((v = param(r, "outVars")) && flag_or(r, "enableOutsVars", true) && !(names = list_text(v)))
		return oom(e);
	outs = names ? names : "";
	if (strv_add(&r->env, "ANSIBLE_CONFIG=%s/ansible.cfg", r->view) < 0 ||
	    strv_add(&r->env, "ANSIBLE_HOME=%s/home", r->view) < 0 ||
	    strv_add(&r->env, "ANSIBLE_LOCAL_TEMP=%s/tmp", r->view) < 0 || strv_add(&r->env, "ANSIBLE_NOCOLOR=1") < 0 ||
	    strv_add(&r->env, "ANSIBLE_FORCE_COLOR=0") < 0 || strv_add(&r->env, "PYTHONUNBUFFERED=1") < 0 ||
	    strv_add(&r->env, "PYTHONDONTWRITEBYTECODE=1") < 0 ||
	    strv_add(&r->env, "ACCORD_ANSIBLE_OUT=%s/out.json", r->view) < 0 ||
	    strv_add(&r->env, "ACCORD_ANSIBLE_OUT_VARS=%s", outs) < 0 ||
	    strv_add(&r->env, "ACCORD_ANSIBLE_LOCK=%s/channel.lock", r->view) < 0 ||
	    (!r->image && (strv_add(&r->env, "ACCORD_ANSIBLE_REQUEST_FD=3") < 0 ||
			   strv_add(&r->env, "ACCORD_ANSIBLE_REPLY_FD=4") < 0)) ||
	    (r->events && !r->image && strv_add(&r->env, "ACCORD_ANSIBLE_EVENTS_FD=3") < 0) ||
	    (r->policy && strv_add(&r->env, "ACCORD_ANSIBLE_POLICY=%s/policy.json", r->view) < 0) ||
	    (r->events && r->image && strv_add(&r->env, "ACCORD_ANSIBLE_EVENTS_FILE=%s/events.jsonl", r->view) < 0)) {
		free(names);
		return oom(e);
	}
	free(names);
	if (extra && !json_is_object(extra))
		return err_set(e, ERR_INVALID, "ansible: 'extraEnv' must be a map");
	json_object_foreach(extra, k, v)
	{
		char *t;
		/* they would keep the policy's plugin out of the run */
		if (r->policy && (strcmp(k, "ANSIBLE_CONFIG") == 0 || strcmp(k, "ANSIBLE_CALLBACK_PLUGINS") == 0))
			return err_set(e, ERR_FORBIDDEN, "ansible: extraEnv may not set %s while a policy applies", k);
		t = task_text(v);
		int rc = !t || strchr(k, '=') ? -1 : strv_add(&r->env, "%s=%s", k, t);
		free(t);
		if (rc < 0)
			return err_set(e, ERR_INVALID, "ansible: bad extraEnv entry '%s'", k);
	}
	return 0;
}

/* dockerImage: Ansible runs in a container of that image, with the working directory at
 * DOCKER_WORKSPACE (ansible_docker.h); every path Ansible is given is the container's. */
static int container(struct run *r, struct err *e)
{
	json_t *v = param(r, "dockerImage");

	str_fmt_cut(r->view, sizeof r->view, "%s", r->dir);
	if (!v)
		return 0;
	if (!json_is_string(v) || !json_string_length(v) || *json_string_value(v) == '-')
		return err_set(e, ERR_INVALID, "ansible: 'dockerImage' must be an image name");
	if (param(r, "virtualenv"))
		return err_set(e, ERR_INVALID, "ansible: 'virtualenv' cannot be used with 'dockerImage' (install the "
					       "packages into the image)");
	r->image = json_string_value(v);
	str_fmt_cut(r->view, sizeof r->view, ANSIBLE_DOCKER_WORKSPACE "/" RUN_DIR);
	return 0;
}

/* roles: cloned into the run's folder; *config (NEW) is the step's config with their
 * folders first in defaults.roles_path (Concord's prependPath). */
static int roles(struct run *r, json_t **config, struct err *e)
{
	json_t *list = param(r, "roles"), *cfg = param(r, "config"), *defs;
	const char *old;
	char *path, *joined = NULL;

	*config = cfg ? json_incref(cfg) : NULL;
	if (!list || (cfg && !json_is_object(cfg)))
		return 0; /* a bad config is refused by ansible_cfg_text */
	if (!(path = ansible_roles_fetch(r->c, list, RUN_DIR "/roles", e)))
		return -1;
	json_decref(*config);
	*config = cfg ? json_deep_copy(cfg) : json_object();
	if (!(defs = json_object_get(*config, "defaults")) || !json_is_object(defs))
		json_object_set_new(*config, "defaults", defs = json_object());
	old = json_string_value(json_object_get(defs, "roles_path"));
	if (asprintf(&joined, "%s%s%s", path, old ? ":" : "", old ? old : "") < 0)
		joined = NULL;
	free(path);
	if (!joined)
		return oom(e);
	json_object_set_new(defs, "roles_path", json_string(joined));
	free(joined);
	return 0;
}

/* virtualenv: made in the run's folder, its bin first on PATH; Ansible is its own when a
 * package installed it, else the system's run by the virtualenv's python. */
static int virtualenv(struct run *r, struct err *e)
{
	json_t *v = param(r, "virtualenv");
	char ve[4300], own[4400];

	str_fmt_cut(r->exe, sizeof r->exe, "%s", ANSIBLE_EXE);
	if (!v)
		return arg(r, "ansible-playbook", e);
	str_fmt_cut(ve, sizeof ve, "%s/ve", r->dir);
	if (ansible_venv_make(r->c, v, ve, e) < 0)
		return -1;
	if (strv_add(&r->env, "PATH=%s/bin:/usr/bin:/bin", ve) < 0 || strv_add(&r->env, "VIRTUAL_ENV=%s", ve) < 0)
		return oom(e);
	str_fmt_cut(own, sizeof own, "%s/bin/ansible-playbook", ve);
	if (access(own, X_OK) == 0) {
		str_fmt_cut(r->exe, sizeof r->exe, "%s", own);
		return arg(r, "ansible-playbook", e);
	}
	str_fmt_cut(r->exe, sizeof r->exe, "%s/bin/python3", ve);
	return arg(r, r->exe, e) < 0 ? -1 : arg(r, ANSIBLE_EXE, e); /* python finds its virtualenv from argv[0] */
}

/* enableLogFiltering: Accord's accord_protectdata as the stdout callback (*config, NEW,
 * replaced by a copy that sets it). */
static int log_filter(struct run *r, json_t **config, struct err *e)
{
	json_t *copy, *defs;

	if (!flag(r, "enableLogFiltering") || (*config && !json_is_object(*config)))
		return 0;
	if (ansible_write_protect(r->dir, e) < 0)
		return -1;
	copy = *config ? json_deep_copy(*config) : json_object();
	json_decref(*config);
	*config = copy;
	if (!copy)
		return oom(e);
	if (!(defs = json_object_get(copy, "defaults")) || !json_is_object(defs))
		json_object_set_new(copy, "defaults", defs = json_object());
	json_object_set_new(defs, "stdout_callback", json_string("accord_protectdata"));
	return 0;
}

/* Everything before the start: the folder, the files, the command line. */
static int prepare(struct run *r, struct err *e)
{
	json_t *pb = param(r, "playbook"), *config = NULL;
	char abs[4300], *cfg;
	size_t len = 0;

	if (user_path(r, "playbook", pb, e) < 0)
		return -1;
	/* checked here with room to spare: every path below is r->dir and a short name */
	if (str_fmt(r->dir, sizeof r->dir - 100, "%s/" RUN_DIR, r->workdir) < 0)
		return err_set(e, ERR_INVALID, "ansible: the working directory's path is too long");
	r->callbacks = !flag(r, "disableConcordCallbacks");
	r->events = r->callbacks && flag_or(r, "enableEvents", true);
	if (container(r, e) < 0)
		return -1;
	if (path_remove_tree(r->dir, e) < 0 || path_mkdirs(r->dir, 0700, e) < 0 ||
	    (r->callbacks && ansible_write_callbacks(r->dir, r->events, e) < 0) || ansible_lookup_write(r->dir, e) < 0)
		return -1;
	/* enablePolicy: Concord's, on by default */
	if (flag_or(r, "enablePolicy", true) && ansible_policy_write(r->c, r->dir, &r->policy, e) < 0)
		return -1;
	if (roles(r, &config, e) < 0 || log_filter(r, &config, e) < 0) {
		json_decref(config);
		return -1;
	}
	cfg = ansible_cfg_text(r->view, config, &len, e);
	json_decref(config);
	if (cfg && flag(r, "debug")) /* Concord's line; masked like every log line */
		vm_log(r->c->vm, FLOW_INFO, "Using the configuration: \n%s", cfg);
	if (!cfg || secret_file(r, "ansible.cfg", cfg, len, abs, sizeof abs, e) < 0)
		return -1;
	if (virtualenv(r, e) < 0 || inventories(r, e) < 0 || auth(r, e) < 0 || vault(r, e) < 0 ||
	    group_vars(r, e) < 0 || extra_vars(r, e) < 0 || options(r, e) < 0 || environment(r, e) < 0)
		return -1;
	return arg(r, json_string_value(pb), e);
}

/* debug: the command line (paths and options only: every secret is in a file) and the
 * names of the environment variables Ansible gets (the configuration is logged when it is
 * written). */
static void debug_log(struct run *r)
{
	struct buf b;
	struct err e;

	if (!flag(r, "debug"))
		return;
	buf_init(&b, 1u << 20);
	for (size_t i = 0; r->argv.v && r->argv.v[i]; i++)
		if (buf_printf(&b, &e, "%s%s", i ? " " : "", r->argv.v[i]) < 0)
			break;
	vm_log(r->c->vm, FLOW_INFO, "ansible: command: %.*s", (int)b.len, b.data ? b.data : "");
	buf_reset(&b);
	for (size_t i = 0; r->env.v && r->env.v[i]; i++)
		if (buf_printf(&b, &e, "%s%.*s", i ? ", " : "", (int)strcspn(r->env.v[i], "="), r->env.v[i]) < 0)
			break;
	vm_log(r->c->vm, FLOW_INFO, "ansible: environment: %.*s", (int)b.len, b.data ? b.data : "");
	buf_cleanup(&b);
}

/* Writes text as the attachment name (a warning in the log when it cannot). */
static void save_attachment(struct run *r, const char *name, char *text)
{
	struct err e = {0};
	char rel[256];

	str_fmt_cut(rel, sizeof rel, "_attachments/%s", name);
	if (!text || path_mkdirs_beneath(r->workdir, "_attachments", 0700, &e) < 0 ||
	    path_write_beneath(r->workdir, rel, text, strlen(text), 0600, &e) < 0)
		vm_log(r->c->vm, FLOW_WARN, "ansible: the statistics were not saved: %s",
		       e.msg[0] ? e.msg : "out of memory");
	free(text);
}

/* ansible_stats_v2.json: every run of the process, in order, as Concord's callback and task
 * leave it: [{playbook, stats, exitCode}, …]. */
static void save_stats_v2(struct run *r, json_t *stats, int code)
{
	struct err e = {0};
	size_t len;
	char *old = path_read_beneath(r->workdir, "_attachments/ansible_stats_v2.json", 64u << 20, &len, &e);
	json_t *runs = old ? json_loadb(old, len, 0, NULL) : NULL;

	free(old);
	if (!json_is_array(runs)) {
		json_decref(runs);
		runs = json_array();
	}
	json_array_append_new(
	    runs, json_pack("{s:O?, s:O, s:i}", "playbook", param(r, "playbook"), "stats", stats, "exitCode", code));
	save_attachment(r, "ansible_stats_v2.json", json_dumps(runs, JSON_INDENT(2)));
	json_decref(runs);
}

/* enableStats: _attachments/ansible_stats.json as Concord leaves it (the hosts by outcome
 * and the exit code; the server also puts it in the process's meta as ansibleStats), and
 * this run added to ansible_stats_v2.json. */
static void save_stats(struct run *r, json_t *stats, int code)
{
	json_t *v = json_deep_copy(stats);

	if (!v)
		return;
	json_object_set_new(v, "exitCode", json_integer(code));
	save_attachment(r, "ansible_stats.json", json_dumps(v, JSON_INDENT(2)));
	json_decref(v);
	save_stats_v2(r, stats, code);
}

/* Whether outVars (a list of names, or Concord's "a, b" string) asks for _stats. */
static bool names_stats(json_t *names)
{
	char *text = list_text(names);
	bool found = false;

	for (const char *t = text; t && *t && !found;) {
		size_t n;
		t += strspn(t, ", ");
		n = strcspn(t, ", ");
		found = n == 6 && strncmp(t, "_stats", 6) == 0;
		t += n;
	}
	free(text);
	return found;
}

/* The result: ok, exitCode, the outVars and the host statistics the callback left. */
static json_t *result(struct run *r, int code)
{
	json_t *res = json_pack("{s:b, s:i}", "ok", code == 0, "exitCode", code), *out, *v;
	char path[4300];
	const char *k;

	str_fmt_cut(path, sizeof path, "%s/out.json", r->dir);
	out = json_load_file(path, 0, NULL);
	json_object_foreach(json_object_get(out, "vars"), k, v) json_object_set(res, k, v);
	if ((v = json_object_get(out, "stats"))) {
		json_object_set(res, "ansibleStats", v);
		if (flag_or(r, "enableStats", true))
			save_stats(r, v, code);
		if (names_stats(param(r, "outVars")))
			json_object_set(res, "_stats", v);
	}
	json_decref(out);
	return res;
}

/* saveRetryFile: a failed run's <playbook>.retry becomes an attachment. */
static void save_retry(struct run *r)
{
	const char *pb = json_string_value(param(r, "playbook")), *dot = strrchr(pb, '.'), *slash = strrchr(pb, '/');
	struct err e = {0};
	char rel[4300], att[4300], *data;
	size_t len;

	if (!flag(r, "saveRetryFile"))
		return;
	str_fmt_cut(rel, sizeof rel, "%.*s.retry", (int)(dot && (!slash || dot > slash) ? dot - pb : (long)strlen(pb)),
		    pb);
	if (!(data = path_read_beneath(r->workdir, rel, 16u << 20, &len, &e))) {
		vm_log(r->c->vm, FLOW_WARN, "Retry file not found: %s", rel);
		return;
	}
	slash = strrchr(rel, '/');
	str_fmt_cut(att, sizeof att, "_attachments/%s", slash ? slash + 1 : rel);
	if (path_mkdirs_beneath(r->workdir, "_attachments", 0700, &e) == 0 &&
	    path_write_beneath(r->workdir, att, data, len, 0600, &e) == 0)
		vm_log(r->c->vm, FLOW_INFO, "The retry file was saved as: %s", att);
	free(data);
}

static void run_free(struct run *r)
{
	struct err e;
	for (size_t i = 0; i < r->n_files; i++) {
		free((char *)r->files[i].path);
		free((char *)r->files[i].data);
	}
	free(r->files);
	strv_free(&r->argv);
	strv_free(&r->env);
	ansible_krb5_free(r->krb5);
	if (r->dir[0] && path_remove_tree(r->dir, &e) < 0)
		vm_log(r->c->vm, FLOW_WARN, "ansible: %s", e.msg);
}

static int ansible_execute(struct task_ctx *c, json_t *in, json_t **out, struct err *e)
{
	struct run r = {.c = c, .in = in, .workdir = c->h->workdir};
	struct flow_tool_result res = {0};
	int rc;

	if (!c->h->ops->tool_run || !r.workdir)
		return err_set(e, ERR_UNAVAILABLE, "ansible: external programs cannot run here");
	if (!json_object_get(in, "dockerImage") && access(ANSIBLE_EXE, X_OK) != 0)
		return err_set(e, ERR_UNAVAILABLE,
			       "ansible: " ANSIBLE_EXE " is not installed on this node: install the Debian package "
			       "'ansible-core' (apt-get install ansible-core)");
	if ((rc = prepare(&r, e)) == 0) {
		struct flow_tool t = {.name = "ansible",
				      .exe = r.exe,
				      .argv = r.argv.v,
				      .env = r.env.v,
				      .files = r.files,
				      .n_files = r.n_files,
				      .event_type = "ANSIBLE", /* events when enabled, lookups' requests */
				      .request = ansible_lookup_answer,
				      .request_ctx = c,
				      .tick = r.krb5 ? ansible_krb5_tick : NULL,
				      .tick_ctx = r.krb5,
				      .tick_ms = ANSIBLE_KRB5_TICK_MS};
		vm_log(c->vm, FLOW_INFO, "Using a playbook: %s", json_string_value(param(&r, "playbook")));
		debug_log(&r);
		if (flag(&r, "check"))
			vm_log(c->vm, FLOW_WARN, "Running in the check mode. No changes will be made.");
		if (flag(&r, "syntaxCheck"))
			vm_log(c->vm, FLOW_WARN, "Running in the syntax check mode. No changes will be made.");
		if (r.image) {
			rc = ansible_docker_run(c, r.image, &t, &res.exit_code, e);
			if (r.events)
				ansible_docker_events(c, r.dir);
		} else
			rc = c->h->ops->tool_run(c->h->ctx, &t, &res, e);
	}
	if (rc == 0) {
		*out = result(&r, res.exit_code);
		if (res.exit_code != 0) {
			save_retry(&r);
			vm_log(c->vm, FLOW_WARN, "Playbook is finished with code %d", res.exit_code);
			if (!flag(&r, "ignoreErrors")) {
				json_decref(*out);
				*out = NULL;
				rc = err_set(e, ERR_INVALID, "Process finished with exit code %d", res.exit_code);
			}
		}
	}
	run_free(&r);
	return rc;
}

static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_ansible = {"ansible", ansible_execute, no_methods, false, false};
