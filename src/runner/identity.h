#ifndef ACCORD_RUNNER_IDENTITY_H
#define ACCORD_RUNNER_IDENTITY_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/err.h"

/* Who runners run as (docs/security.md "Runners never run as root").  A server started as
 * root hands its runners an unprivileged user (`--runner-user`, default `nobody`): the
 * supervisor puts ACCORD_RUNNER_UID/ACCORD_RUNNER_GID in the runner's (and the zygote's)
 * clean environment, gives the working directory to that user, and the runner takes that
 * identity first thing — no supplementary groups, no capabilities. */

/* The user of name (NULL or "": "nobody" when the server is root, none otherwise) as
 * *uid and *gid; *drop false when runners keep the server's identity (a server that is not
 * root).  Refuses root itself, and another user when the server cannot switch to it. */
int runner_identity_resolve(const char *name, bool *drop, uid_t *uid, gid_t *gid, struct err *e) WUR;

/* Whether uid:gid may pass through every folder above dir (search permission), which a
 * runner of that user needs to reach <dir>/work/<id> by path: ERR_INVALID naming the first
 * folder in the way and what to do otherwise. */
int runner_identity_check_reach(const char *dir, uid_t uid, gid_t gid, struct err *e) WUR;

/* In the runner or the zygote, before anything else: takes the identity the environment
 * names (nothing when it names none).  Keeps the process dumpable (its own /proc/self
 * readable) and dying with its parent, both of which a change of identity resets. */
int runner_identity_apply(struct err *e) WUR;

#endif
