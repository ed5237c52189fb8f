#include "base/pack.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/archive_api.h"
#include "base/buf.h"
#include "base/memdir_blob.h"
#include "base/path.h"

#define PACK_CHUNK (64 * 1024)
#define PACK_DEPTH_MAX 64
#define NAME_FMT "%.200s"

/* What one extraction has used so far against its limits. */
struct extract {
	const struct pack_limits *lim;
	size_t packed_len;
	size_t n_entries;
	uint64_t n_bytes;
	int dirfd;
	char *chunk;
};

static int refuse(const char *name, const char *why, struct err *e)
{
	return err_set(e, ERR_INVALID, "archive entry '" NAME_FMT "' is not allowed: %s", name, why);
}

/* Checks an entry name; *rel_len is the length without one trailing '/' (ZIP folders). */
static int check_name(const char *name, size_t *rel_len, struct err *e)
{
	size_t n = strlen(name);
	char tmp[4096];

	if (n == 0)
		return refuse(name, "empty name", e);
	if (name[0] == '/')
		return refuse(name, "absolute name", e);
	if (strchr(name, '\\'))
		return refuse(name, "backslash in the name", e);
	if (n > 1 && name[n - 1] == '/')
		n--;
	if (n >= sizeof tmp)
		return refuse(name, "name too long", e);
	memcpy(tmp, name, n);
	tmp[n] = '\0';
	for (const char *p = tmp; (p = strstr(p, "..")) != NULL; p += 2)
		if ((p == tmp || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return refuse(name, "it leaves the working directory", e);
	if (!path_is_safe_relative(tmp))
		return refuse(name, "empty or '.' path component", e);
	*rel_len = n;
	return 0;
}

static int check_kind(struct archive_entry *ae, const char *name, struct err *e)
{
	mode_t t = archive.entry_filetype(ae);

	if (archive.entry_hardlink(ae))
		return refuse(name, "hard links are not allowed", e);
	if (t == AE_IFLNK || archive.entry_symlink(ae))
		return refuse(name, "symbolic links are not allowed", e);
	if (t == AE_IFREG || t == AE_IFDIR)
		return 0;
	if (t == AE_IFCHR || t == AE_IFBLK)
		return refuse(name, "devices are not allowed", e);
	if (t == AE_IFIFO)
		return refuse(name, "FIFOs are not allowed", e);
	if (t == AE_IFSOCK)
		return refuse(name, "sockets are not allowed", e);
	return refuse(name, "unknown entry type", e);
}

/* Opens (creating 0700 when missing) the folder `comp` inside parent without following
 * a symbolic link.  Whatever else is in the way (a link, a file) is removed first: the
 * archive replaces what is there. */
static int open_subdir(int parent, const char *comp, const char *name, struct err *e)
{
	struct stat st;
	int fd;

	if (fstatat(parent, comp, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode) && unlinkat(parent, comp, 0) != 0)
			return err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': cannot replace '%s': %s", name,
				       comp, strerror(errno));
	} else if (errno != ENOENT) {
		return err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': %s", name, strerror(errno));
	}
	if (mkdirat(parent, comp, 0700) != 0 && errno != EEXIST)
		return err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': cannot create folder '%s': %s", name,
			       comp, strerror(errno));
	fd = openat(parent, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': cannot open folder '%s': %s", name, comp,
			       strerror(errno));
	return fd;
}

/* Walks rel (a safe relative path of rel_len bytes) beneath dirfd, creating folders.
 * Returns an fd of the folder holding the last component and points *base at it. */
static int open_parent(int dirfd, char *rel, const char *name, const char **base, struct err *e)
{
	int fd = dirfd;
	char *p = rel, *slash;

	while ((slash = strchr(p, '/')) != NULL) {
		int next;
		*slash = '\0';
		next = open_subdir(fd, p, name, e);
		*slash = '/';
		if (fd != dirfd)
			close(fd);
		if (next < 0)
			return -1;
		fd = next;
		p = slash + 1;
	}
	*base = p;
	if (fd == dirfd && (fd = dup(dirfd)) < 0)
		return err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': %s", name, strerror(errno));
	return fd;
}

static int over_limits(struct extract *x, uint64_t more, struct err *e)
{
	uint64_t total, ratio_max;

	if (__builtin_add_overflow(x->n_bytes, more, &total) || total > x->lim->max_bytes)
		return err_set(e, ERR_TOO_LARGE, "archive: more than %llu unpacked bytes (limit-archive-bytes)",
			       (unsigned long long)x->lim->max_bytes);
	if (x->lim->max_ratio && !__builtin_mul_overflow((uint64_t)x->packed_len, x->lim->max_ratio, &ratio_max) &&
	    total > ratio_max)
		return err_set(e, ERR_TOO_LARGE,
			       "archive: unpacks to more than %u times its size of %zu bytes (limit-archive-ratio)",
			       x->lim->max_ratio, x->packed_len);
	return 0;
}

/* Copies the entry's data into a new file `base` in parentfd; an existing file (or link)
 * of that name is unlinked first so that a write never goes through a planted link. */
static int write_file(struct archive *a, struct extract *x, int parentfd, const char *base, const char *name,
		      bool exec, struct err *e)
{
	struct stat st;
	int fd, rc = -1;

	if (fstatat(parentfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode))
			return err_set(e, ERR_INVALID,
				       "archive entry '" NAME_FMT "' is not allowed: a folder of that name exists",
				       name);
		if (unlinkat(parentfd, base, 0) != 0)
			return err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': cannot replace: %s", name,
				       strerror(errno));
	}
	/* the owner's execute bit is kept (a script the flow runs, an Ansible vault password
	 * script), as Concord keeps an archive's modes; nothing else of the mode is */
	fd = openat(parentfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, exec ? 0700 : 0600);
	if (fd < 0)
		return err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': cannot create: %s", name,
			       strerror(errno));
	for (;;) {
		la_ssize_t n = archive.read_data(a, x->chunk, PACK_CHUNK);
		if (n == 0)
			break;
		if (n < 0) {
			err_set(e, ERR_INVALID, "archive entry '" NAME_FMT "': cannot read: %s", name,
				archive.error_string(a));
			goto out;
		}
		if (over_limits(x, (uint64_t)n, e) < 0)
			goto out;
		x->n_bytes += (uint64_t)n;
		if (path_write_all(fd, x->chunk, (size_t)n) < 0) {
			err_set(e, err_code_of_write(errno), "archive entry '" NAME_FMT "': cannot write: %s", name,
				strerror(errno));
			goto out;
		}
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static int extract_entry(struct archive *a, struct archive_entry *ae, struct extract *x, struct err *e)
{
	const char *name = archive.entry_pathname(ae), *base;
	char rel[4096];
	size_t rel_len = 0;
	int parentfd, rc;

	if (!name)
		return err_set(e, ERR_INVALID, "archive entry #%zu has no usable name", x->n_entries);
	if (check_name(name, &rel_len, e) < 0 || check_kind(ae, name, e) < 0)
		return -1;
	if (archive.entry_size_is_set(ae) && archive.entry_size(ae) > 0 &&
	    over_limits(x, (uint64_t)archive.entry_size(ae), e) < 0)
		return -1;
	memcpy(rel, name, rel_len);
	rel[rel_len] = '\0';
	parentfd = open_parent(x->dirfd, rel, name, &base, e);
	if (parentfd < 0)
		return -1;
	if (archive.entry_filetype(ae) == AE_IFDIR) {
		int fd = open_subdir(parentfd, base, name, e);
		rc = fd < 0 ? -1 : 0;
		if (fd >= 0)
			close(fd);
	} else {
		rc = write_file(a, x, parentfd, base, name, (archive.entry_perm(ae) & 0100) != 0, e);
	}
	close(parentfd);
	return rc;
}

static int extract_all(struct archive *a, const char *dir, const char *kind, struct extract *x, struct err *e)
{
	struct archive_entry *ae;
	int rc = -1;

	x->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->dirfd < 0)
		return err_set(e, ERR_INTERNAL, "cannot open %s: %s", dir, strerror(errno));
	x->chunk = malloc(PACK_CHUNK);
	if (!x->chunk) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	for (;;) {
		int r = archive.read_next_header(a, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN) {
			err_set(e, ERR_INVALID, "archive: not a valid %s: %s", kind, archive.error_string(a));
			goto out;
		}
		if (++x->n_entries > x->lim->max_entries) {
			err_set(e, ERR_TOO_LARGE, "archive: more than %zu entries (limit-archive-entries)",
				x->lim->max_entries);
			goto out;
		}
		if (extract_entry(a, ae, x, e) < 0)
			goto out;
	}
	rc = 0;
out:
	free(x->chunk);
	close(x->dirfd);
	return rc;
}

static int extract_mem(const void *data, size_t len, const char *dir, bool zip, const struct pack_limits *lim,
		       struct err *e)
{
	struct archive *a;
	struct extract x = {.lim = lim, .packed_len = len, .dirfd = -1};
	int rc;

	if (archive_api_load(e) < 0)
		return -1;
	if (!(a = archive.read_new()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (zip)
		archive.read_support_format_zip(a);
	else
		archive.read_support_format_tar(a);
	if (archive.read_open_memory(a, data, len) != ARCHIVE_OK) {
		rc = err_set(e, ERR_INVALID, "archive: not a valid %s: %s", zip ? "ZIP file" : "tar blob",
			     archive.error_string(a));
	} else {
		rc = extract_all(a, dir, zip ? "ZIP file" : "tar blob", &x, e);
	}
	archive.read_free(a);
	return rc;
}

int pack_unzip(const void *zip, size_t len, const char *dir, const struct pack_limits *lim, struct err *e)
{
	return extract_mem(zip, len, dir, true, lim, e);
}

int pack_restore(const void *tar, size_t len, const char *dir, struct err *e)
{
	/* The blob was made by pack_dir or pack_files under its own byte limit; only the entry
	 * checks apply (a memdir blob's are memdir_add's, and memdir_write writes beneath dir). */
	static const struct pack_limits none = {.max_entries = SIZE_MAX, .max_bytes = UINT64_MAX, .max_ratio = 0};
	struct memdir md;
	int rc;

	if (!memdir_blob_is(tar, len))
		return extract_mem(tar, len, dir, false, &none, e);
	memdir_init(&md);
	rc = memdir_blob_unpack(tar, len, UINT64_MAX, &md, e) ? -1 : memdir_write(&md, dir, e);
	memdir_cleanup(&md);
	return rc;
}

/* ---- pack_dir ---- */

struct packer {
	struct archive *a;
	struct archive_entry *ae;
	struct buf out;
	uint64_t max_bytes, n_bytes;
	char *chunk;
	struct err *e;
	bool failed; /* e is already set */
};

static la_ssize_t tar_write_cb(struct archive *a, void *ctx, const void *p, size_t n)
{
	struct packer *pk = ctx;
	(void)a;
	if (buf_append(&pk->out, p, n, pk->e) < 0) {
		pk->failed = true;
		return -1;
	}
	return (la_ssize_t)n;
}

static int tar_fail(struct packer *pk, const char *rel)
{
	if (pk->failed)
		return -1;
	pk->failed = true;
	return err_set(pk->e, ERR_INTERNAL, "cannot pack '" NAME_FMT "': %s", rel, archive.error_string(pk->a));
}

static int pack_header(struct packer *pk, const char *rel, const struct stat *st, bool is_dir)
{
	archive.entry_clear(pk->ae);
	archive.entry_set_pathname(pk->ae, rel);
	archive.entry_set_filetype(pk->ae, is_dir ? AE_IFDIR : AE_IFREG);
	archive.entry_set_perm(pk->ae, is_dir || (st->st_mode & S_IXUSR) ? 0700 : 0600);
	archive.entry_set_size(pk->ae, is_dir ? 0 : st->st_size);
	archive.entry_set_mtime(pk->ae, st->st_mtime, 0);
	return archive.write_header(pk->a, pk->ae) == ARCHIVE_OK ? 0 : tar_fail(pk, rel);
}

static int pack_file(struct packer *pk, int dirfd, const char *name, const char *rel)
{
	struct stat st;
	uint64_t left, total;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc = -1; /* a FIFO never blocks */

	if (fd < 0)
		return err_set(pk->e, ERR_INTERNAL, "cannot open '" NAME_FMT "': %s", rel, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = 0; /* replaced by something else meanwhile: skipped like any non-file */
		goto out;
	}
	if (__builtin_add_overflow(pk->n_bytes, (uint64_t)st.st_size, &total) || total > pk->max_bytes) {
		err_set(pk->e, ERR_TOO_LARGE, "folder content is more than %llu bytes (at '" NAME_FMT "')",
			(unsigned long long)pk->max_bytes, rel);
		goto out;
	}
	pk->n_bytes = total;
	if (pack_header(pk, rel, &st, false) < 0)
		goto out;
	/* Exactly st_size bytes: a file that shrinks meanwhile is padded by libarchive. */
	for (left = (uint64_t)st.st_size; left;) {
		ssize_t n = read(fd, pk->chunk, left < PACK_CHUNK ? (size_t)left : PACK_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_set(pk->e, ERR_INTERNAL, "cannot read '" NAME_FMT "': %s", rel, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (archive.write_data(pk->a, pk->chunk, (size_t)n) != n) {
			tar_fail(pk, rel);
			goto out;
		}
		left -= (uint64_t)n;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dirfd except "." and "..", sorted (so that a blob is reproducible). */
static char **list_dir(int dirfd, size_t *n, struct err *e)
{
	int fd = dup(dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		err_set(e, ERR_INTERNAL, "cannot read folder: %s", strerror(errno));
		return NULL;
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			char **nv = realloc(v, ncap * sizeof *nv);
			if (!nv)
				goto oom;
			v = nv;
			cap = ncap;
		}
		if (!(v[*n] = strdup(de->d_name)))
			goto oom;
		(*n)++;
	}
	closedir(d);
	if (*n > 1)
		qsort(v, *n, sizeof *v, cmp_name);
	return v ? v : calloc(1, sizeof *v);
oom:
	closedir(d);
	for (size_t i = 0; i < *n; i++)
		free(v[i]);
	free(v);
	err_set(e, ERR_INTERNAL, "out of memory");
	return NULL;
}

static int pack_tree(struct packer *pk, int dirfd, const char *prefix, int depth);

static int pack_one(struct packer *pk, int dirfd, const char *name, const char *prefix, int depth)
{
	char rel[4096];
	struct stat st;
	int sub, rc;

	if (snprintf(rel, sizeof rel, "%s%s", prefix, name) >= (int)sizeof rel)
		return err_set(pk->e, ERR_INVALID, "path too long: '" NAME_FMT "'", rel);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT
			   ? 0
			   : err_set(pk->e, ERR_INTERNAL, "cannot stat '" NAME_FMT "': %s", rel, strerror(errno));
	if (S_ISREG(st.st_mode))
		return pack_file(pk, dirfd, name, rel);
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (depth >= PACK_DEPTH_MAX)
		return err_set(pk->e, ERR_INVALID, "folders nested deeper than %d levels at '" NAME_FMT "'",
			       PACK_DEPTH_MAX, rel);
	sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0)
		return err_set(pk->e, ERR_INTERNAL, "cannot open '" NAME_FMT "': %s", rel, strerror(errno));
	rc = pack_header(pk, rel, &st, true);
	if (rc == 0) {
		size_t len = strlen(rel);
		if (len + 2 > sizeof rel)
			rc = err_set(pk->e, ERR_INVALID, "path too long: '" NAME_FMT "'", rel);
		else {
			rel[len] = '/';
			rel[len + 1] = '\0';
			rc = pack_tree(pk, sub, rel, depth + 1);
		}
	}
	close(sub);
	return rc;
}

static int pack_tree(struct packer *pk, int dirfd, const char *prefix, int depth)
{
	size_t n = 0, i;
	char **names = list_dir(dirfd, &n, pk->e);
	int rc = 0;

	if (!names)
		return -1;
	for (i = 0; i < n && rc == 0; i++)
		rc = pack_one(pk, dirfd, names[i], prefix, depth);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int pack_dir_as(const char *dir, bool zip, uint64_t max_bytes, void **out, size_t *out_len, struct err *e)
{
	struct packer pk = {.max_bytes = max_bytes, .e = e};
	int dirfd = -1, rc = -1;

	*out = NULL;
	*out_len = 0;
	if (archive_api_load(e) < 0)
		return -1;
	buf_init(&pk.out, 0);
	pk.a = archive.write_new();
	pk.ae = archive.entry_new();
	pk.chunk = malloc(PACK_CHUNK);
	if (!pk.a || !pk.ae || !pk.chunk) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err_set(e, ERR_INTERNAL, "cannot open %s: %s", dir, strerror(errno));
		goto out;
	}
	if ((zip ? archive.write_set_format_zip(pk.a) : archive.write_set_format_pax_restricted(pk.a)) != ARCHIVE_OK ||
	    archive.write_add_filter_none(pk.a) != ARCHIVE_OK || archive.write_set_bytes_in_last_block(pk.a, 1) ||
	    archive.write_open(pk.a, &pk, NULL, tar_write_cb, NULL) != ARCHIVE_OK) {
		tar_fail(&pk, dir);
		goto out;
	}
	if (pack_tree(&pk, dirfd, "", 0) < 0)
		goto out;
	if (archive.write_close(pk.a) != ARCHIVE_OK) {
		tar_fail(&pk, dir);
		goto out;
	}
	*out = buf_detach(&pk.out, out_len);
	rc = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	if (pk.a)
		archive.write_free(pk.a);
	archive.entry_free(pk.ae);
	free(pk.chunk);
	buf_cleanup(&pk.out);
	return rc;
}

int pack_dir(const char *dir, uint64_t max_bytes, void **out, size_t *out_len, struct err *e)
{
	return pack_dir_as(dir, false, max_bytes, out, out_len, e);
}

int pack_zip_dir(const char *dir, uint64_t max_bytes, void **out, size_t *out_len, struct err *e)
{
	return pack_dir_as(dir, true, max_bytes, out, out_len, e);
}
