/* Fetches in flight on this node (repo/internal.h): one per repository, shared by every
 * request that asks for the same repository meanwhile, and a count per user. */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/str.h"
#include "repo/internal.h"

struct repo_flight {
	char repo_id[64];
	char url[2049];	      /* a fetch is shared only with requests for the same URL */
	char secret_id[64];   /* and the same credentials (an update may change them) */
	char user_id[64];
	unsigned refs; /* the leader and every waiter */
	bool done;
	int rc;
	struct err err;
	struct repo_flight *next;
};

static struct repo_flight *find(struct repos *rs, const struct repository *r)
{
	for (struct repo_flight *f = rs->flights; f; f = f->next)
		if (strcmp(f->repo_id, r->id) == 0 && strcmp(f->url, r->url) == 0 &&
		    strcmp(f->secret_id, r->secret_id) == 0)
			return f;
	return NULL;
}

static unsigned of_user(struct repos *rs, const char *user_id)
{
	unsigned n = 0;

	for (struct repo_flight *f = rs->flights; f; f = f->next)
		n += strcmp(f->user_id, user_id) == 0;
	return n;
}

static void unref(struct repo_flight *f)
{
	if (--f->refs == 0)
		free(f);
}

bool repo_flight_running(struct repos *rs, const char *repo_id)
{
	bool running = false;

	pthread_mutex_lock(&rs->flight_lock);
	for (struct repo_flight *f = rs->flights; f && !running; f = f->next)
		running = strcmp(f->repo_id, repo_id) == 0;
	pthread_mutex_unlock(&rs->flight_lock);
	return running;
}

int repo_flight_fetch(struct repos *rs, struct store_conn *c, const struct repository *r, const char *user_id,
		      struct err *e)
{
	struct repo_flight *f, **pp;
	int rc;

	pthread_mutex_lock(&rs->flight_lock);
	if ((f = find(rs, r))) { /* join it: its result is ours */
		f->refs++;
		LOG_D("repository %s: joins the fetch in flight", r->id);
		while (!f->done)
			pthread_cond_wait(&rs->flight_done, &rs->flight_lock);
		rc = f->rc;
		if (rc && e)
			*e = f->err;
		unref(f);
		pthread_mutex_unlock(&rs->flight_lock);
		return rc;
	}
	if (user_id && rs->cfg.fetches_per_user && of_user(rs, user_id) >= rs->cfg.fetches_per_user) {
		pthread_mutex_unlock(&rs->flight_lock);
		return err_set(e, ERR_TOO_MANY,
			       "Too many repository fetches in flight for this user (at most %u, "
			       "--repo-fetches-per-user): try again when they end",
			       rs->cfg.fetches_per_user);
	}
	if (!(f = calloc(1, sizeof *f)) || str_fmt(f->repo_id, sizeof f->repo_id, "%s", r->id) ||
	    str_fmt(f->url, sizeof f->url, "%s", r->url) || str_fmt(f->secret_id, sizeof f->secret_id, "%s", r->secret_id) ||
	    str_fmt(f->user_id, sizeof f->user_id, "%s", user_id ? user_id : "")) {
		pthread_mutex_unlock(&rs->flight_lock);
		free(f);
		return err_set(e, ERR_INVALID, "invalid repository or user id");
	}
	f->refs = 1;
	f->next = rs->flights;
	rs->flights = f;
	pthread_mutex_unlock(&rs->flight_lock);

	rc = repo_fetch_locked(rs, c, r, false, &f->err);

	pthread_mutex_lock(&rs->flight_lock);
	for (pp = &rs->flights; *pp != f; pp = &(*pp)->next)
		;
	*pp = f->next;
	f->rc = rc;
	f->done = true;
	if (rc && e)
		*e = f->err;
	pthread_cond_broadcast(&rs->flight_done);
	unref(f);
	pthread_mutex_unlock(&rs->flight_lock);
	return rc;
}
