#ifndef ACCORD_API_PROCESS_ACCESS_H
#define ACCORD_API_PROCESS_ACCESS_H

#include "api/api.h"
#include "store/processes.h"

/* Access to one process (docs/security.md "Processes"):
 *   PROC_READ   status, log, attachments, events: the initiator, readers of its project,
 *               admins and global readers, and the process's own session;
 *   PROC_WRITE  stop, events with includeAll (and resume, later): the initiator, writers
 *               of its project, admins, and the process's own session;
 *   PROC_KILL   kill, disable, restart: as PROC_WRITE, refused in Concord's words
 *               (ProcessManager.assertKillOrDisableOrRestartRights).
 * A process without a project is visible to its initiator and admins only. */
enum proc_need { PROC_READ, PROC_WRITE, PROC_KILL };

/* Loads process `id` and checks that the caller may do `need`: 404 "Process instance not
 * found: <id>" for a malformed or unknown id, 403 "The current user (<u>) doesn't have the
 * necessary permissions to access process: <id>" otherwise — for PROC_KILL "The current
 * user (<u>) doesn't have the necessary access level (WRITER) to the project: <p>", or for a
 * process without a project "The current user (<u>) does not have permissions to kill or
 * disable the process: <id>".  On success *p is filled
 * (release with store_process_cleanup). */
int api_process_load(struct api_call *c, const char *id, enum proc_need need, struct process *p) WUR;

/* Whether a scoped API key reaches the process (the org/project its scopes for the route
 * are narrowed to; admins' keys too): 0, or ERR_FORBIDDEN naming the scope.  Part of
 * api_process_check; alone for a check that grants access otherwise (a form's runAs). */
int api_process_reach(struct api_call *c, const struct process *p) WUR;

/* The same check on a process already loaded. */
int api_process_check(struct api_call *c, const struct process *p, enum proc_need need) WUR;

#endif
