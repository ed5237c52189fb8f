#include "runner/identity.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/str.h"

int runner_identity_resolve(const char *name, bool *drop, uid_t *uid, gid_t *gid, struct err *e)
{
	struct passwd pw, *found = NULL;
	char buf[4096];
	int rc;

	*drop = false;
	if (geteuid() != 0) {
		if (!name || !*name)
			return 0;
		rc = getpwnam_r(name, &pw, buf, sizeof buf, &found);
		if (found && found->pw_uid == geteuid())
			return 0; /* runners are this user anyway */
		return err_set(e, ERR_INVALID,
			       "--runner-user %.64s: only a server started as root can run its runners as another user",
			       name);
	}
	if (!name || !*name)
		name = "nobody";
	rc = getpwnam_r(name, &pw, buf, sizeof buf, &found);
	if (!found)
		return err_set(e, ERR_INVALID, "--runner-user %.64s: no such user%s%s", name, rc ? ": " : "",
			       rc ? strerror(rc) : "");
	if (found->pw_uid == 0)
		return err_set(e, ERR_INVALID,
			       "--runner-user %.64s: runners never run as root (flows are untrusted code); name an "
			       "unprivileged user",
			       name);
	*drop = true;
	*uid = found->pw_uid;
	*gid = found->pw_gid;
	return 0;
}

int runner_identity_check_reach(const char *dir, uid_t uid, gid_t gid, struct err *e)
{
	char path[4096];
	size_t n;

	if (str_fmt(path, sizeof path, "%s", dir))
		return err_set(e, ERR_INVALID, "work folder path too long: %.200s", dir);
	for (n = strlen(path); n > 1; n--) {
		struct stat st;
		bool ok;
		if (path[n - 1] != '/')
			continue;
		path[n - 1 > 0 ? n - 1 : 1] = '\0'; /* the parent: "/a/b/" → "/a/b" ("/" for "/a") */
		if (n - 1 == 0)
			path[0] = '/', path[1] = '\0';
		if (stat(path, &st) != 0)
			return err_set(e, ERR_INVALID, "cannot check %s: %s", path, strerror(errno));
		ok = st.st_uid == uid ? (st.st_mode & S_IXUSR) != 0
		     : st.st_gid == gid ? (st.st_mode & S_IXGRP) != 0 : (st.st_mode & S_IXOTH) != 0;
		if (!ok)
			return err_set(e, ERR_INVALID,
				       "the runners' user (uid %u) cannot pass through %s (mode %03o) to reach the work "
				       "folder %s: allow it (chmod o+x %s), or choose --work-dir or --data elsewhere",
				       (unsigned)uid, path, st.st_mode & 0777, dir, path);
	}
	return 0;
}

/* 1 with the id the environment names (never 0: root), 0 when unset, -1 when malformed. */
static int env_id(const char *name, unsigned long *out)
{
	const char *v = getenv(name);
	int64_t n;

	if (!v)
		return 0;
	if (str_to_i64(str_from(v), 1, 0x7fffffff, &n, name, NULL) < 0)
		return -1;
	*out = (unsigned long)n;
	return 1;
}

int runner_identity_apply(struct err *e)
{
	unsigned long uid, gid;
	int has_uid = env_id("ACCORD_RUNNER_UID", &uid), has_gid = env_id("ACCORD_RUNNER_GID", &gid);

	if (has_uid == 0 && has_gid == 0)
		return 0;
	if (has_uid != 1 || has_gid != 1)
		return err_set(e, ERR_INVALID, "ACCORD_RUNNER_UID and ACCORD_RUNNER_GID must both name a non-root id");
	if (getuid() == (uid_t)uid && geteuid() == (uid_t)uid)
		return 0; /* the zygote's child: taken already */
	if (setgroups(0, NULL) != 0 || setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) != 0 ||
	    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0)
		return err_set(e, ERR_INTERNAL, "cannot run as uid %lu gid %lu: %s", uid, gid, strerror(errno));
	if (geteuid() == 0 || setuid(0) == 0) /* there is no way back */
		return err_set(e, ERR_INTERNAL, "still root after dropping to uid %lu", uid);
	/* A change of identity made the process undumpable (its /proc/self owned by root) and
	 * cleared its parent-death signal. */
	if (prctl(PR_SET_DUMPABLE, 1) != 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
		return err_set(e, ERR_INTERNAL, "prctl after dropping to uid %lu: %s", uid, strerror(errno));
	if (getppid() == 1) /* the parent died meanwhile */
		return err_set(e, ERR_UNAVAILABLE, "the server stopped");
	return 0;
}
