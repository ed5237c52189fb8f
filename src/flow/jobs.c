/* Background jobs of task steps (flow/tasks/task.h, struct task_job): a parallel branch
 * whose HTTP call waits on the network runs that wait on a thread of its own while the
 * VM's thread goes on with the other branches.  The VM stays single-threaded: a job's
 * thread touches only the job's data, and the VM takes the result on its own thread
 * (exec_task_resume).  A VM never saves its state while a job runs: a suspended or
 * checkpointed state has no running threads. */
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

struct vm_jobs {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a job is done */
};

static struct vm_jobs *jobs_of(struct vm *vm)
{
	pthread_condattr_t a;
	struct vm_jobs *j;

	if (vm->jobs)
		return vm->jobs;
	if (!(j = calloc(1, sizeof *j)))
		return NULL;
	if (pthread_condattr_init(&a) != 0) {
		free(j);
		return NULL;
	}
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (pthread_mutex_init(&j->mu, NULL) != 0) {
		pthread_condattr_destroy(&a);
		free(j);
		return NULL;
	}
	if (pthread_cond_init(&j->cv, &a) != 0) {
		pthread_condattr_destroy(&a);
		pthread_mutex_destroy(&j->mu);
		free(j);
		return NULL;
	}
	pthread_condattr_destroy(&a);
	return vm->jobs = j;
}

struct job_arg {
	struct vm_jobs *jobs;
	struct task_wait *w;
};

static void *job_main(void *p)
{
	struct job_arg a = *(struct job_arg *)p;
	sigset_t stop;

	/* Stop signals are the VM thread's: while a task's program runs it reads them from a
	 * signalfd to kill the program first (runner/tool.h); taken here, they would end the
	 * runner and leave the program running. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	free(p);
	a.w->job->run(a.w->job);
	pthread_mutex_lock(&a.jobs->mu);
	a.w->done = true;
	pthread_cond_broadcast(&a.jobs->cv);
	pthread_mutex_unlock(&a.jobs->mu);
	return NULL;
}

bool vm_job_start(struct vm *vm, struct thread *t, struct task_wait *w)
{
	struct vm_jobs *j = jobs_of(vm);
	struct job_arg *a = j ? malloc(sizeof *a) : NULL;

	if (!a)
		return false;
	*a = (struct job_arg){j, w};
	w->done = false;
	if (pthread_create(&w->th, NULL, job_main, a) != 0) {
		free(a);
		return false;
	}
	t->wait = w;
	return true;
}

bool vm_job_done(struct vm *vm, const struct task_wait *w)
{
	bool done;

	pthread_mutex_lock(&vm->jobs->mu);
	done = w->done;
	pthread_mutex_unlock(&vm->jobs->mu);
	return done;
}

bool vm_jobs_running(const struct vm *vm)
{
	for (size_t i = 0; i < vm->n_threads; i++)
		if (vm->threads[i]->wait)
			return true;
	return false;
}

static bool any_done(const struct vm *vm)
{
	for (size_t i = 0; i < vm->n_threads; i++)
		if (vm->threads[i]->wait && vm->threads[i]->wait->done)
			return true;
	return false;
}

void vm_job_wait(struct vm *vm, int64_t until)
{
	struct vm_jobs *j = vm->jobs;
	struct timespec ts = {.tv_sec = until / 1000000000, .tv_nsec = until % 1000000000};

	pthread_mutex_lock(&j->mu);
	while (!any_done(vm)) {
		if (!until) {
			pthread_cond_wait(&j->cv, &j->mu);
		} else if (pthread_cond_timedwait(&j->cv, &j->mu, &ts) != 0) {
			break; /* a sleeping branch is due */
		}
	}
	pthread_mutex_unlock(&j->mu);
}

void vm_job_release(struct task_wait *w)
{
	if (!w)
		return;
	pthread_join(w->th, NULL);
	w->job->free(w->job);
	json_decref(w->in);
	free(w->corr);
	free(w);
}

void vm_jobs_free(struct vm *vm)
{
	if (!vm->jobs)
		return;
	pthread_cond_destroy(&vm->jobs->cv);
	pthread_mutex_destroy(&vm->jobs->mu);
	free(vm->jobs);
	vm->jobs = NULL;
}
