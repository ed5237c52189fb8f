/* A create/update body of POST /api/v1/org/{org}/project/{project}/repository, checked
 * field by field (api/repositories.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/repositories.h"
#include "api/secrets.h"
#include "base/jsonx.h"
#include "base/names.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "repo/repo.h"

enum url_kind { URL_LOCAL, URL_HTTPS, URL_SSH };

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* [user@]host:path with a user (git's scp-like syntax; the '@' tells it from a Windows
 * drive or a typo'd scheme). */
static bool scp_like(const char *url)
{
	const char *at = strchr(url, '@'), *colon = strchr(url, ':'), *slash = strchr(url, '/');

	return at && colon && at < colon && at > url && colon > at + 1 && colon[1] && (!slash || slash > colon);
}

/* dir, resolved, contains target (already resolved or as written). */
static bool beneath(const char *dir, const char *target)
{
	char real[PATH_MAX];
	size_t n;

	if (!dir || !realpath(dir, real))
		return false;
	n = strlen(real);
	return strncmp(target, real, n) == 0 && (target[n] == '/' || target[n] == '\0');
}

/* Local repositories are off unless the operator allows their folder (--repo-local-dirs,
 * docs/security.md).  Even in an allowed folder, one inside the server's data folder
 * would let a project read the server's own files (the database, the master key, other
 * repositories' clones); one inside the work folder (--work-dir) other processes' files. */
static int check_local(struct api_call *c, const char *url)
{
	char data[PATH_MAX], target[PATH_MAX];
	struct err le;

	if (repo_url_local_check(c->app->repos, url, target, sizeof target, &le))
		return api_fail(c, ERR_INVALID, "'url': %s", le.msg);
	if (!realpath(c->app->data_dir, data))
		return api_fail(c, ERR_INTERNAL, "cannot resolve the data folder");
	if (beneath(data, target))
		return api_fail(c, ERR_INVALID, "'url': a repository inside the server's data folder is not allowed");
	if (beneath(c->app->work_dir, target))
		return api_fail(c, ERR_INVALID, "'url': a repository inside the server's work folder is not allowed");
	return 0;
}

static int url_kind(struct api_call *c, const char *url, enum url_kind *kind)
{
	if (!*url)
		return api_fail(c, ERR_INVALID, "'url' is required");
	if (strlen(url) > 2048)
		return api_fail(c, ERR_INVALID, "'url' is longer than 2048 characters");
	for (const char *p = url; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return api_fail(c, ERR_INVALID, "'url' contains a control character");
	*kind = URL_LOCAL;
	if (starts_with(url, "file://"))
		return starts_with(url, "file:///") ? check_local(c, url)
						    : api_fail(c, ERR_INVALID,
							       "'url': file:// URLs need an absolute path "
							       "(file:///path)");
	if (url[0] == '/')
		return check_local(c, url);
	*kind = URL_HTTPS;
	if (starts_with(url, "https://") || starts_with(url, "http://"))
		return url[strlen(starts_with(url, "https://") ? "https://" : "http://")]
			   ? 0
			   : api_fail(c, ERR_INVALID, "'url' has no host: %.256s", url);
	*kind = URL_SSH;
	if (starts_with(url, "ssh://"))
		return url[6] ? 0 : api_fail(c, ERR_INVALID, "'url' has no host: %.256s", url);
	if (!strstr(url, "://") && scp_like(url))
		return 0;
	return api_fail(c, ERR_INVALID,
			"'url' must be https://, http://, ssh://, user@host:path, file:///path or an absolute "
			"path, got '%.256s'",
			url);
}

int repository_url_check(struct api_call *c, const char *url)
{
	enum url_kind kind;

	return url_kind(c, url, &kind);
}

static int copy_field(struct api_call *c, const char *key, const char *v, char *dst, size_t cap)
{
	if (str_fmt(dst, cap, "%s", v))
		return api_fail(c, ERR_INVALID, "'%s' is longer than %zu characters", key, cap - 1);
	return 0;
}

static bool is_hex40(const char *s)
{
	if (strlen(s) != 40)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || (*s >= 'A' && *s <= 'F')))
			return false;
	return true;
}

/* branch XOR commitId (neither: the remote's default branch), path relative. */
static int read_ref(struct api_call *c, json_t *body, struct repository *r)
{
	const char *branch = NULL, *commit = NULL, *path = NULL;

	if (jsonx_str(body, "branch", false, &branch, &c->err) ||
	    jsonx_str(body, "commitId", false, &commit, &c->err) || jsonx_str(body, "path", false, &path, &c->err))
		return api_recode(c, ERR_INVALID);
	branch = branch && *branch ? branch : NULL;
	commit = commit && *commit ? commit : NULL;
	if (branch && commit)
		return api_fail(c, ERR_INVALID, "'branch' and 'commitId' exclude each other: give one of them");
	if (commit && !is_hex40(commit))
		return api_fail(c, ERR_INVALID, "'commitId' must be a full commit id (40 hex digits), got '%.64s'",
				commit);
	if (branch && (branch[0] == '-' || strstr(branch, "..") || strchr(branch, ' ') || strchr(branch, ':')))
		return api_fail(c, ERR_INVALID, "'branch' is not a valid branch or tag name: '%.128s'", branch);
	/* "/" (Concord's way to say "the root") and "" are the root. */
	if (path && (!*path || strcmp(path, "/") == 0))
		path = NULL;
	if (path && !path_is_safe_relative(path))
		return api_fail(c, ERR_INVALID, "'path' must be a relative path without '..', got '%.256s'", path);
	r->branch[0] = r->commit_id[0] = r->path[0] = '\0';
	if ((branch && copy_field(c, "branch", branch, r->branch, sizeof r->branch)) ||
	    (commit && copy_field(c, "commitId", commit, r->commit_id, sizeof r->commit_id)) ||
	    (path && copy_field(c, "path", path, r->path, sizeof r->path)))
		return -ERR_INVALID;
	return 0;
}

static int find_secret(struct api_call *c, const struct repository *r, const char *id, const char *name,
		       struct secret *s)
{
	int rc;

	if (id && !uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_INVALID, "'secretId' must be a UUID, got '%.64s'", id);
	rc = id ? store_secret_get(c->db, id, s, &c->err) : store_secret_find(c->db, r->org_id, name, s, &c->err);
	if (rc == -ERR_NOT_FOUND || (rc == 0 && strcmp(s->org_id, r->org_id) != 0))
		return api_fail(c, ERR_INVALID, "Secret not found: %.128s (in organization %s)", id ? id : name,
				r->org_name);
	return rc;
}

/* The secret's rules: usable by this project, readable by the caller, of a type that fits
 * the URL and openable by the server. */
static int check_secret(struct api_call *c, const struct repository *r, const struct secret *s, enum url_kind kind)
{
	char projects[512];
	bool ok;
	int rc;

	if ((rc = store_secret_project_allowed(c->db, s, r->project_id, &ok, &c->err)))
		return rc;
	if (!ok) {
		store_secret_projects_text(c->db, s, projects, sizeof projects);
		return api_fail(c, ERR_INVALID, "Secret '%s' is restricted to %s: not usable by project '%s'", s->name,
				projects, r->project_name);
	}
	if ((rc = secrets_check(c, s, ACCESS_READER)))
		return c->err.code == ERR_FORBIDDEN ? api_recode(c, ERR_INVALID) : rc;
	if (s->password_protected)
		return api_fail(c, ERR_INVALID,
				"Secret '%s' is protected by a password: the server cannot open it for git", s->name);
	if (s->type == SECRET_TYPE_DATA)
		return api_fail(c, ERR_INVALID,
				"Secret '%s' is a DATA secret: a repository needs a KEY_PAIR (ssh) or a "
				"USERNAME_PASSWORD (https) secret",
				s->name);
	if (kind == URL_LOCAL)
		return api_fail(c, ERR_INVALID, "A local repository takes no secret (got '%s')", s->name);
	if (kind == URL_SSH && s->type != SECRET_TYPE_KEY_PAIR)
		return api_fail(c, ERR_INVALID, "Secret '%s' is %s: ssh URLs need a KEY_PAIR secret", s->name,
				secret_type_name(s->type));
	if (kind == URL_HTTPS && s->type != SECRET_TYPE_USERNAME_PASSWORD)
		return api_fail(c, ERR_INVALID, "Secret '%s' is %s: http(s) URLs need a USERNAME_PASSWORD secret",
				s->name, secret_type_name(s->type));
	return 0;
}

static int read_secret(struct api_call *c, json_t *body, struct repository *r, enum url_kind kind)
{
	const char *id = NULL, *name = NULL;
	struct secret s;
	int rc;

	if (jsonx_str(body, "secretId", false, &id, &c->err) || jsonx_str(body, "secretName", false, &name, &c->err))
		return api_recode(c, ERR_INVALID);
	/* Older clients name the secret "secret". */
	if (!name && jsonx_str(body, "secret", false, &name, &c->err))
		return api_recode(c, ERR_INVALID);
	id = id && *id ? id : NULL;
	name = name && *name ? name : NULL;
	r->secret_id[0] = r->secret_name[0] = '\0';
	if (!id && !name)
		return 0;
	if ((rc = find_secret(c, r, id, name, &s)) || (rc = check_secret(c, r, &s, kind)))
		return rc;
	memcpy(r->secret_id, s.id, sizeof r->secret_id);
	memcpy(r->secret_name, s.name, sizeof r->secret_name);
	return 0;
}

static int read_flags(struct api_call *c, json_t *body, struct repository *r)
{
	static const char *const keys[] = {"disabled", "triggersDisabled"};
	bool *flags[] = {&r->disabled, &r->triggers_disabled};

	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(body, keys[i]);
		if (!v || json_is_null(v))
			continue;
		if (!json_is_boolean(v))
			return api_fail(c, ERR_INVALID, "'%s' must be true or false", keys[i]);
		*flags[i] = json_is_true(v);
	}
	return 0;
}

int repository_body(struct api_call *c, json_t *body, struct repository *r, char **meta)
{
	const char *name = NULL, *url = NULL;
	enum url_kind kind;
	int rc;

	*meta = NULL;
	if (jsonx_str(body, "name", !r->name[0], &name, &c->err) || jsonx_str(body, "url", false, &url, &c->err))
		return api_recode(c, ERR_INVALID);
	if (name && ((rc = name_check(name, "repository", NAME_PLAIN, &c->err)) ||
		     (rc = copy_field(c, "name", name, r->name, sizeof r->name))))
		return -ERR_INVALID;
	if (!url || !*url)
		return api_fail(c, ERR_INVALID, "'url' is required");
	if ((rc = url_kind(c, url, &kind)) || (rc = copy_field(c, "url", url, r->url, sizeof r->url)) ||
	    (rc = read_ref(c, body, r)) || (rc = read_secret(c, body, r, kind)) || (rc = read_flags(c, body, r)))
		return rc;
	return api_body_json_text(c, body, "meta", meta);
}
