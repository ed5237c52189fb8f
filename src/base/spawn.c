/* posix_spawn with the settings every helper process of the server gets (spawn.h). */
#include "base/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>

int spawn_start(const struct spawn_opts *o, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	int last = -1, rc;

	posix_spawn_file_actions_init(&fa);
	posix_spawnattr_init(&at);
	for (size_t i = 0; i < o->n_fds; i++) {
		if (o->fds[i].fd < 0)
			posix_spawn_file_actions_addopen(&fa, o->fds[i].target, "/dev/null", O_RDONLY, 0);
		else
			posix_spawn_file_actions_adddup2(&fa, o->fds[i].fd, o->fds[i].target);
		if (o->fds[i].target > last)
			last = o->fds[i].target;
	}
	posix_spawn_file_actions_addclosefrom_np(&fa, last + 1);
	if (o->cwd)
		posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
	if (o->own_group)
		posix_spawnattr_setpgroup(&at, 0);
	posix_spawnattr_setflags(&at, (o->own_group ? POSIX_SPAWN_SETPGROUP : 0) | POSIX_SPAWN_SETSIGMASK |
					  POSIX_SPAWN_SETSIGDEF);
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	rc = posix_spawn(pid, o->exe, &fa, &at, o->argv, o->env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return rc;
}
