/* What a supervisor keeps of a process when it ends or suspends. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/jsonx.h"
#include "base/limits.h"
#include "base/pack.h"
#include "base/path.h"
#include "queue/supervise.h"
#include "store/process_attachments.h"
#include "store/processes.h"

#define ATTACHMENT_DEPTH 16

struct walk {
	struct store_conn *c;
	const char *id;
	uint64_t total;
	json_t *out; /* out.json's object, when found */
};

static int store_file(struct walk *w, const char *path, const char *rel, struct err *e)
{
	size_t len;
	char *data = path_read_file(path, (size_t)limits.archive_bytes, &len, e);
	int rc;

	if (!data)
		return -1;
	if (__builtin_add_overflow(w->total, len, &w->total) || w->total > limits.archive_bytes) {
		free(data);
		return err_set(e, ERR_TOO_LARGE, "attachments exceed %llu bytes (limit-archive-bytes)",
			       (unsigned long long)limits.archive_bytes);
	}
	if (strcmp(rel, "out.json") == 0) {
		struct err pe;
		json_t *v = jsonx_parse(data, len, 1000, &pe);
		if (json_is_object(v))
			w->out = v;
		else
			json_decref(v);
	}
	rc = store_process_attachment_put(w->c, w->id, rel, data, len, e);
	free(data);
	return rc;
}

/* Regular files only; symbolic links a flow left are not followed. */
static int walk_dir(struct walk *w, const char *dir, const char *rel, int depth, struct err *e)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		char *path = NULL, *sub = NULL;
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (!*rel && strcmp(de->d_name, "_state") == 0)
			continue;
		if (asprintf(&path, "%s/%s", dir, de->d_name) < 0 ||
		    asprintf(&sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0) {
			free(path);
			rc = err_set(e, ERR_INTERNAL, "out of memory");
			break;
		}
		if (lstat(path, &st) == 0) {
			if (S_ISREG(st.st_mode))
				rc = store_file(w, path, sub, e);
			else if (S_ISDIR(st.st_mode) && depth < ATTACHMENT_DEPTH)
				rc = walk_dir(w, path, sub, depth + 1, e);
		}
		free(path);
		free(sub);
	}
	closedir(d);
	return rc;
}

int supervise_store_results(struct store_conn *c, const char *id, const char *workdir, bool had_out, struct err *e)
{
	struct walk w = {.c = c, .id = id};
	char *dir = NULL;
	json_t *patch;
	int rc;

	if (asprintf(&dir, "%s/_attachments", workdir) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (store_tx_begin_rows(c, e)) {
		free(dir);
		return -1;
	}
	rc = store_process_attachment_clear(c, id, e) ? -1 : walk_dir(&w, dir, "", 0, e);
	free(dir);
	if (rc) {
		store_tx_rollback(c);
		json_decref(w.out);
		return rc;
	}
	if (store_tx_commit(c, e)) {
		json_decref(w.out);
		return -1;
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

int supervise_store_suspended(struct store_conn *c, const char *id, const char *workdir, json_t *events,
			      json_t *forms, const char *wake_event, int64_t wake_at, struct err *e)
{
	struct process_suspension ps = {.events = events, .forms = forms, .wake_event = wake_event, .wake_at = wake_at};
	void *tar = NULL;
	int rc;

	if (!json_is_array(events) || json_array_size(events) == 0)
		return err_set(e, ERR_INTERNAL, "the runner suspended without naming an event to wait for");
	if (pack_dir(workdir, limits.archive_bytes, &tar, &ps.payload_len, e))
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
