#include "crypto/keypool.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/log.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static struct keypair ready[KEYPOOL_MAX];
static size_t n_ready, target;
static bool running, started, announced;
static atomic_bool cancel; /* stops the generation in progress (keypool_stop) */
static pthread_t thread;

static void *generator(void *arg)
{
	(void)arg;
	/* Lower priority for this thread only (Linux: a thread id is a PRIO_PROCESS who). */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0)
		LOG_D("keypool: could not lower the generator's priority");
	pthread_mutex_lock(&mu);
	while (running) {
		struct keypair kp;
		struct err e;
		int rc;

		if (n_ready >= target) {
			if (!announced) {
				announced = true;
				LOG_I("secrets: %zu RSA key pair(s) generated ahead of demand", n_ready);
			}
			pthread_cond_wait(&wake, &mu);
			continue;
		}
		pthread_mutex_unlock(&mu);
		rc = keypair_generate_cancellable(KEYPAIR_RSA, &cancel, &kp, &e);
		pthread_mutex_lock(&mu);
		if (rc) {
			if (running) /* else keypool_stop cancelled it */
				LOG_W("keypool: %s", e.msg);
			break;
		}
		if (running && n_ready < target)
			ready[n_ready++] = kp;
		else
			keypair_cleanup(&kp);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int keypool_start(size_t n, struct err *e)
{
	if (n > KEYPOOL_MAX)
		return err_set(e, ERR_INVALID, "key pool size %zu is larger than %d", n, KEYPOOL_MAX);
	if (n == 0)
		return 0;
	if (keypair_init(e))
		return -ERR_INTERNAL;
	pthread_mutex_lock(&mu);
	target = n;
	running = true;
	atomic_store(&cancel, false);
	if (pthread_create(&thread, NULL, generator, NULL) != 0) {
		running = false;
		pthread_mutex_unlock(&mu);
		return err_set(e, ERR_INTERNAL, "cannot start the key-pair generator thread");
	}
	started = true;
	pthread_mutex_unlock(&mu);
	return 0;
}

int keypool_take(struct keypair *kp)
{
	int rc = -1;

	pthread_mutex_lock(&mu);
	if (n_ready > 0) {
		*kp = ready[--n_ready];
		memset(&ready[n_ready], 0, sizeof ready[n_ready]);
		pthread_cond_signal(&wake);
		rc = 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

size_t keypool_ready(void)
{
	size_t n;

	pthread_mutex_lock(&mu);
	n = n_ready;
	pthread_mutex_unlock(&mu);
	return n;
}

void keypool_stop(void)
{
	bool join;

	pthread_mutex_lock(&mu);
	join = started;
	running = false;
	started = false;
	atomic_store(&cancel, true);
	pthread_cond_signal(&wake);
	pthread_mutex_unlock(&mu);
	if (join)
		pthread_join(thread, NULL);
	pthread_mutex_lock(&mu);
	while (n_ready)
		keypair_cleanup(&ready[--n_ready]);
	announced = false;
	pthread_mutex_unlock(&mu);
}
