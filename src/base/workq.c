#include "base/workq.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

struct job {
	struct job *next;
	workq_fn fn;
	void *arg;
};

struct workq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *head, *tail;
	bool stopping;
	size_t n;
	pthread_t threads[];
};

static void *worker(void *p)
{
	struct workq *q = p;

	for (;;) {
		struct job *j;
		pthread_mutex_lock(&q->mu);
		while (!q->head && !q->stopping)
			pthread_cond_wait(&q->cv, &q->mu);
		j = q->head;
		if (!j) {
			pthread_mutex_unlock(&q->mu);
			return NULL;
		}
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		pthread_mutex_unlock(&q->mu);
		j->fn(j->arg);
		free(j);
	}
}

struct workq *workq_new(size_t n, const char *name, struct err *e)
{
	struct workq *q = calloc(1, sizeof *q + n * sizeof(pthread_t));

	if (!q || n == 0) {
		free(q);
		err_set(e, ERR_INTERNAL, "cannot create a work queue of %zu threads", n);
		return NULL;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	for (; q->n < n; q->n++)
		if (pthread_create(&q->threads[q->n], NULL, worker, q) != 0) {
			err_set(e, ERR_INTERNAL, "cannot start worker thread %zu of %zu", q->n + 1, n);
			workq_free(q);
			return NULL;
		} else {
			(void)pthread_setname_np(q->threads[q->n], name);
		}
	return q;
}

int workq_push(struct workq *q, workq_fn fn, void *arg)
{
	struct job *j = malloc(sizeof *j);

	if (!j)
		return -1;
	*j = (struct job){NULL, fn, arg};
	pthread_mutex_lock(&q->mu);
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return 0;
}

void workq_free(struct workq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stopping = true;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	for (size_t i = 0; i < q->n; i++)
		pthread_join(q->threads[i], NULL);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
}
