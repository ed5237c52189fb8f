#ifndef ACCORD_RUNNER_RUNNER_H
#define ACCORD_RUNNER_RUNNER_H

#include <jansson.h>

#include "base/frame.h"
#include "base/memdir.h"
#include "flow/host.h"
#include "flow/mask.h"
#include "runner/script_host.h"

/* Internal to `accord runner`: the flow host that talks to the supervisor (host.c). */

struct runner_host {
	struct flow_host host;
	const char *workdir; /* absolute, BORROWED */
	int ipc;	     /* fd of the IPC socket */
	struct frame_reader in;
	long long next_call; /* id of the next server-task call */
	/* Sensitive values (secrets the server returned, sensitive() in the flow): printed as
	 * ****** in the log and in event data.  Wiped by runner_host_cleanup. */
	struct mask sensitive;
	struct script_hosts scripts; /* script steps' helper processes */
	/* The working directory's files when the start frame brought them ("files"): written
	 * into the (empty) folder by runner_host_files before the flow may touch it. */
	struct memdir files;
	bool files_pending;
};

void runner_host_init(struct runner_host *h, const char *workdir, int ipc);
void runner_host_cleanup(struct runner_host *h);

/* Adds strings to mask (a JSON array: the "sensitive" of a task reply or of a resumed
 * process's start frame). */
void runner_host_add_sensitive(struct runner_host *h, json_t *list);

/* Sends one frame (takes v); < 0 when the supervisor is gone. */
int runner_send(struct runner_host *h, json_t *v);

/* One log line "<ts> [LEVEL] msg" on stdout (the supervisor's log pipe). */
void runner_log(struct runner_host *h, enum flow_level level, const char *msg);

/* Writes the files the start frame brought into the working directory, once (flow/host.h
 * files); 0 when there is nothing to write. */
int runner_host_files(struct runner_host *h, struct err *e) WUR;

/* Flushes stdout. */
void runner_host_flush(struct runner_host *h);

int cli_runner_main(int argc, char **argv);

/* Runs one process once the start-up is done (by `accord runner` itself, or by a child
 * of the runner zygote, runner/zygote.h): stdin, stdout/stderr and fd 3 in place, the
 * working directory current, PR_SET_PDEATHSIG set.  Closes every other descriptor,
 * confines itself, reads the start frame and runs.  Returns the exit status. */
int runner_body(void);

#endif
