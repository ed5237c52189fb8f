/* Fetching a repository and loading its definition (api/repositories.h): what create,
 * update, refresh and validate share. */
#include <stdio.h>
#include <stdlib.h>

#include "api/repositories.h"
#include "base/log.h"
#include "base/path.h"
#include "base/uuid.h"
#include "flow/model.h"
#include "repo/repo.h"

int repository_available(struct api_call *c)
{
	if (!c->app->repos)
		return api_fail(c, ERR_UNAVAILABLE, "Repositories are not available on this server");
	return 0;
}

/* The definition at commit: checked out into a staging folder, loaded as a start would. */
static int load_commit(struct api_call *c, const struct repository *r, const struct repo_commit *commit,
		       struct model **m)
{
	char id[UUID_STR_LEN], *dir = NULL;
	struct model_opts mo = {.server_imports = true};
	struct err ignored;
	int rc;

	uuid_v4(id);
	if (asprintf(&dir, "%s/tmp/repo-%s", c->app->data_dir, id) < 0)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	mo.path = dir;
	if ((rc = path_mkdirs(dir, 0700, &c->err)) == 0 &&
	    (rc = repo_checkout(c->app->repos, r, commit, dir, &c->err)) == 0) {
		*m = model_load(&mo, &c->err);
		if (!*m && c->err.code == ERR_NOT_FOUND)
			rc = 0; /* no definition file: a repository without flows (Concord accepts it) */
		else if (!*m)
			rc = api_recode(c, ERR_INVALID);
	}
	if (path_remove_tree(dir, &ignored))
		LOG_W("cannot remove %s: %s", dir, ignored.msg);
	free(dir);
	return rc;
}

int repository_load(struct api_call *c, const struct repository *r, struct repo_commit *commit, struct model **m)
{
	int rc;

	*m = NULL;
	if ((rc = repository_available(c)) || (rc = repo_fetch(c->app->repos, c->db, r, commit, &c->err)))
		return rc;
	return load_commit(c, r, commit, m);
}
