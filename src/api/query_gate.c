#include "api/query_gate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/uuid.h"

/* Users with a query running; there are never more of them than queries running. */
struct user_slots {
	char user_id[UUID_STR_LEN];
	unsigned n;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct user_slots *users;
static size_t n_users, cap_users;
static size_t running;

static struct user_slots *find(const char *user_id)
{
	for (size_t i = 0; i < n_users; i++)
		if (strcmp(users[i].user_id, user_id) == 0)
			return &users[i];
	return NULL;
}

int query_gate_enter(const char *user_id, struct err *e)
{
	struct user_slots *u;
	int rc = 0;

	pthread_mutex_lock(&lock);
	u = find(user_id);
	if (running >= limits.query_concurrency) {
		rc = err_set(e, ERR_UNAVAILABLE,
			     "too many inventory queries are running (limit %zu, --limit-query-concurrency): "
			     "try again later",
			     limits.query_concurrency);
	} else if (u && u->n >= limits.query_per_user) {
		rc = err_set(e, ERR_UNAVAILABLE,
			     "you have %u inventory queries running, the most one user may run at once "
			     "(--limit-query-per-user): try again when one has finished",
			     u->n);
	} else if (!u && strlen(user_id) >= sizeof users->user_id) {
		rc = err_set(e, ERR_INTERNAL, "user id too long: %s", user_id);
	} else if (!u && n_users == cap_users) {
		size_t cap = cap_users ? 2 * cap_users : 8;
		struct user_slots *grown = realloc(users, cap * sizeof *grown);

		if (!grown) {
			rc = err_set(e, ERR_INTERNAL, "out of memory");
		} else {
			users = grown;
			cap_users = cap;
		}
	}
	if (rc == 0) {
		if (!u) {
			u = &users[n_users++];
			memset(u, 0, sizeof *u);
			memcpy(u->user_id, user_id, strlen(user_id) + 1); /* its length was checked above */
		}
		u->n++;
		running++;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

void query_gate_leave(const char *user_id)
{
	struct user_slots *u;

	pthread_mutex_lock(&lock);
	u = find(user_id);
	if (u) {
		running--;
		if (--u->n == 0)
			*u = users[--n_users];
	}
	pthread_mutex_unlock(&lock);
}
