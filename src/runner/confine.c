#include "runner/confine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/str.h"

/* The installed kernel headers may be older than the running kernel: the rights and the
 * ruleset fields of later ABIs are spelled out here.  The kernel accepts the longer struct
 * as long as the fields it does not know are zero. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef LANDLOCK_RULE_PATH_BENEATH
#define LANDLOCK_RULE_PATH_BENEATH 1
#endif

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4; left 0: the network is not restricted here */
	uint64_t scoped;	     /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define FS_R (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_RX (FS_R | LANDLOCK_ACCESS_FS_EXECUTE)
#define FS_RW_FILE (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE)
/* Named POSIX semaphores (glibc's sem_open in /dev/shm), which Python's multiprocessing
 * locks are and ansible-playbook cannot run without: create, open, use and remove files
 * by name, but not list the folder (docs/security.md "Runner confinement"). */
#define FS_SHM (FS_RW_FILE | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
/* The rights Landlock accepts on a rule for a file (not a folder). */
#define FS_FILE_RIGHTS                                                                                                 \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE |                   \
	 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

/* What a runner may read outside its working directory: what the dynamic loader, libc
 * (users, resolver, time zone), libcurl/TLS (CA certificates) and libsodium need, and
 * nothing of the data folder.  Paths that do not exist on this host are skipped. */
static const struct {
	const char *path;
	uint64_t access;
} system_paths[] = {
    {"/usr", FS_RX},		    /* programs, libraries, /usr/share/{zoneinfo,ca-certificates} */
    {"/lib", FS_RX},		    /* libraries where /lib is not a link into /usr */
    {"/lib64", FS_RX},		    /* the dynamic loader */
    {"/bin", FS_RX},		    /* /bin/sh where /bin is not a link into /usr */
    {"/etc/ld.so.cache", FS_R},	    /* the loader's library index */
    {"/etc/ssl", FS_R},		    /* CA certificates, openssl.cnf (Debian) */
    {"/etc/pki", FS_R},		    /* CA certificates (Fedora, RHEL) */
    {"/etc/ca-certificates", FS_R}, /* CA certificates (Arch) */
    {"/etc/resolv.conf", FS_R},	    /* DNS */
    {"/etc/hosts", FS_R},
    {"/etc/nsswitch.conf", FS_R},
    {"/etc/host.conf", FS_R},
    {"/etc/gai.conf", FS_R},
    {"/etc/services", FS_R},
    {"/etc/protocols", FS_R},
    {"/etc/passwd", FS_R}, /* getpwuid: user name and home folder */
    {"/etc/group", FS_R},
    {"/etc/localtime", FS_R},
    {"/etc/os-release", FS_R},	   /* the distribution's name: pip's user agent (ansible's virtualenv) */
    {"/etc/debian_version", FS_R},
    {"/etc/mime.types", FS_R}, /* Python's mimetypes (pip reading a file: index) */
    {"/etc/krb5.conf", FS_R}, /* Kerberos realms and KDCs: kinit (ansible's auth.krb5) */
    /* the script engines' configuration (docs/flows.md "Scripts"): Debian keeps Groovy's
       and the JVM's conf/ folders under /etc, linked from /usr */
    {"/etc/groovy", FS_R},
    {"/etc/java-11-openjdk", FS_R},
    {"/etc/java-17-openjdk", FS_R},
    {"/etc/java-21-openjdk", FS_R},
    {"/etc/java-25-openjdk", FS_R},
    {"/dev/null", FS_RW_FILE},
    {"/dev/shm", FS_SHM},
    {"/dev/zero", LANDLOCK_ACCESS_FS_READ_FILE},
    {"/dev/urandom", LANDLOCK_ACCESS_FS_READ_FILE},
    {"/dev/random", LANDLOCK_ACCESS_FS_READ_FILE},
    {"/proc/self", FS_R}, /* this process's own /proc/<pid> (maps, fd, status); its magic
			     links are still judged by where they lead */
};

/* /proc/self names the process that opens it: a zygote's preloaded descriptor would be
 * the zygote's /proc/<pid>, so the runner opens this one itself. */
#define OWN_PROC_PATH "/proc/self"

static long ll_create_ruleset(const struct ll_ruleset_attr *attr, size_t size, uint32_t flags)
{
	return syscall(SYS_landlock_create_ruleset, attr, size, flags);
}

/* Every file-system right the ABI knows: all of them are handled, so anything not granted
 * by a rule is denied. */
static uint64_t fs_rights(int abi)
{
	uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: execute … make_sym */
	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return r;
}

#define N_SYSTEM_PATHS (sizeof system_paths / sizeof system_paths[0])

/* confine_preload: the system paths opened once (fd -1: missing). */
static struct {
	int fd;
	bool dir;
} preloaded[N_SYSTEM_PATHS];
static bool have_preloaded;

static int add_rule(int ruleset, int fd, bool dir, const char *path, uint64_t access, uint64_t handled, struct err *e)
{
	struct ll_path_beneath_attr pb;

	pb.allowed_access = access & handled & (dir ? ~0ULL : FS_FILE_RIGHTS);
	pb.parent_fd = fd;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) != 0)
		return err_set(e, ERR_INTERNAL, "landlock: cannot add a rule for %s: %s", path, strerror(errno));
	return 0;
}

/* Opens path (O_PATH) into *fd and tells whether it is a folder: 1; 0 when it is missing
 * and not required; < 0 with e set. */
static int open_path(const char *path, bool required, int *fd, bool *dir, struct err *e)
{
	struct stat st;

	*fd = open(path, O_PATH | O_CLOEXEC);
	if (*fd < 0) {
		if (!required && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
			return 0;
		return err_set(e, ERR_INTERNAL, "landlock: cannot open %s: %s", path, strerror(errno));
	}
	if (fstat(*fd, &st) != 0) {
		int saved = errno;
		close(*fd);
		*fd = -1;
		return err_set(e, ERR_INTERNAL, "landlock: cannot stat %s: %s", path, strerror(saved));
	}
	*dir = S_ISDIR(st.st_mode);
	return 1;
}

/* Adds "path and everything beneath it may be accessed with access".  A missing path is
 * skipped (returns 0) unless required. */
static int add_path(int ruleset, const char *path, uint64_t access, uint64_t handled, bool required, struct err *e)
{
	bool dir = false;
	int fd, rc = open_path(path, required, &fd, &dir, e);

	if (rc <= 0)
		return rc;
	rc = add_rule(ruleset, fd, dir, path, access, handled, e);
	close(fd);
	return rc;
}

void confine_preload(void)
{
	struct err e;

	for (size_t i = 0; i < N_SYSTEM_PATHS; i++)
		if (strcmp(system_paths[i].path, OWN_PROC_PATH) == 0 ||
		    open_path(system_paths[i].path, false, &preloaded[i].fd, &preloaded[i].dir, &e) <= 0)
			preloaded[i].fd = -1;
	have_preloaded = true;
}

static int build_ruleset(int abi, const char *workdir, struct err *e)
{
	struct ll_ruleset_attr attr = {0};
	int ruleset;

	attr.handled_access_fs = fs_rights(abi);
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	ruleset = (int)ll_create_ruleset(&attr, sizeof attr, 0);
	if (ruleset < 0)
		return err_set(e, ERR_INTERNAL, "landlock: cannot create a ruleset: %s", strerror(errno));
	for (size_t i = 0; i < N_SYSTEM_PATHS; i++) {
		int rc = 0;
		if (!have_preloaded || strcmp(system_paths[i].path, OWN_PROC_PATH) == 0)
			rc = add_path(ruleset, system_paths[i].path, system_paths[i].access, attr.handled_access_fs,
				      false, e);
		else if (preloaded[i].fd >= 0)
			rc = add_rule(ruleset, preloaded[i].fd, preloaded[i].dir, system_paths[i].path,
				      system_paths[i].access, attr.handled_access_fs, e);
		if (rc < 0)
			goto fail;
	}
	if (add_path(ruleset, workdir, attr.handled_access_fs, attr.handled_access_fs, true, e) < 0)
		goto fail;
	return ruleset;
fail:
	close(ruleset);
	return -1;
}

int confine_runner(const char *workdir, char *desc, size_t desc_cap, struct err *e)
{
	long abi;
	int ruleset;

	if (desc_cap)
		desc[0] = '\0';
	/* Landlock needs it (short of CAP_SYS_ADMIN); a runner has no use for set-uid anyway. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return err_set(e, ERR_INTERNAL, "cannot set no_new_privs: %s", strerror(errno));
	abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (abi < 0) {
		if (errno != ENOSYS && errno != EOPNOTSUPP)
			return err_set(e, ERR_INTERNAL, "landlock: cannot query the ABI: %s", strerror(errno));
		str_fmt_cut(desc, desc_cap, "landlock unavailable (%s): working-directory path checks only",
			    errno == ENOSYS ? "kernel lacks it" : "disabled at boot");
		return 0;
	}
	ruleset = build_ruleset((int)abi, workdir, e);
	if (ruleset < 0)
		return -1;
	if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
		int saved = errno;
		close(ruleset);
		return err_set(e, ERR_INTERNAL, "landlock: cannot restrict the runner: %s", strerror(saved));
	}
	close(ruleset);
	str_fmt_cut(desc, desc_cap, "landlock ABI %ld: read-only system paths, read-write working directory%s", abi,
		    abi >= 6 ? ", signals and abstract sockets scoped" : "");
	return 1;
}

/* Whether a (resolved) lies beneath b (resolved) or is b. */
static bool beneath(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (n == 1) /* "/" */
		return true;
	return strncmp(a, b, n) == 0 && (a[n] == '/' || a[n] == '\0');
}

int confine_check_out_of_reach(const char *dir, const char *what, struct err *e)
{
	char real[PATH_MAX], sys[PATH_MAX], up[PATH_MAX];
	size_t cut;

	/* A folder not made yet: its nearest existing parent, resolved, with the rest after it */
	if (str_fmt(up, sizeof up, "%s", dir))
		return err_set(e, ERR_INVALID, "%s %s: too long", what, dir);
	cut = strlen(up);
	while (!realpath(up, real)) {
		char *slash = strrchr(up, '/');

		if (errno != ENOENT || !slash || slash == up)
			return err_set(e, ERR_INVALID, "%s %s: %s", what, dir, strerror(errno));
		*slash = '\0';
		cut = (size_t)(slash - up);
	}
	if (dir[cut] && str_fmt(real + strlen(real), sizeof real - strlen(real), "%s", dir + cut))
		return err_set(e, ERR_INVALID, "%s %s: too long", what, dir);
	for (size_t i = 0; i < sizeof system_paths / sizeof system_paths[0]; i++) {
		if (!realpath(system_paths[i].path, sys))
			continue; /* not on this host */
		if (beneath(real, sys) || beneath(sys, real))
			return err_set(e, ERR_INVALID,
				       "%s %s (%s) %s %s, which every flow's runner may open files in by name "
				       "(docs/security.md \"Runner confinement\"): choose a folder outside it "
				       "(for speed, a tmpfs mounted for the purpose, not /dev/shm)",
				       what, dir, real, beneath(real, sys) ? "lies beneath" : "holds", system_paths[i].path);
	}
	return 0;
}

int confine_probe(char *desc, size_t desc_cap)
{
	long abi = ll_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi < 0) {
		str_fmt_cut(desc, desc_cap,
			    "landlock unavailable (%s): runners are confined by working-directory path checks only",
			    errno == ENOSYS	  ? "kernel lacks it"
			    : errno == EOPNOTSUPP ? "disabled at boot"
						  : strerror(errno));
		return 0;
	}
	str_fmt_cut(desc, desc_cap,
		    "landlock ABI %ld: runners get read-only system paths and a read-write working directory%s", abi,
		    abi >= 6 ? ", signals and abstract sockets scoped" : "");
	return (int)abi;
}

int confine_close_fds(int keep_max, struct err *e)
{
	struct rlimit rl;

	if (keep_max < -1)
		keep_max = -1;
	if (syscall(SYS_close_range, (unsigned)keep_max + 1, ~0U, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return err_set(e, ERR_INTERNAL, "close_range: %s", strerror(errno));
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	for (rlim_t fd = (rlim_t)keep_max + 1; fd < rl.rlim_cur; fd++)
		close((int)fd);
	return 0;
}
