#include "api/query_gate.h"

#include <pthread.h>

#include "base/limits.h"
#include "base/tally.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tally users; /* users with a query running */
static size_t running;

static int admit(const char *user_id, struct err *e)
{
	unsigned n;
	int rc;

	if (running >= limits.query_concurrency)
		return err_set(e, ERR_UNAVAILABLE,
			       "too many inventory queries are running (limit %zu, --limit-query-concurrency): "
			       "try again later",
			       limits.query_concurrency);
	if ((n = tally_get(&users, user_id)) >= limits.query_per_user)
		return err_set(e, ERR_UNAVAILABLE,
			       "you have %u inventory queries running, the most one user may run at once "
			       "(--limit-query-per-user): try again when one has finished",
			       n);
	if ((rc = tally_add(&users, user_id, e)))
		return rc == -ERR_INVALID ? err_set(e, ERR_INTERNAL, "user id too long: %s", user_id) : rc;
	running++;
	return 0;
}

int query_gate_enter(const char *user_id, struct err *e)
{
	int rc;

	pthread_mutex_lock(&lock);
	rc = admit(user_id, e);
	pthread_mutex_unlock(&lock);
	return rc;
}

void query_gate_leave(const char *user_id)
{
	pthread_mutex_lock(&lock);
	if (tally_get(&users, user_id)) {
		tally_sub(&users, user_id);
		running--;
	}
	pthread_mutex_unlock(&lock);
}
