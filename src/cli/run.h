#ifndef ACCORD_CLI_RUN_H
#define ACCORD_CLI_RUN_H

#include <stdio.h>

#include <jansson.h>

#include "flow/host.h"
#include "flow/mask.h"
#include "runner/script_host.h"

/* Internal to `accord run`: the local flow host (run_host.c) and the command (run.c). */

struct run_host {
	struct flow_host host;
	FILE *events;  /* --events FILE, or NULL */
	char *workdir; /* absolute */
	struct mask sensitive; /* printed as ****** (sensitive(x) in the flow) */
	struct script_hosts scripts; /* script steps' helper processes */
};

/* Sets up h->host for a process in workdir; events may be NULL. */
void run_host_init(struct run_host *h, const char *workdir, FILE *events, int debug);

/* Wipes the sensitive values, ends the script helpers. */
void run_host_cleanup(struct run_host *h);

/* Prints one log line "<ts> [LEVEL] msg" on stdout (also used for load errors). */
void run_log_line(struct run_host *h, enum flow_level level, const char *msg);

#endif
