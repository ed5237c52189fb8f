#ifndef ACCORD_FLOW_VM_INTERNAL_H
#define ACCORD_FLOW_VM_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "flow/el/el.h"
#include "flow/vm.h"

/* Internal to the VM (vm.c scheduler and errors, exec.c steps, frames.c wrappers,
 * scope.c expressions and variables, state.c save/load, events.c, forms.c, tasks/). */

enum frame_kind {
	FR_LIST,     /* runs steps list->v[pc .. end) */
	FR_FLOW,     /* ROOT: a called flow's body; on completion the call's `out` */
	FR_TRY,	     /* NON_ROOT: the `error:` handler of a step */
	FR_LOOP,     /* NON_ROOT: loop bookkeeping (items, index, results, child threads) */
	FR_ITER,     /* ROOT: one loop iteration */
	FR_RETRY,    /* NON_ROOT: retry bookkeeping */
	FR_PARALLEL, /* NON_ROOT: waits for the branches of a `parallel` step */
};

/* The layers of a step with options, outermost first (reference §2 precedence). */
enum layer { LAYER_TRY, LAYER_LOOP, LAYER_RETRY, LAYER_CORE };

struct frame {
	enum frame_kind kind;
	bool root;
	json_t *locals;		 /* object, or NULL */
	const struct step *step; /* the step the frame belongs to (NULL for the entry flow) */
	const struct steps *list;
	size_t pc, end;
	int phase;
	json_t *data; /* kind-specific state, object or NULL */
	/* FR_LOOP, serial: the hot state kept out of data's hash table (frames.c), never
	 * saved.  items/next/results are BORROWED from data (NULL: not looked up yet); spare
	 * is a finished iteration's locals object, OWNED, kept for the next iteration. */
	json_t *items, *next, *results, *spare;
};

enum thread_state { TH_RUN, TH_WAIT, TH_SUSPENDED, TH_DONE, TH_FAILED };

struct thread {
	int id;
	int parent; /* parent thread id, -1 for the main thread */
	enum thread_state state;
	char *event;   /* TH_SUSPENDED: the event waited for */
	json_t *error; /* error being raised / the failure (lastError form) */
	bool fatal;    /* the error is a limit: no handler may catch it */
	json_t *final; /* TH_DONE/TH_FAILED: locals of the bottom frame */
	int64_t wake_ns; /* TH_RUN: sleeping until this dt_mono_ns() time (0: not sleeping) */
	struct task_wait *wait; /* TH_RUN: a task step waiting on its background job (jobs.c) */
	/* A server task step that suspended the thread and is called again when it resumes
	 * (exec_task_reenter): {"step": <model id>, "payload": <the task's answer>}, or NULL. */
	json_t *reentry;
	size_t n, cap;
	struct frame *frames;
};

struct vm {
	const struct model *m;
	struct vm_jobs *jobs; /* background jobs of task steps (jobs.c), made on first use */
	const struct flow_host *h;
	enum vm_status status;
	bool exiting;
	size_t n_threads, cap_threads;
	struct thread **threads;
	int next_thread_id;
	uint64_t steps;
	int next_error_id;
	json_t *forms;	    /* pending forms by name */
	json_t *last_error; /* unhandled failure */
	json_t *resume_args;
	json_t *sensitive;	/* strings marked sensitive (saved with the state) */
	const struct step *cur; /* step being executed (error positions) */
	struct thread *cur_t;
};

/* How names resolve while evaluating (el_env.ctx). */
struct lazy;
struct scope {
	struct vm *vm;
	struct thread *t;
	json_t *extra;	   /* extra bindings checked first (`result`), BORROWED, or NULL */
	struct lazy *lazy; /* `set` siblings, or NULL */
	json_t *keep;	   /* values handed out as borrowed that must live until the end */
	bool root_only;	   /* read the main thread's root frame (or its final locals) only */
};

/* vm.c */
struct thread *vm_thread_new(struct vm *vm, int parent);
struct thread *vm_thread_get(struct vm *vm, int id);
void vm_thread_free(struct thread *t);
void vm_thread_remove(struct vm *vm, int id);
struct frame *vm_push(struct thread *t, enum frame_kind kind, bool root, const struct step *s);
/* Pushes a ROOT frame whose locals (an object, taken over) are given. */
struct frame *vm_push_root(struct thread *t, enum frame_kind kind, const struct step *s, json_t *locals);
/* The top frame, or NULL (inline: every step asks for it several times). */
static inline struct frame *vm_top(struct thread *t)
{
	return t->n ? &t->frames[t->n - 1] : NULL;
}
void vm_frame_cleanup(struct frame *f);
struct frame *vm_nearest_root(struct thread *t);
/* Raises an error at step s (NULL: the current step): logs it with the call stack and
 * makes the thread unwind.  msg is the message; payload BORROWED or NULL. */
void vm_raise(struct vm *vm, struct thread *t, const struct step *s, const char *msg, json_t *payload);
/* Raises an existing error object (rethrow; BORROWED), without logging it again. */
void vm_rethrow(struct vm *vm, struct thread *t, json_t *err);
/* Raises a limit error: fails the process, no handler catches it. */
void vm_fatal(struct vm *vm, struct thread *t, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void vm_log(struct vm *vm, enum flow_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Pops the top frame after normal completion (call out, loop results). */
void vm_pop_done(struct vm *vm, struct thread *t);
/* A location string "(file) @ line: L, col: C" for messages. */
void vm_call_stack(struct vm *vm, struct thread *t, struct buf *b);

/* Sleeps ms for thread t: when other threads can run (parallel branches), the thread
 * sleeps after its current step while they go on; else the OS thread sleeps now. */
void vm_sleep(struct vm *vm, struct thread *t, int64_t ms);

/* jobs.c: task steps whose wait runs on a background thread (flow/tasks/task.h) */
struct task_wait {
	const struct step *s;
	struct task_job *job;
	json_t *in;
	char *corr;
	int64_t start_ns;
	pthread_t th;
	bool done; /* under the VM's job lock */
};
/* Starts w->job->run on a thread of its own and parks w on t; false (nothing started)
 * when no thread can be had: the caller runs the job inline then. */
bool vm_job_start(struct vm *vm, struct thread *t, struct task_wait *w);
bool vm_job_done(struct vm *vm, const struct task_wait *w);
/* Blocks until a job is done or until the dt_mono_ns() time until (0: no limit). */
void vm_job_wait(struct vm *vm, int64_t until);
/* Waits for w's thread to end and frees w (its job, in, corr). */
void vm_job_release(struct task_wait *w);
bool vm_jobs_running(const struct vm *vm);
void vm_jobs_free(struct vm *vm);

/* exec.c */
void exec_step(struct vm *vm, struct thread *t, const struct step *s);
void exec_layer(struct vm *vm, struct thread *t, const struct step *s, enum layer from);
void exec_core(struct vm *vm, struct thread *t, const struct step *s);
void exec_task_step(struct vm *vm, struct thread *t, const struct step *s);
/* The step's `in` evaluated (retry's `in` merged on a retry attempt): NEW object, or NULL
 * with the error raised on t. */
json_t *exec_eval_in(struct vm *vm, struct thread *t, const struct step *s);
/* Applies the step's `out` to result (BORROWED): a name gets it, a map is evaluated with it. */
void exec_apply_out(struct vm *vm, struct thread *t, const struct step *s, json_t *result);
/* Runs a task's execute (a `task:` step's work, events included) on behalf of a script:
 * *out is NEW (the step's `result` form), or < 0 with e set. */
int exec_task_inline(struct vm *vm, struct thread *t, const char *task, json_t *in, json_t **out, struct err *e) WUR;
/* Ends the task step of t whose background job is done (run_round). */
void exec_task_resume(struct vm *vm, struct thread *t);
/* Ends the server task step that suspended t, now resumed (t->reentry, run_round): the
 * host's server_task is called with method "resume" and the payload the task gave when
 * it suspended; its answer is the step's result (out, or the step's error). */
void exec_task_reenter(struct vm *vm, struct thread *t);

/* frames.c: one unit of work for the top frame of kinds other than FR_LIST/FR_FLOW */
void frame_run(struct vm *vm, struct thread *t, struct frame *f);
/* Offers the thread's pending error to frame f; true when f handled it. */
bool frame_catch(struct vm *vm, struct thread *t, struct frame *f);
/* Loop results of a finished iteration / thread. */
void frame_collect_iter(struct vm *vm, struct frame *loop, json_t *locals, size_t index);
/* Takes over a finished iteration's locals: kept for the loop's next iteration when
 * nothing else holds them, else released. */
void frame_iter_done(struct frame *loop, json_t *locals);
void frame_child_done(struct vm *vm, struct thread *child);

/* scope.c */
void scope_init(struct scope *sc, struct vm *vm, struct thread *t);
void scope_cleanup(struct scope *sc);
void scope_env(struct scope *sc, struct el_env *env);
/* Evaluates a template value; NEW reference or NULL with e set. */
json_t *scope_eval(struct scope *sc, const struct tval *tv, struct err *e);
int scope_eval_bool(struct scope *sc, const struct tval *tv, bool *out, struct err *e);
/* Reads a variable through the frames (BORROWED) or NULL. */
json_t *scope_get(struct thread *t, const char *name);
/* Writes into the nearest ROOT frame (v is taken over). */
void scope_set(struct thread *t, const char *name, json_t *v);
/* All visible variables merged, top frame winning (NEW). */
json_t *scope_all(struct thread *t);
/* Evaluates a `set` map lazily and writes the results. */
int scope_set_vars(struct scope *sc, const struct tval *map, struct err *e);
/* Expands dotted top-level keys of an evaluated map (in place). */
int scope_expand_dotted(json_t *obj, struct err *e);

/* events.c */
void events_step(struct vm *vm, struct thread *t, const struct step *s, const char *description);
/* events_step with the description prefix + text (NULL: ""), built only when events are
 * recorded: a step that runs a million times does not format a million descriptions. */
void events_step_about(struct vm *vm, struct thread *t, const struct step *s, const char *prefix, const char *text);
/* Emits the pre event and returns the correlation id (NEW string). */
char *events_task_pre(struct vm *vm, struct thread *t, const char *task, const char *method, json_t *in);
void events_task_post(struct vm *vm, struct thread *t, const char *task, const char *method, const char *corr,
		      int64_t duration_ms, const char *error, json_t *out);

/* script.c: a `script:` step */
void script_step(struct vm *vm, struct thread *t, const struct step *s);

/* forms.c */
void forms_call(struct vm *vm, struct thread *t, const struct step *s);
int forms_submit(struct vm *vm, const char *name, json_t *values, json_t **result, struct err *e);

#endif
