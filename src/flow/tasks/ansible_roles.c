/* The ansible task's `roles` (ansible_roles.h): Concord's external roles, cloned with
 * Debian's git through git_cli.h (the git task's credentials rules and confinement). */
#include "flow/tasks/ansible_roles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/git_cli.h"
#include "flow/vm_internal.h"

/* A role's field key: absent, or a string that is safe as a relative path (name, path) or
 * as a git argument (version). */
static int role_str(json_t *role, const char *key, bool as_path, const char **out, struct err *e)
{
	json_t *v = json_object_get(role, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || !json_string_length(v))
		return err_set(e, ERR_INVALID, "ansible: role '%s' must be a non-empty string", key);
	*out = json_string_value(v);
	if (as_path ? !path_is_safe_relative(*out) : (**out == '-' || strpbrk(*out, " \t\r\n")))
		return err_set(e, ERR_INVALID, "ansible: bad role %s '%s'", key, *out);
	return 0;
}

/* Runs git with args; a failure becomes Concord's "GIT finished with exit code N" with git's
 * reason. */
static int git(struct git_cli *g, struct err *e, const char *const *args)
{
	int code = 0;
	if (git_cli_run(g, false, &code, e, args) < 0)
		return -1;
	if (code != 0)
		return err_set(e, ERR_INVALID, "ansible: GIT finished with exit code %d: %s", code, git_cli_reason(g));
	return 0;
}

/* A role without src: Concord's shortcut, the flow's ansibleParams.roleSrc (its default
 * process variables) joined with '/' to the role's name ("my-org/my-roles"); *out NEW. */
static int default_src(struct task_ctx *c, const char *name, char **out, struct err *e)
{
	const char *base = json_string_value(json_object_get(scope_get(c->t, "ansibleParams"), "roleSrc"));
	size_t n = base ? strlen(base) : 0;

	*out = NULL;
	if (!n)
		return err_set(e, ERR_INVALID,
			       "ansible: role '%s' has no 'src': 'roleSrc' is required in default 'ansibleParams'",
			       name);
	if (asprintf(out, "%s%s%s", base, base[n - 1] == '/' ? "" : "/", name) < 0) {
		*out = NULL;
		return oom_fail(e);
	}
	return 0;
}

/* The src of a role without one (*src NEW, from default_src) and its folder's name: the
 * part of *name after its first '/', as Concord's. */
static int role_src(struct task_ctx *c, json_t *role, const char **name, char **src, struct err *e)
{
	if (default_src(c, *name, src, e) < 0)
		return -1;
	if (strchr(*name, '/'))
		*name = strchr(*name, '/') + 1;
	if (**name)
		return 0;
	free(*src);
	*src = NULL;
	return err_set(e, ERR_INVALID, "ansible: bad role name '%s'", json_string_value(json_object_get(role, "name")));
}

/* Clones one role {src, name, path, version, auth | privateKey} into roles_rel/<name> and
 * adds <roles_abs>/<name>[/<path>] to b (without src: role_src). */
static int fetch_one(struct task_ctx *c, json_t *role, const char *roles_rel, const char *roles_abs, struct buf *b,
		     struct err *e)
{
	const char *src, *name, *path, *version;
	char dest[4300], abs[4400], *derived = NULL;
	struct git_cli g;
	json_t *in;
	int rc;

	if (!json_is_object(role))
		return err_set(e, ERR_INVALID, "ansible: each of 'roles' must be a map {src, name, path, version}");
	if (role_str(role, "name", true, &name, e) < 0 || role_str(role, "path", true, &path, e) < 0 ||
	    role_str(role, "version", false, &version, e) < 0)
		return -1;
	src = json_string_value(json_object_get(role, "src"));
	if (!name)
		return err_set(e, ERR_INVALID, "ansible: Role 'name' is required");
	if ((!src || !*src) && role_src(c, role, &name, &derived, e) < 0)
		return -1;
	if (derived)
		src = derived;
	if (!git_cli_url_ok(src)) {
		rc = err_set(e, ERR_INVALID,
			     "ansible: role src '%s' is not an http(s), ssh or git URL (local repositories are not "
			     "reachable from a flow)",
			     src);
		free(derived);
		return rc;
	}
	str_fmt_cut(dest, sizeof dest, "%s/%s", roles_rel, name);
	in = json_pack("{s:s, s:O?, s:O?}", "url", src, "auth", json_object_get(role, "auth"), "privateKey",
		       json_object_get(role, "privateKey"));
	rc = in ? git_cli_init(&g, c, in, e) : oom_fail(e);
	json_decref(in);
	if (rc == 0) {
		vm_log(c->vm, FLOW_INFO, "ansible: fetching the role '%s' from %s", name, src);
		rc = git(&g, e, (const char *const[]){"clone", "--quiet", "--", src, dest, NULL});
	}
	free(derived);
	if (rc == 0 && version)
		rc = git(&g, e, (const char *const[]){"-C", dest, "checkout", "--quiet", version, "--", NULL});
	git_cli_cleanup(&g);
	if (rc < 0)
		return -1;
	str_fmt_cut(abs, sizeof abs, "%s/%s%s%s", roles_abs, name, path ? "/" : "", path ? path : "");
	if (path && path_exists_beneath(roles_abs, abs + strlen(roles_abs) + 1, e) != 1)
		return err_set(e, ERR_NOT_FOUND, "ansible: The specified role path doesn't exist: %s", path);
	return buf_printf(b, e, "%s:", abs);
}

char *ansible_roles_fetch(struct task_ctx *c, json_t *roles, const char *roles_rel, struct err *e)
{
	char roles_abs[4300], *out = NULL;
	struct buf b;
	json_t *role;
	size_t i;

	if (!json_is_array(roles)) {
		err_set(e, ERR_INVALID, "ansible: 'roles' must be a list of {src, name, path, version}");
		return NULL;
	}
	str_fmt_cut(roles_abs, sizeof roles_abs, "%s/%s", c->h->workdir, roles_rel);
	if (path_mkdirs(roles_abs, 0700, e) < 0)
		return NULL;
	buf_init(&b, 1u << 20);
	json_array_foreach(roles, i, role) if (fetch_one(c, role, roles_rel, roles_abs, &b, e) < 0) goto out;
	if (buf_printf(&b, e, "%s", roles_abs) < 0)
		goto out;
	out = buf_detach(&b, NULL);
out:
	buf_cleanup(&b);
	return out;
}
