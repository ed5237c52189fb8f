#include "api/log_followers.h"

#include <pthread.h>

#include "base/limits.h"
#include "base/tally.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct tally by_user, by_process;
static size_t following;

static int admit(const char *user_id, const char *process_id, struct err *e)
{
	unsigned n;
	int rc;

	if (following >= limits.log_followers)
		return err_set(e, ERR_TOO_MANY,
			       "too many logs are being followed on this server (limit %zu, --limit-log-followers): "
			       "try again later, or read the log without follow=true",
			       limits.log_followers);
	if ((n = tally_get(&by_user, user_id)) >= limits.log_followers_per_user)
		return err_set(e, ERR_TOO_MANY,
			       "you follow %u process logs already, the most one user may "
			       "(--limit-log-followers-per-user): close one first",
			       n);
	if ((n = tally_get(&by_process, process_id)) >= limits.log_followers_per_process)
		return err_set(e, ERR_TOO_MANY,
			       "the log of process %s has %u followers already, the most one process may have "
			       "(--limit-log-followers-per-process): close one first",
			       process_id, n);
	if ((rc = tally_add(&by_user, user_id, e)))
		return rc;
	if ((rc = tally_add(&by_process, process_id, e))) {
		tally_sub(&by_user, user_id);
		return rc;
	}
	following++;
	return 0;
}

int log_followers_enter(const char *user_id, const char *process_id, struct err *e)
{
	int rc;

	pthread_mutex_lock(&lock);
	rc = admit(user_id, process_id, e);
	pthread_mutex_unlock(&lock);
	return rc;
}

void log_followers_leave(const char *user_id, const char *process_id)
{
	pthread_mutex_lock(&lock);
	tally_sub(&by_user, user_id);
	tally_sub(&by_process, process_id);
	following--;
	pthread_mutex_unlock(&lock);
}
