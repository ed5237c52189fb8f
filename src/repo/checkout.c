/* A commit's tree (or a sub-folder of it) written out as plain files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/limits.h"
#include "base/log.h"
#include "base/path.h"
#include "git/git_api.h"
#include "repo/internal.h"

#define MAX_DEPTH 128

struct co {
	git_repository *g;
	const struct repository *r;
	const char *commit;
	uint64_t bytes;
	size_t entries;
	struct err *e;
};

/* Git does not store such names, but a crafted tree object may. */
static bool safe_name(const char *n)
{
	return *n && strcmp(n, ".") != 0 && strcmp(n, "..") != 0 && !strchr(n, '/');
}

static int count(struct co *co, uint64_t bytes)
{
	if (++co->entries > limits.repo_files)
		return err_set(co->e, ERR_LIMIT,
			       "Repository %s at %.12s has more than %zu files and folders (limit repo_files, "
			       "--limit-repo-files)",
			       co->r->name, co->commit, limits.repo_files);
	if ((co->bytes += bytes) > limits.repo_bytes)
		return err_set(co->e, ERR_LIMIT,
			       "Repository %s at %.12s has more than %llu bytes of files (limit repo_bytes, "
			       "--limit-repo-bytes)",
			       co->r->name, co->commit, (unsigned long long)limits.repo_bytes);
	return 0;
}

static int write_blob(struct co *co, int dirfd, const char *name, const git_tree_entry *ent)
{
	git_blob *blob = NULL;
	const void *p;
	uint64_t n;
	int fd, rc;

	if (git.blob_lookup(&blob, co->g, git.tree_entry_id(ent)) < 0)
		return err_set(co->e, ERR_INTERNAL, "Repository %s: cannot read %s: %s", co->r->name, name,
			       git_api_error());
	n = (uint64_t)git.blob_rawsize(blob);
	p = git.blob_rawcontent(blob);
	if ((rc = count(co, n)) == 0) {
		mode_t mode = git.tree_entry_filemode(ent) == GIT_FILEMODE_BLOB_EXECUTABLE ? 0700 : 0600;
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0 || path_write_all(fd, p, (size_t)n) < 0)
			rc = err_set(co->e, ERR_INTERNAL, "cannot write %s from repository %s: %s", name, co->r->name,
				     strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	git.blob_free(blob);
	return rc;
}

static int write_tree(struct co *co, const git_tree *tree, int dirfd, unsigned depth);

static int write_folder(struct co *co, int dirfd, const char *name, const git_tree_entry *ent, unsigned depth)
{
	git_tree *sub = NULL;
	int fd, rc;

	if (depth >= MAX_DEPTH)
		return err_set(co->e, ERR_LIMIT, "Repository %s at %.12s has folders nested deeper than %d",
			       co->r->name, co->commit, MAX_DEPTH);
	if ((rc = count(co, 0)))
		return rc;
	if (mkdirat(dirfd, name, 0700) != 0 ||
	    (fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return err_set(co->e, ERR_INTERNAL, "cannot create the folder %s from repository %s: %s", name,
			       co->r->name, strerror(errno));
	if (git.tree_lookup(&sub, co->g, git.tree_entry_id(ent)) < 0)
		rc = err_set(co->e, ERR_INTERNAL, "Repository %s: cannot read the folder %s: %s", co->r->name, name,
			     git_api_error());
	else
		rc = write_tree(co, sub, fd, depth + 1);
	git.tree_free(sub);
	close(fd);
	return rc;
}

static int write_tree(struct co *co, const git_tree *tree, int dirfd, unsigned depth)
{
	size_t n = git.tree_entrycount(tree);

	for (size_t i = 0; i < n; i++) {
		const git_tree_entry *ent = git.tree_entry_byindex(tree, i);
		const char *name = git.tree_entry_name(ent);
		git_filemode_t mode = git.tree_entry_filemode(ent);
		int rc = 0;

		if (!safe_name(name))
			return err_set(co->e, ERR_INVALID, "Repository %s at %.12s has an unsafe file name: %.200s",
				       co->r->name, co->commit, name);
		if (mode == GIT_FILEMODE_LINK || mode == GIT_FILEMODE_COMMIT)
			continue; /* symbolic links and submodules are not checked out */
		if (git.tree_entry_type(ent) == GIT_OBJECT_TREE)
			rc = write_folder(co, dirfd, name, ent, depth);
		else if (git.tree_entry_type(ent) == GIT_OBJECT_BLOB)
			rc = write_blob(co, dirfd, name, ent);
		if (rc)
			return rc;
	}
	return 0;
}

/* The tree to write: the commit's, or its r->path sub-folder. */
static int root_tree(struct co *co, git_tree **out)
{
	const char *path = co->r->path;
	git_commit *cm = NULL;
	git_tree *tree = NULL;
	git_tree_entry *ent = NULL;
	git_oid oid;
	char sub[sizeof co->r->path];
	size_t n;
	int rc = 0;

	*out = NULL;
	if (git.oid_fromstrn(&oid, co->commit, strlen(co->commit)) < 0 || git.commit_lookup(&cm, co->g, &oid) < 0 ||
	    git.commit_tree(&tree, cm) < 0) {
		rc = err_set(co->e, ERR_INVALID, "Commit not found in repository %s: %s", co->r->name, co->commit);
		goto out;
	}
	while (*path == '/' || (path[0] == '.' && path[1] == '/'))
		path += *path == '/' ? 1 : 2;
	n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	if (n == 0 || (n == 1 && path[0] == '.')) {
		*out = tree;
		tree = NULL;
		goto out;
	}
	memcpy(sub, path, n);
	sub[n] = 0;
	if (git.tree_entry_bypath(&ent, tree, sub) < 0 || git.tree_entry_type(ent) != GIT_OBJECT_TREE ||
	    git.tree_lookup(out, co->g, git.tree_entry_id(ent)) < 0)
		rc = err_set(co->e, ERR_INVALID, "Path not found in repository %s at %s: %s", co->r->name, co->commit,
			     co->r->path);
out:
	git.tree_entry_free(ent);
	git.tree_free(tree);
	git.commit_free(cm);
	return rc;
}

/* Empties dest after a failed checkout. */
static void empty(const char *dest)
{
	struct err e2 = {0};

	if (path_remove_tree(dest, &e2) || mkdir(dest, 0700) != 0)
		LOG_W("repository checkout: cannot empty %s: %s", dest, e2.msg[0] ? e2.msg : strerror(errno));
}

int repo_checkout(struct repos *rs, const struct repository *r, const struct repo_commit *commit, const char *dest,
		  struct err *e)
{
	struct co co = {.r = r, .commit = commit->id, .e = e};
	git_tree *tree = NULL;
	int fd = -1, rc;

	if ((rc = repo_open_clone(rs, r, &co.g, e)))
		return rc;
	if ((rc = root_tree(&co, &tree)) == 0) {
		if ((fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			rc = err_set(e, ERR_INTERNAL, "cannot open %s: %s", dest, strerror(errno));
		else if ((rc = write_tree(&co, tree, fd, 0)))
			empty(dest);
	}
	if (fd >= 0)
		close(fd);
	git.tree_free(tree);
	repo_close_clone(rs, r->id, co.g);
	return rc;
}
