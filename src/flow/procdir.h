#ifndef ACCORD_FLOW_PROCDIR_H
#define ACCORD_FLOW_PROCDIR_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/mask.h"
#include "flow/vm.h"

/* What a process leaves in its working directory (DESIGN.md §2), shared by `accord run`
 * and `accord runner`:
 *   _attachments/out.json            out variables (and lastError of a failed process)
 *   _attachments/_state/instance     the VM state of a suspended process
 *   _attachments/_state/_suspend     the event names it waits for, one per line
 *   _attachments/_state/V2forms/<f>  its pending forms
 *   _attachments/_state/checkpoints/<name>  checkpoint states */

/* Writes out.json from the names in configuration.out plus extra_out (BORROWED array, may
 * be NULL), merged into an existing out.json; with failed, lastError too.  No file when
 * there is nothing to report (as Concord).  Sensitive values (may be NULL) are written as
 * ******, as in the log: out.json becomes a process attachment and meta.out, which every
 * reader of the project sees. */
int procdir_write_out(const char *workdir, struct vm *vm, const struct mask *sensitive, json_t *cfg_out,
		      json_t *extra_out, bool failed,
		      struct err *e) WUR;

/* Saves the state of a suspended VM and, when report is not NULL, prints
 * "Process suspended, waiting for: …" and "Pending form: …" lines to it. */
int procdir_write_suspended(const char *workdir, struct vm *vm, FILE *report, struct err *e) WUR;

/* Removes the suspended state (checkpoints stay). */
int procdir_drop_state(const char *workdir, struct err *e) WUR;

/* The saved state that waits for `event`, or the checkpoint named `event` (*checkpoint
 * set).  NEW reference; NULL with ERR_NOT_FOUND when nothing waits for it. */
json_t *procdir_saved_state(const char *workdir, const char *event, bool *checkpoint, struct err *e);

/* The state of the checkpoint named name (a restore).  NEW reference; NULL with
 * ERR_NOT_FOUND when the working directory has no such checkpoint. */
json_t *procdir_checkpoint_state(const char *workdir, const char *name, struct err *e);

/* Writes a checkpoint state file (the host's checkpoint callback). */
int procdir_write_checkpoint(const char *workdir, const char *name, json_t *state, struct err *e) WUR;

#endif
