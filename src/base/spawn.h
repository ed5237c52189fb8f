#ifndef ACCORD_BASE_SPAWN_H
#define ACCORD_BASE_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Starting a helper process from the (large, multi-threaded) server with posix_spawn
 * (vfork semantics: no copy of the server's page tables): the runner, the runner zygote,
 * the git fetch child.  The child gets exactly the descriptors asked for (every other one
 * is closed), an empty signal mask and default signal dispositions, optionally its own
 * process group (so that it and whatever it starts can be signalled together) and a
 * working directory. */

struct spawn_fd {
	int fd;	    /* the parent's descriptor; -1: /dev/null opened read-only */
	int target; /* its number in the child */
};

struct spawn_opts {
	const char *exe;
	char *const *argv, *const *env;
	const struct spawn_fd *fds; /* targets ascending from 0; every target above the last is closed */
	size_t n_fds;
	const char *cwd;  /* NULL: the server's */
	bool own_group;	  /* setpgid(0, 0) in the child */
};

/* 0 with *pid set, or the errno of the failure. */
int spawn_start(const struct spawn_opts *o, pid_t *pid);

#endif
