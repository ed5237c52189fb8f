#ifndef ACCORD_RUNNER_SCRIPT_HOST_H
#define ACCORD_RUNNER_SCRIPT_HOST_H

#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"

/* The helper processes of script steps (docs/flows.md "Scripts"): one per engine per
 * process, started on the first step that needs it and reused by the later ones.  A helper
 * is a child of the runner (or of `accord run`): it inherits the runner's confinement
 * (Landlock, rlimits, no_new_privs) and process group, so stopping the process stops it.
 * It gets the working directory as its current and home folder, /dev/null as stdin, the
 * runner's stderr as stdout and stderr, and its end of the protocol socket as fd 3.
 * Not thread-safe: the VM's one thread uses it. */

enum { SCRIPT_N_ENGINES = 4 };

struct script_helper {
	pid_t pid; /* 0: not started */
	int fd;	   /* the runner's end of the protocol socket */
};

struct script_hosts {
	const char *workdir; /* BORROWED */
	struct script_helper h[SCRIPT_N_ENGINES];
};

void script_hosts_init(struct script_hosts *s, const char *workdir);
/* The helper of engine ("js", "python", "groovy", "ruby"), started if need be: *fd BORROWED.
 * Errors: ERR_NOT_FOUND an unknown engine or one not installed (the message names the
 * Debian package to install), ERR_INTERNAL it could not be started. */
int script_hosts_open(struct script_hosts *s, const char *engine, int *fd, struct err *e) WUR;
/* Kills engine's helper (it broke the protocol); the next open starts a new one. */
void script_hosts_lost(struct script_hosts *s, const char *engine);
/* Ends every helper: closes its socket, kills it and reaps it. */
void script_hosts_cleanup(struct script_hosts *s);

/* One line naming the engines this node has, e.g. "js (/usr/bin/node), python
 * (/usr/bin/python3); missing: groovy (apt-get install groovy), ruby (…)". */
void script_hosts_describe(char *buf, size_t cap);

#endif
