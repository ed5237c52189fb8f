/* What a supervisor keeps of a process when it ends or suspends. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jsonx.h"
#include "base/limits.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "policy/policy.h"
#include "queue/state_policy.h"
#include "queue/supervise/supervise.h"
#include "store/policies.h"
#include "store/process_attachments.h"
#include "store/project_storage.h"
#include "store/processes.h"

#define ATTACHMENT_DEPTH 16

struct walk {
	struct store_conn *c;
	const char *id;
	uint64_t total;
	uint64_t room; /* what the project may still store (--limit-project-storage-bytes) */
	json_t *out;	 /* out.json's object, when found */
	json_t *ansible; /* ansible_stats.json's object (the ansible task's), when found */
	json_t *policy;	 /* the process's policy (store_process_policy_get), NULL: none */
};

/* The policy's attachments.maxSizeInBytes (docs/security.md "Policies"). */
static int policy_attachments(const struct walk *w, struct err *e)
{
	const json_t *r = json_object_get(json_object_get(w->policy, "rules"), "attachments");
	int64_t max = policy_number(json_object_get(r, "maxSizeInBytes"));
	char a[24], b[24];

	if (max < 0 || w->total <= (uint64_t)max)
		return 0;
	str_fmt_cut(a, sizeof a, "%llu", (unsigned long long)w->total);
	str_fmt_cut(b, sizeof b, "%lld", (long long)max);
	return policy_refuse(e, ERR_TOO_LARGE, json_string_value(json_object_get(w->policy, "policy")), r,
			     "The size of process attachments exceeds the allowed value: current {0} byte(s), limit "
			     "{1} byte(s)",
			     a, b);
}

static int store_file(struct walk *w, int dirfd, const char *name, const char *rel, struct err *e)
{
	size_t len;
	char *data = path_read_at(dirfd, name, (size_t)limits.archive_bytes, &len, e);
	int rc;

	if (!data && e->code == ERR_TOO_LARGE)
		return err_set(e, ERR_TOO_LARGE, "attachment '%.200s' exceeds %llu bytes (limit-archive-bytes)", rel,
			       (unsigned long long)limits.archive_bytes);
	if (!data)
		return 0; /* replaced by a link or a FIFO meanwhile: skipped */
	if (__builtin_add_overflow(w->total, len, &w->total) || w->total > limits.archive_bytes) {
		free(data);
		return err_set(e, ERR_TOO_LARGE, "attachments exceed %llu bytes (limit-archive-bytes)",
			       (unsigned long long)limits.archive_bytes);
	}
	if (policy_attachments(w, e)) {
		free(data);
		return -1;
	}
	if (w->total > w->room) {
		free(data);
		return err_set(e, ERR_TOO_LARGE,
			       "Project storage quota reached (%llu bytes of logs and attachments, "
			       "limit-project-storage-bytes): the attachments need %llu bytes, %llu are left",
			       (unsigned long long)limits.project_storage_bytes, (unsigned long long)w->total,
			       (unsigned long long)w->room);
	}
	if (strcmp(rel, "out.json") == 0 || strcmp(rel, "ansible_stats.json") == 0) {
		struct err pe;
		/* Out variables reach every status answer: kept small (docs/operations.md). */
		if (len > limits.out_bytes) {
			free(data);
			return err_set(e, ERR_TOO_LARGE,
				       "the out variables take %zu bytes, more than %llu (limit-out-bytes)", len,
				       (unsigned long long)limits.out_bytes);
		}
		json_t *v = jsonx_parse(data, len, 1000, &pe);
		if (json_is_object(v))
			*(rel[0] == 'o' ? &w->out : &w->ansible) = v;
		else
			json_decref(v);
	}
	rc = store_process_attachment_put(w->c, w->id, rel, data, len, e);
	free(data);
	return rc;
}

/* The folder dirfd (taken over), regular files only.  The runner wrote it: every entry is
 * opened relative to its folder without following symbolic links (DESIGN §5), so a link
 * a flow left, at any depth or in place of _attachments itself, is never followed out of
 * the working directory, and a FIFO never blocks. */
static int walk_dir(struct walk *w, int dirfd, const char *rel, int depth, struct err *e)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while (rc == 0 && (de = readdir(d))) {
		char *sub = NULL;
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (!*rel && strcmp(de->d_name, "_state") == 0)
			continue;
		if (asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0) {
			rc = err_set(e, ERR_INTERNAL, "out of memory");
			break;
		}
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISREG(st.st_mode)) {
				rc = store_file(w, dirfd, de->d_name, sub, e);
			} else if (S_ISDIR(st.st_mode) && depth < ATTACHMENT_DEPTH) {
				int fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (fd >= 0)
					rc = walk_dir(w, fd, sub, depth + 1, e);
			}
		}
		free(sub);
	}
	closedir(d);
	return rc;
}

/* The working directory's _attachments folder, never through a symbolic link. */
static int open_attachments(const char *workdir)
{
	int wd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd;

	if (wd < 0)
		return -1;
	fd = openat(wd, "_attachments", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(wd);
	return fd;
}

int supervise_store_results(struct store_conn *c, const char *id, const char *workdir, bool had_out, struct err *e)
{
	struct walk w = {.c = c, .id = id};
	json_t *patch;
	int rc, dirfd;

	if (store_tx_begin_rows(c, e))
		return -1;
	rc = store_process_attachment_clear(c, id, e);
	if (rc == 0)
		rc = store_project_storage_room(c, id, &w.room, e);
	if (rc == 0)
		rc = store_process_policy_get(c, id, &w.policy, e);
	if (rc == 0 && (dirfd = open_attachments(workdir)) >= 0)
		rc = walk_dir(&w, dirfd, "", 0, e);
	json_decref(w.policy);
	if (rc) {
		store_tx_rollback(c);
		json_decref(w.out);
		json_decref(w.ansible);
		return rc;
	}
	if (store_tx_commit(c, e)) {
		json_decref(w.out);
		json_decref(w.ansible);
		return -1;
	}
	if (w.ansible) { /* the hosts by outcome of the last ansible run, in the meta */
		patch = json_pack("{s:o}", "ansibleStats", w.ansible);
		rc = store_process_meta_merge(c, id, patch, e);
		json_decref(patch);
		if (rc) {
			json_decref(w.out);
			return rc;
		}
	}
	if (!w.out || json_object_size(w.out) == 0) {
		json_decref(w.out);
		if (!had_out)
			return 0;
		w.out = json_null();
	}
	patch = json_pack("{s:o}", "out", w.out);
	rc = store_process_meta_merge(c, id, patch, e);
	json_decref(patch);
	return rc;
}

/* A form with its own page (api/custom_forms.c): forms/<name>/index.html a regular file,
 * with no link on the way — pack_dir keeps no links, so only such a file reaches the
 * stored working directory the page is served from. */
static bool has_custom_page(const char *workdir, const char *name)
{
	const char *parts[] = {"forms", name, "index.html"};
	int fd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok = fd >= 0 && *name && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
		  strcmp(name, "shared") != 0;

	for (size_t i = 0; ok && i < 3; i++) {
		struct stat st;
		int next;
		ok = fstatat(fd, parts[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		     (i < 2 ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
		if (!ok || i == 2)
			break;
		next = openat(fd, parts[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		ok = fd >= 0;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

int supervise_store_suspended(struct store_conn *c, const char *id, const char *workdir, json_t *events,
			      json_t *forms, const char *wake_event, int64_t wake_at, struct err *e)
{
	struct process_suspension ps = {.events = events, .forms = forms, .wake_event = wake_event, .wake_at = wake_at};
	const char *name;
	json_t *form;
	void *tar = NULL;
	int rc;

	if (!json_is_array(events) || json_array_size(events) == 0)
		return err_set(e, ERR_INTERNAL, "the runner suspended without naming an event to wait for");
	json_object_foreach(forms, name, form) if (json_is_object(form))
	    json_object_set_new(form, "custom", json_boolean(has_custom_page(workdir, name)));
	if (state_policy_saved(c, id, workdir, e) || pack_dir(workdir, limits.archive_bytes, &tar, &ps.payload_len, e))
		return -1;
	/* Gone before the status says SUSPENDED: a resume right after may claim the process
	 * on another worker, which restores the same working directory. */
	if (path_remove_tree(workdir, e)) {
		free(tar);
		return -1;
	}
	ps.payload = tar;
	rc = store_process_suspend(c, id, &ps, e);
	free(tar);
	return rc;
}
