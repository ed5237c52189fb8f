/* Fetching a repository and loading its definition (api/repositories.h): what create,
 * update, refresh and validate share. */
#include "api/repositories.h"
#include "flow/model.h"
#include "repo/repo.h"

int repository_available(struct api_call *c)
{
	if (!c->app->repos)
		return api_fail(c, ERR_UNAVAILABLE, "Repositories are not available on this server");
	return 0;
}

int repository_load(struct api_call *c, const struct repository *r, struct repo_commit *commit, struct model **m)
{
	int rc;

	*m = NULL;
	if ((rc = repository_available(c)) || (rc = repo_fetch_for(c->app->repos, c->db, r, c->who.user.id,
								   c->req ? c->req->start_ns : 0, commit, &c->err)))
		return rc;
	return repo_load_definition(c->app->repos, r, commit, m, &c->err);
}
