#include "auth/ldap_pool.h"

#include <pthread.h>
#include <stdint.h>

#include "base/ldap_api.h"
#include "auth/ldap_realm.h"
#include "base/datetime.h"

#define POOL_CAP 64

struct idle_conn {
	LDAP *ld;
	int64_t since_ms;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct idle_conn idle[POOL_CAP];
static size_t n_idle;

static size_t pool_size(void)
{
	return ldap_settings.pool_size < POOL_CAP ? ldap_settings.pool_size : POOL_CAP;
}

void ldap_pool_drop(LDAP *ld)
{
	if (ld)
		ldapi.unbind_ext_s(ld, NULL, NULL);
}

/* Moves the connections idle since before cutoff_ms (the oldest ones, at the front) to
 * out; returns how many.  Under mu. */
static size_t take_expired(int64_t cutoff_ms, LDAP **out)
{
	size_t n = 0;

	while (n < n_idle && idle[n].since_ms < cutoff_ms) {
		out[n] = idle[n].ld;
		n++;
	}
	for (size_t i = n; i < n_idle; i++)
		idle[i - n] = idle[i];
	n_idle -= n;
	return n;
}

LDAP *ldap_pool_take(void)
{
	LDAP *expired[POOL_CAP], *ld = NULL;
	size_t n;

	pthread_mutex_lock(&mu);
	n = take_expired(dt_now_ms() - ldap_settings.pool_idle_s * 1000, expired);
	if (n_idle)
		ld = idle[--n_idle].ld;
	pthread_mutex_unlock(&mu);
	for (size_t i = 0; i < n; i++)
		ldap_pool_drop(expired[i]);
	return ld;
}

void ldap_pool_give(LDAP *ld)
{
	LDAP *extra = ld;

	if (!ld)
		return;
	pthread_mutex_lock(&mu);
	if (n_idle < pool_size()) {
		idle[n_idle++] = (struct idle_conn){ld, dt_now_ms()};
		extra = NULL;
	}
	pthread_mutex_unlock(&mu);
	ldap_pool_drop(extra);
}

void ldap_pool_clear(void)
{
	LDAP *all[POOL_CAP];
	size_t n;

	pthread_mutex_lock(&mu);
	n = take_expired(INT64_MAX, all);
	pthread_mutex_unlock(&mu);
	for (size_t i = 0; i < n; i++)
		ldap_pool_drop(all[i]);
}
