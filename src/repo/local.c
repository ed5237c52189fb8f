/* Repositories on the server's own disk (file:// URLs and paths): only inside the folders
 * the operator lists with --repo-local-dirs (issue 23 item 4, docs/security.md). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"
#include "repo/internal.h"

#define LOCAL_DIRS_MAX 64

void repo_local_dirs_free(struct repos *rs)
{
	for (size_t i = 0; i < rs->n_local_dirs; i++)
		free(rs->local_dirs[i]);
	free(rs->local_dirs);
	rs->local_dirs = NULL;
	rs->n_local_dirs = 0;
}

/* One folder of the list [p, p + n): absolute, existing, kept resolved. */
static int add_dir(struct repos *rs, const char *p, size_t n, struct err *e)
{
	char given[4096], *real;

	if (n == 0)
		return 0; /* "a::b" or a trailing ':' */
	if (n >= sizeof given)
		return err_set(e, ERR_INVALID, "--repo-local-dirs: a folder name is longer than %zu bytes",
			       sizeof given - 1);
	memcpy(given, p, n);
	given[n] = 0;
	if (given[0] != '/')
		return err_set(e, ERR_INVALID, "--repo-local-dirs: '%s' is not an absolute path", given);
	if (rs->n_local_dirs >= LOCAL_DIRS_MAX)
		return err_set(e, ERR_INVALID, "--repo-local-dirs: more than %d folders", LOCAL_DIRS_MAX);
	if (!(real = realpath(given, NULL)))
		return err_set(e, ERR_INVALID, "--repo-local-dirs: %s: %s", given, strerror(errno));
	rs->local_dirs[rs->n_local_dirs++] = real;
	return 0;
}

int repo_local_dirs_set(struct repos *rs, const char *list, struct err *e)
{
	const char *p = list;

	if (!list || !*list)
		return 0;
	if (!(rs->local_dirs = calloc(LOCAL_DIRS_MAX, sizeof *rs->local_dirs)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	for (;;) {
		size_t n = strcspn(p, ":");
		if (add_dir(rs, p, n, e))
			return -1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/* The path of a local URL (NULL: not local).  git reads file://PATH and any URL without a
 * scheme that is not scp-like ([user@]host:path) from the disk. */
static const char *local_path(const char *url)
{
	if (strncasecmp(url, "file://", 7) == 0)
		return url + 7;
	if (strstr(url, "://") || repo_url_kind(url) == REPO_URL_SSH)
		return NULL;
	return url;
}

static bool beneath(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int repo_url_local_check(const struct repos *rs, const char *url, char *resolved, size_t cap, struct err *e)
{
	const char *path = local_path(url);
	char real[4096];

	if (cap)
		resolved[0] = 0;
	if (!path)
		return 0;
	if (!rs || rs->n_local_dirs == 0)
		return err_set(e, ERR_INVALID,
			       "local repository URLs (file:// or a path) are not allowed on this server: an operator "
			       "allows folders with --repo-local-dirs");
	if (path[0] != '/')
		return err_set(e, ERR_INVALID, "a local repository needs an absolute path, got '%.256s'", path);
	/* git decodes %XX in file:// URLs: the folder checked would not be the one read. */
	if (strchr(path, '%'))
		return err_set(e, ERR_INVALID, "a local repository path may not contain '%%', got '%.256s'", path);
	/* The same answer whether the path exists or not: no probing of the server's disk. */
	if (!realpath(path, real))
		goto refused;
	for (size_t i = 0; i < rs->n_local_dirs; i++)
		if (beneath(rs->local_dirs[i], real)) {
			if (str_fmt(resolved, cap, "%s", real))
				return err_set(e, ERR_INVALID, "a local repository path is longer than %zu bytes",
					       cap - 1);
			return 0;
		}
refused:
	return err_set(e, ERR_INVALID,
		       "local repository '%.256s' is not an existing folder inside the folders allowed for local "
		       "repositories (--repo-local-dirs)",
		       path);
}
