/* `imports` of kind git (and the dispatch to mvn): repo.h repo_import_fetch. */
#include <dirent.h>
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "base/log.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/copy.h"
#include "repo/internal.h"
#include "repo/mvn.h"
#include "store/orgs.h"

#define MAX_EXCLUDES 64
#define MAX_DEPTH 128

struct excludes {
	regex_t re[MAX_EXCLUDES];
	size_t n;
};

static void excludes_free(struct excludes *x)
{
	for (size_t i = 0; i < x->n; i++)
		regfree(&x->re[i]);
	x->n = 0;
}

/* Each pattern anchored at both ends: it must match the whole relative path. */
static int excludes_compile(json_t *list, struct excludes *x, struct err *e)
{
	size_t i;
	json_t *v;

	x->n = 0;
	if (!list)
		return 0;
	if (json_is_string(list)) /* a single pattern */
		list = json_pack("[O]", list);
	else if (json_is_array(list))
		json_incref(list);
	else
		return err_set(e, ERR_INVALID, "'exclude' must be a list of regular expressions");
	json_array_foreach(list, i, v)
	{
		char *pat = NULL;
		int rc;

		if (!json_is_string(v) || x->n == MAX_EXCLUDES) {
			json_decref(list);
			excludes_free(x);
			return err_set(e, ERR_INVALID, "'exclude' must be a list of at most %d regular expressions",
				       MAX_EXCLUDES);
		}
		if (asprintf(&pat, "^(%s)$", json_string_value(v)) < 0)
			pat = NULL;
		rc = pat ? regcomp(&x->re[x->n], pat, REG_EXTENDED | REG_NOSUB) : REG_ESPACE;
		free(pat);
		if (rc) {
			json_decref(list);
			excludes_free(x);
			return err_set(e, ERR_INVALID, "invalid 'exclude' pattern '%.200s'", json_string_value(v));
		}
		x->n++;
	}
	json_decref(list);
	return 0;
}

static bool excluded(const struct excludes *x, const char *rel)
{
	for (size_t i = 0; i < x->n; i++)
		if (regexec(&x->re[i], rel, 0, NULL, 0) == 0)
			return true;
	return false;
}

/* Removes the entries of dir/rel whose relative path an exclude matches. */
static int prune(const char *root, const char *rel, const struct excludes *x, int depth, struct err *e)
{
	char *dir = NULL;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (depth > MAX_DEPTH)
		return err_set(e, ERR_LIMIT, "import: folders nested deeper than %d", MAX_DEPTH);
	if (asprintf(&dir, "%s%s%s", root, *rel ? "/" : "", rel) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (!(d = opendir(dir))) {
		rc = err_set(e, ERR_INTERNAL, "cannot read %s: %s", dir, strerror(errno));
		free(dir);
		return rc;
	}
	while (rc == 0 && (de = readdir(d))) {
		char *sub = NULL, *full = NULL;
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0 ||
		    asprintf(&full, "%s/%s", dir, de->d_name) < 0) {
			free(sub);
			rc = err_set(e, ERR_INTERNAL, "out of memory");
			break;
		}
		if (excluded(x, sub))
			rc = path_remove_tree(full, e);
		else if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode))
			rc = prune(root, sub, x, depth + 1, e);
		free(sub);
		free(full);
	}
	closedir(d);
	free(dir);
	return rc;
}

/* The clone of an import: 36 hex digits of the hash of its URL and secret id (never a
 * UUID, so never a project repository's clone).  The secret is part of it so that an
 * import without the secret never reads what was fetched with it. */
static void clone_id(struct repository *r)
{
	crypto_generichash_state st;
	unsigned char h[18];

	crypto_generichash_init(&st, NULL, 0, sizeof h);
	crypto_generichash_update(&st, (const unsigned char *)r->url, strlen(r->url) + 1);
	crypto_generichash_update(&st, (const unsigned char *)r->secret_id, strlen(r->secret_id));
	crypto_generichash_final(&st, h, sizeof h);
	sodium_bin2hex(r->id, sizeof r->id, h, sizeof h);
}

static const char *opt_str(json_t *spec, const char *key, struct err *e, int *bad)
{
	json_t *v = json_object_get(spec, key);

	if (!v || json_is_null(v))
		return NULL;
	if (json_is_string(v))
		return json_string_value(v);
	*bad = err_set(e, ERR_INVALID, "'%s' must be a string", key);
	return NULL;
}

/* The secret of the import into r (its org, name and id), checked by the caller's rule. */
static int import_secret(struct repo_imports *im, json_t *sec, struct repository *r, struct err *e)
{
	const char *org = json_string_value(json_object_get(sec, "org"));
	const char *name = json_string_value(json_object_get(sec, "name"));
	struct secret s;
	struct org o;
	int rc;

	if (!json_is_object(sec) || !name || !*name)
		return err_set(e, ERR_INVALID, "'secret' must be a map with a 'name'");
	if (json_object_get(sec, "password"))
		return err_set(e, ERR_INVALID,
			       "secret '%s': password-protected secrets cannot be used by imports (Concord: "
			       "\"Must be a non-password protected secret\")",
			       name);
	if (!im->c || !im->secret_check)
		return err_set(e, ERR_INVALID, "secret '%s': secrets of imports are available on the server only", name);
	if (org && (rc = store_org_find(im->c, org, &o, e)))
		return rc;
	if ((rc = store_secret_find(im->c, org ? o.id : im->org_id, name, &s, e)))
		return rc;
	if ((rc = im->secret_check(im->secret_ctx, &s, e)))
		return rc;
	if (str_fmt(r->org_id, sizeof r->org_id, "%s", s.org_id) ||
	    str_fmt(r->secret_id, sizeof r->secret_id, "%s", s.id) ||
	    str_fmt(r->secret_name, sizeof r->secret_name, "%s", s.name))
		return err_set(e, ERR_INTERNAL, "secret '%s': a name is too long", name);
	return 0;
}

/* The import's repository: URL (or base URL + name), path and secret. */
static int import_repository(struct repo_imports *im, json_t *spec, struct repository *r, struct err *e)
{
	int bad = 0;
	const char *url = opt_str(spec, "url", e, &bad), *name = opt_str(spec, "name", e, &bad);
	const char *path = opt_str(spec, "path", e, &bad), *base = im->rs->cfg.imports_git_base_url;
	char full[sizeof r->url];
	size_t blen;

	if (bad)
		return bad;
	if (url && name)
		return err_set(e, ERR_INVALID, "'url' and 'name' are mutually exclusive");
	if (!url && !name)
		return err_set(e, ERR_INVALID, "Mandatory parameter 'url' (or 'name') not found");
	if (name && (!base || !*base))
		return err_set(e, ERR_INVALID,
			       "'name: %.200s' needs the server's base URL of git imports (--imports-git-base-url)", name);
	if (name && (strstr(name, "..") || name[0] == '/'))
		return err_set(e, ERR_INVALID, "'name' must be 'org/repo', got '%.200s'", name);
	blen = base ? strlen(base) : 0;
	while (blen && base[blen - 1] == '/')
		blen--;
	if ((url && str_fmt(full, sizeof full, "%s", url)) ||
	    (name && str_fmt(full, sizeof full, "%.*s/%s", (int)blen, base, name)))
		return err_set(e, ERR_INVALID, "the URL of the import is too long (limit %zu bytes)", sizeof full - 1);
	if (path && !path_is_safe_relative(path))
		return err_set(e, ERR_INVALID, "'path' must be a relative path inside the repository: '%.200s'", path);
	memset(r, 0, sizeof *r);
	memcpy(r->url, full, sizeof full);
	repo_strip_url_credentials(full, r->name, sizeof r->name);
	if (path && str_fmt(r->path, sizeof r->path, "%s", path))
		return err_set(e, ERR_INVALID, "'path' is too long");
	if (str_fmt(r->org_id, sizeof r->org_id, "%s", im->org_id ? im->org_id : ""))
		return err_set(e, ERR_INTERNAL, "organization id too long");
	if (json_object_get(spec, "secret") && import_secret(im, json_object_get(spec, "secret"), r, e))
		return -1;
	clone_id(r);
	return 0;
}

/* A new scratch folder <data>/tmp/import-<uuid> in *out. */
int repo_import_scratch(const struct repos *rs, char **out, struct err *e)
{
	char id[UUID_STR_LEN];

	uuid_v4(id);
	if (asprintf(out, "%s/tmp/import-%s", rs->cfg.data_dir, id) < 0) {
		*out = NULL;
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	return path_mkdirs(*out, 0700, e);
}

void repo_import_scratch_done(char *dir)
{
	struct err e;

	if (dir && path_remove_tree(dir, &e))
		LOG_W("cannot remove %s: %s", dir, e.msg);
	free(dir);
}

static bool is_commit_id(const char *v)
{
	size_t n = strlen(v);

	return n == 40 && strspn(v, "0123456789abcdefABCDEF") == n;
}

static int git_import(struct repo_imports *im, json_t *spec, const char *dest, struct err *e)
{
	struct repository r;
	struct repo_commit cm;
	struct excludes x = {0};
	char *tmp = NULL;
	int bad = 0, rc;
	const char *version = opt_str(spec, "version", e, &bad);

	if (bad)
		return bad;
	if (!version || !*version)
		version = "master"; /* Concord's default */
	if ((rc = import_repository(im, spec, &r, e)) || (rc = excludes_compile(json_object_get(spec, "exclude"), &x, e)))
		return rc;
	rc = repo_prepare(im->rs, im->c, &r, is_commit_id(version) ? NULL : version,
			  is_commit_id(version) ? version : NULL, &cm, e);
	if (rc == 0)
		rc = repo_import_scratch(im->rs, &tmp, e);
	if (rc == 0)
		rc = repo_checkout(im->rs, &r, &cm, tmp, e);
	if (rc == 0 && x.n)
		rc = prune(tmp, "", &x, 0, e);
	if (rc == 0)
		rc = flow_copy_tree(tmp, dest, NULL, e);
	if (rc == 0 && json_array_append_new(im->resolved, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "git", "url",
								      r.name, "version", version, "path", r.path,
								      "commitId", cm.id)))
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	if (rc == 0)
		LOG_D("import of %s at %s (%.12s) done", r.name, version, cm.id);
	excludes_free(&x);
	repo_import_scratch_done(tmp);
	return rc;
}

int repo_import_fetch(void *ctx, const char *kind, json_t *spec, const char *dest, struct err *e)
{
	struct repo_imports *im = ctx;

	if (strcmp(kind, "git") == 0)
		return git_import(im, spec, dest, e);
	if (strcmp(kind, "mvn") == 0)
		return repo_mvn_import(im, spec, dest, e);
	return err_set(e, ERR_INVALID, "Unknown import '%s', expected git, mvn or dir", kind);
}
