#ifndef ACCORD_FLOW_VM_H
#define ACCORD_FLOW_VM_H

#include <jansson.h>

#include "base/err.h"
#include "flow/host.h"
#include "flow/model.h"

/* The flow VM: threads → frames (ROOT / NON_ROOT) → a program counter into compiled steps
 * plus locals (reference §3).  Parallel branches and parallel loop iterations are VM
 * threads interleaved on one OS thread, so the whole state is plain data: vm_save turns it
 * into JSON and vm_load brings it back, which is how suspend, forms, checkpoints and resume
 * work.  Not thread-safe: one VM per OS thread. */

struct vm;

enum vm_status { VM_RUNNING, VM_FINISHED, VM_FAILED, VM_SUSPENDED };

/* m and h are BORROWED and must outlive the VM. */
struct vm *vm_new(const struct model *m, const struct flow_host *h);
void vm_free(struct vm *vm);

/* Creates the main thread: evaluates configuration.arguments over args (BORROWED; the
 * command-line arguments win) and sysvars (BORROWED; always win), then calls entry.
 * Fails with ERR_NOT_FOUND for an unknown flow, or the arguments' evaluation error. */
int vm_start(struct vm *vm, const char *entry, json_t *args, json_t *sysvars, struct err *e) WUR;
/* The same with defaults (BORROWED; NULL: none) below the definition's arguments: the
 * arguments of the organization's and the project's cfg (Concord's order: org < project <
 * definition and profiles < request), expressions too, evaluated first. */
int vm_start_defaults(struct vm *vm, const char *entry, json_t *defaults, json_t *args, json_t *sysvars,
		      struct err *e) WUR;

/* Runs until every thread has finished, failed or suspended. */
enum vm_status vm_run(struct vm *vm);

/* The state as JSON (NEW), and back.  vm_load refuses a state written for another
 * definition (model hash) or one that does not fit the model. */
json_t *vm_save(struct vm *vm);
struct vm *vm_load(const struct model *m, const struct flow_host *h, json_t *state, struct err *e);

/* After vm_load: the system variables of the resumed run (BORROWED: workDir, processInfo,
 * …) replace the saved ones in the main thread's bottom frame and wherever a frame holds a
 * copy of them (parallel branches), as a resumed Concord process sees its own run's. */
void vm_set_sysvars(struct vm *vm, json_t *sysvars);

/* Wakes the threads waiting for event `name`, or submits the pending form `name` with
 * values args (validated and coerced like a form submission).  For an event, args (a map,
 * BORROWED, may be NULL) is written into every ROOT frame of the resumed threads.
 * ERR_NOT_FOUND when nothing waits for name; ERR_INVALID for form validation errors. */
int vm_resume(struct vm *vm, const char *name, json_t *args, struct err *e) WUR;

/* Event names waited for (NEW array of strings) and pending forms (NEW object
 * formName → {name, eventName, fields, values, options}). */
json_t *vm_waiting_events(struct vm *vm);
json_t *vm_pending_forms(struct vm *vm);

/* Out variables: each name evaluated as ${name} against the main thread's root frame;
 * nulls and undefined ones skipped.  NEW object. */
json_t *vm_out_vars(struct vm *vm, json_t *names);

/* Marks a value sensitive: its text (strings of a list or map) is masked as ****** in the
 * log from now on, also after a resume (the list is part of the saved state).  And whether
 * a string is one. */
void vm_mark_sensitive(struct vm *vm, const json_t *value);
bool vm_is_sensitive(struct vm *vm, const char *value);

/* The unhandled error of a failed process as out.json's lastError (BORROWED), or NULL. */
json_t *vm_last_error(struct vm *vm);

#endif
