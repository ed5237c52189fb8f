/* Opened clones kept for reuse.  Opening a bare clone and loading its pack index costs
 * about half a millisecond, as much again to unmap it; a start resolves and checks out, so
 * it paid that twice.  libgit2 repository objects are not for two threads at once, so a
 * caller takes one out of the pool (or opens a new one) and gives it back after use: starts
 * of one repository still run in parallel, each with its own object.  A fetch drops the
 * repository's objects (they would notice new packs and refs anyway, but a fresh open is
 * the certain way), as does repo_forget. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "git/git_api.h"
#include "repo/internal.h"

#define POOL_MAX 16

struct pooled {
	char id[UUID_STR_LEN];
	git_repository *g;
	struct pooled *next;
};

static void free_list(struct pooled *p)
{
	while (p) {
		struct pooled *next = p->next;
		git.repository_free(p->g);
		free(p);
		p = next;
	}
}

int repo_open_clone(struct repos *rs, const struct repository *r, git_repository **g, struct err *e)
{
	struct pooled **pp, *hit = NULL;
	char *dir;
	int rc = 0;

	*g = NULL;
	if (git_api_load(e))
		return -1;
	pthread_mutex_lock(&rs->pool_lock);
	for (pp = &rs->pool; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->id, r->id) == 0) {
			hit = *pp;
			*pp = hit->next;
			rs->pooled--;
			break;
		}
	pthread_mutex_unlock(&rs->pool_lock);
	if (hit) {
		*g = hit->g;
		free(hit);
		return 0;
	}
	if (!(dir = repo_clone_dir(rs, r->id, e)))
		return -1;
	if (git.repository_open_bare(g, dir) < 0)
		rc = err_set(e, ERR_INTERNAL, "cannot open the clone of repository %s: %s", r->name, git_api_error());
	free(dir);
	return rc;
}

void repo_close_clone(struct repos *rs, const char *repo_id, git_repository *g)
{
	struct pooled *p, *evicted = NULL, **pp;

	if (!g)
		return;
	if (!(p = calloc(1, sizeof *p))) {
		git.repository_free(g);
		return;
	}
	if (str_fmt(p->id, sizeof p->id, "%s", repo_id)) { /* not an id: not pooled */
		free(p);
		git.repository_free(g);
		return;
	}
	p->g = g;
	pthread_mutex_lock(&rs->pool_lock);
	p->next = rs->pool; /* most recently used first */
	rs->pool = p;
	if (++rs->pooled > POOL_MAX) { /* the least recently used goes */
		for (pp = &rs->pool; (*pp)->next; pp = &(*pp)->next)
			;
		evicted = *pp;
		*pp = NULL;
		rs->pooled--;
	}
	pthread_mutex_unlock(&rs->pool_lock);
	free_list(evicted);
}

void repo_drop_clones(struct repos *rs, const char *repo_id)
{
	struct pooled *dropped = NULL, **pp, *p;

	pthread_mutex_lock(&rs->pool_lock);
	for (pp = &rs->pool; (p = *pp);) {
		if (!repo_id || strcmp(p->id, repo_id) == 0) {
			*pp = p->next;
			p->next = dropped;
			dropped = p;
			rs->pooled--;
		} else {
			pp = &p->next;
		}
	}
	pthread_mutex_unlock(&rs->pool_lock);
	free_list(dropped);
}
