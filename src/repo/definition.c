/* A repository's definition at a commit (repo.h repo_load_definition): checked out into a
 * staging folder and loaded as a process start would load it. */
#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "base/path.h"
#include "base/uuid.h"
#include "repo/internal.h"

int repo_load_definition(struct repos *rs, const struct repository *r, const struct repo_commit *commit,
			 struct model **m, struct err *e)
{
	char id[UUID_STR_LEN], *dir = NULL;
	/* git and mvn imports are fetched by a process start, not by a repository refresh */
	static const struct model_importer skip = {0};
	struct model_opts mo = {.server_imports = true, .importer = &skip};
	struct err ignored;
	int rc;

	*m = NULL;
	uuid_v4(id);
	if (asprintf(&dir, "%s/tmp/repo-%s", rs->cfg.data_dir, id) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	mo.path = dir;
	if ((rc = path_mkdirs(dir, 0700, e)) == 0 && (rc = repo_checkout(rs, r, commit, dir, e)) == 0) {
		*m = model_load(&mo, e);
		if (!*m && e->code == ERR_NOT_FOUND)
			rc = 0; /* no definition file: a repository without flows (Concord accepts it) */
		else if (!*m) { /* the loader's message stays: "(file): Error @ line …" */
			e->code = ERR_INVALID;
			rc = -ERR_INVALID;
		}
	}
	if (path_remove_tree(dir, &ignored))
		LOG_W("cannot remove %s: %s", dir, ignored.msg);
	free(dir);
	return rc;
}
