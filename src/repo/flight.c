/* Fetches in flight on this node (repo/internal.h): one per repository, shared by every
 * request that asks for the same repository meanwhile, and a count per user.
 *
 * "Meanwhile" is from the moment a request arrived, not from when a worker took it up:
 * a refresh that waited in the fetch pool's queue while a fetch of its repository ran (more
 * refreshes than workers) takes that fetch's result once it ran, instead of fetching again.
 * So an ended flight stays listed, the newest one per repository, URL and secret, for
 * FLIGHT_KEEP_NS. */
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "repo/internal.h"

/* How long an ended fetch can stand in for a request that arrived while it ran: longer
 * than such a request waits for a worker (a request is answered within
 * --http-request-timeout, 60 s by default, or its client has gone). */
#define FLIGHT_KEEP_NS ((int64_t)10 * 60 * 1000000000)

struct repo_flight {
	char repo_id[64];
	char url[2049];	    /* a fetch is shared only with requests for the same URL */
	char secret_id[64]; /* and the same credentials (an update may change them) */
	char user_id[64];
	unsigned refs;	  /* the list, the leader and every waiter */
	int64_t ended_ns; /* dt_mono_ns when it ended; 0 while it runs */
	int rc;
	struct err err;
	struct repo_flight *next;
};

static bool same(const struct repo_flight *f, const struct repository *r)
{
	return strcmp(f->repo_id, r->id) == 0 && strcmp(f->url, r->url) == 0 && strcmp(f->secret_id, r->secret_id) == 0;
}

/* The fetch of r that runs now, or else the one that ended after asked_ns. */
static struct repo_flight *find(struct repos *rs, const struct repository *r, int64_t asked_ns)
{
	struct repo_flight *ended = NULL;

	for (struct repo_flight *f = rs->flights; f; f = f->next)
		if (same(f, r) && !f->ended_ns)
			return f;
		else if (same(f, r) && f->ended_ns >= asked_ns)
			ended = f;
	return ended;
}

static unsigned of_user(struct repos *rs, const char *user_id)
{
	unsigned n = 0;

	for (struct repo_flight *f = rs->flights; f; f = f->next)
		n += !f->ended_ns && strcmp(f->user_id, user_id) == 0;
	return n;
}

static void unref(struct repo_flight *f)
{
	if (--f->refs == 0)
		free(f);
}

/* Unlists the ended flights of r's key other than keep (NULL: all of them), and every
 * ended flight older than FLIGHT_KEEP_NS. */
static void prune(struct repos *rs, const struct repository *r, const struct repo_flight *keep)
{
	int64_t now = dt_mono_ns();

	for (struct repo_flight **pp = &rs->flights; *pp;) {
		struct repo_flight *f = *pp;

		if (f->ended_ns && f != keep && ((r && same(f, r)) || now - f->ended_ns > FLIGHT_KEEP_NS)) {
			*pp = f->next;
			unref(f);
		} else {
			pp = &f->next;
		}
	}
}

void repo_flights_free(struct repos *rs)
{
	while (rs->flights) {
		struct repo_flight *f = rs->flights;

		rs->flights = f->next;
		unref(f);
	}
}

bool repo_flight_running(struct repos *rs, const char *repo_id)
{
	bool running = false;

	pthread_mutex_lock(&rs->flight_lock);
	for (struct repo_flight *f = rs->flights; f && !running; f = f->next)
		running = !f->ended_ns && strcmp(f->repo_id, repo_id) == 0;
	pthread_mutex_unlock(&rs->flight_lock);
	return running;
}

/* Waits for f (locked) and answers with its result. */
static int join(struct repos *rs, struct repo_flight *f, struct err *e)
{
	int rc;

	f->refs++;
	if (f->ended_ns)
		LOG_D("repository %s: takes the fetch that ran while it waited", f->repo_id);
	else
		LOG_D("repository %s: joins the fetch in flight", f->repo_id);
	while (!f->ended_ns)
		pthread_cond_wait(&rs->flight_done, &rs->flight_lock);
	rc = f->rc;
	if (rc && e)
		*e = f->err;
	unref(f);
	return rc;
}

int repo_flight_fetch(struct repos *rs, struct store_conn *c, const struct repository *r, const char *user_id,
		      int64_t asked_ns, bool skip_if_fetched, struct err *e)
{
	struct repo_flight *f;
	int rc;

	pthread_mutex_lock(&rs->flight_lock);
	prune(rs, NULL, NULL);
	if ((f = find(rs, r, asked_ns ? asked_ns : dt_mono_ns()))) { /* its result is ours */
		rc = join(rs, f, e);
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
	    str_fmt(f->url, sizeof f->url, "%s", r->url) ||
	    str_fmt(f->secret_id, sizeof f->secret_id, "%s", r->secret_id) ||
	    str_fmt(f->user_id, sizeof f->user_id, "%s", user_id ? user_id : "")) {
		pthread_mutex_unlock(&rs->flight_lock);
		free(f);
		return err_set(e, ERR_INVALID, "invalid repository or user id");
	}
	f->refs = 2; /* the list's and the leader's */
	f->next = rs->flights;
	rs->flights = f;
	pthread_mutex_unlock(&rs->flight_lock);

	rc = repo_fetch_locked(rs, c, r, skip_if_fetched, &f->err);

	pthread_mutex_lock(&rs->flight_lock);
	f->rc = rc;
	f->ended_ns = dt_mono_ns();
	if (rc && e)
		*e = f->err;
	prune(rs, r, f);
	pthread_cond_broadcast(&rs->flight_done);
	unref(f);
	pthread_mutex_unlock(&rs->flight_lock);
	return rc;
}
