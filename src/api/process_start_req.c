#include "api/process_start_req.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/duration.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/value.h"

#define SHOW_MAX 200 /* bytes of a user's value quoted in a message */

static const char *const special_names[] = {
    "org",
    "orgId",
    "project",
    "projectId",
    "repo",
    "repoId",
    "repoBranchOrTag",
    "repoCommitId",
    "entryPoint",
    "activeProfiles",
    "out",
    "tags",
    "startAt",
    "processTimeout",
    "suspendTimeout",
    "parentInstanceId",
    "meta",
    "request",
    "sync",
};

static const char *const definition_names[] = {"concord.yml", ".concord.yml", "concord.yaml", ".concord.yaml"};

/* The canonical spelling of a special part name (matched case-insensitively, as Concord's
 * getString does), or NULL. */
static const char *special_name(struct str name)
{
	for (size_t i = 0; i < sizeof special_names / sizeof special_names[0]; i++)
		if (str_ieq_cstr(name, special_names[i]))
			return special_names[i];
	return NULL;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && strcmp(s + n - m, suffix) == 0;
}

static bool is_definition_name(const char *rel)
{
	for (size_t i = 0; i < sizeof definition_names / sizeof definition_names[0]; i++)
		if (strcmp(rel, definition_names[i]) == 0)
			return true;
	return strncmp(rel, "concord/", 8) == 0 && (ends_with(rel, ".yml") || ends_with(rel, ".yaml"));
}

/* A compact, length-limited rendering of v for messages (strings without quotes). */
static void show_value(const json_t *v, char out[SHOW_MAX + 1])
{
	char *dump = NULL;
	const char *s = json_is_string(v) ? json_string_value(v) : (dump = jsonx_dump(v));
	str_fmt_cut(out, SHOW_MAX + 1, "%s", s ? s : "?");
	free(dump);
}

static int str_field(json_t *cfg, const char *key, const char **out, struct err *e)
{
	json_t *v = json_object_get(cfg, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return err_set(e, ERR_INVALID, "Invalid '%s' value, expected a string", key);
	if (json_string_length(v))
		*out = json_string_value(v);
	return 0;
}

static int id_field(json_t *cfg, const char *key, const char **out, struct err *e)
{
	if (str_field(cfg, key, out, e) < 0)
		return -1;
	if (*out && !uuid_valid(*out, strlen(*out)))
		return err_set(e, ERR_INVALID, "Invalid '%s' value, expected a UUID, got: %.*s", key, SHOW_MAX, *out);
	return 0;
}

/* Appends the trimmed, non-empty, comma-separated items of s to arr (unique: skip repeats). */
static int split_list(const char *s, size_t len, json_t *arr, bool unique, struct err *e)
{
	struct str rest = {s, len};
	while (rest.len) {
		const char *comma = memchr(rest.p, ',', rest.len);
		size_t n = comma ? (size_t)(comma - rest.p) : rest.len;
		struct str item = str_trim((struct str){rest.p, n});
		rest.p += n + (comma != NULL);
		rest.len -= n + (comma != NULL);
		if (!item.len)
			continue;
		json_t *js = json_stringn(item.p, item.len);
		if (!js)
			return err_set(e, ERR_INVALID, "invalid text (not UTF-8)");
		bool dup = false;
		if (unique) {
			size_t i;
			json_t *x;
			json_array_foreach(arr, i, x) dup = dup || json_equal(x, js);
		}
		if (dup)
			json_decref(js);
		else if (json_array_append_new(arr, js) < 0)
			return err_set(e, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

/* A list field: a comma-separated string or an array of strings.  *out is a new array or
 * NULL when absent. */
static int list_field(json_t *cfg, const char *key, bool unique, json_t **out, struct err *e)
{
	json_t *v = json_object_get(cfg, key), *arr;
	size_t i;
	json_t *x;

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) && !json_is_array(v))
		return err_set(e, ERR_INVALID,
			       "Invalid '%s' value, expected a comma-separated string or a list of strings", key);
	if (!(arr = json_array()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (json_is_string(v)) {
		if (split_list(json_string_value(v), json_string_length(v), arr, unique, e) < 0)
			goto fail;
	} else {
		json_array_foreach(v, i, x)
		{
			if (!json_is_string(x)) {
				err_set(e, ERR_INVALID, "Invalid '%s' value, expected a list of strings", key);
				goto fail;
			}
			if (split_list(json_string_value(x), json_string_length(x), arr, unique, e) < 0)
				goto fail;
		}
	}
	*out = arr;
	return 0;
fail:
	json_decref(arr);
	return -1;
}

static int start_at_field(json_t *cfg, int64_t now, int64_t *out, struct err *e)
{
	json_t *v = json_object_get(cfg, "startAt");
	char shown[SHOW_MAX + 1], now_s[DT_ISO_LEN];
	struct err ignored;

	*out = 0;
	if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
		return 0;
	show_value(v, shown);
	if (!json_is_string(v) ||
	    dt_parse_iso(json_string_value(v), json_string_length(v), true, out, "startAt", &ignored) < 0)
		return err_set(e, ERR_INVALID, "Invalid 'startAt' format, expected an ISO-8601 value, got: %s", shown);
	if (*out < now) {
		dt_format_iso(now, now_s);
		return err_set(e, ERR_INVALID,
			       "Invalid 'startAt' value, can't be in the past: %s Current server time: %s", shown,
			       now_s);
	}
	return 0;
}

static int timeout_field(json_t *cfg, const char *key, int64_t *out, struct err *e)
{
	json_t *v = json_object_get(cfg, key);
	*out = -1;
	if (!v || json_is_null(v) || (json_is_string(v) && !json_string_length(v)))
		return 0;
	return duration_json(v, key, out, e);
}

static json_t *parse_object_part(const struct multipart_part *p, const char *name, struct err *e)
{
	json_t *v;
	char shown[SHOW_MAX + 1];

	if (multipart_part_is_text(p)) {
		str_fmt_cut(shown, sizeof shown, "%.*s", (int)(p->data.len < SHOW_MAX ? p->data.len : SHOW_MAX),
			    p->data.p);
		err_set(e, ERR_INVALID, "Expected a JSON object in '%s', got: %s", name, shown);
		return NULL;
	}
	v = jsonx_parse(p->data.p, p->data.len, limits.json_depth, e);
	if (!v) {
		err_prefix(e, "Invalid JSON in '%s'", name);
		return NULL;
	}
	if (!json_is_object(v)) {
		show_value(v, shown);
		err_set(e, ERR_INVALID, "Expected a JSON object in '%s', got: %s", name, shown);
		json_decref(v);
		return NULL;
	}
	return v;
}

/* One text part into cfg under its (dotted) name; special names in their canonical case. */
static int add_text_part(json_t *cfg, const struct multipart_part *p, bool *out_part, struct err *e)
{
	const char *canon = special_name(p->name);
	struct str v = str_trim(p->data);
	struct str name = canon ? str_from(canon) : p->name;
	json_t *js;
	int rc;

	if (canon && (strcmp(canon, "meta") == 0 || strcmp(canon, "request") == 0))
		return err_set(e, ERR_INVALID, "Expected a JSON object in '%s', got: %.*s", canon,
			       (int)(v.len < SHOW_MAX ? v.len : SHOW_MAX), v.p);
	if (canon && strcmp(canon, "sync") == 0 && str_ieq_cstr(v, "true"))
		return err_set(e, ERR_INVALID,
			       "The 'sync' mode is no longer available. Please use sync=false and poll "
			       "for the status updates.");
	if (canon && strcmp(canon, "out") == 0)
		*out_part = true;
	if (!(js = json_stringn(v.p, v.len)))
		return err_set(e, ERR_INVALID, "Invalid value of part '%.*s': not UTF-8 text",
			       (int)(name.len < SHOW_MAX ? name.len : SHOW_MAX), name.p);
	rc = value_set_path(cfg, name.p, name.len, js, e);
	json_decref(js);
	if (rc < 0)
		return err_set(e, ERR_INVALID, "Invalid part name '%.*s'",
			       (int)(name.len < SHOW_MAX ? name.len : SHOW_MAX), name.p);
	return 0;
}

/* The part's name as a safe relative path in rel (PATH_MAX bytes), or ERR_INVALID. */
static int part_rel(const struct multipart_part *p, char rel[PATH_MAX], struct err *e)
{
	size_t n = p->name.len < PATH_MAX - 1 ? p->name.len : PATH_MAX - 1;

	memcpy(rel, p->name.p, n);
	rel[n] = '\0';
	if (n != p->name.len || memchr(rel, '\0', n) || !path_is_safe_relative(rel))
		return err_set(e, ERR_INVALID, "Invalid attachment name: %.*s", SHOW_MAX, rel);
	return 0;
}

/* Checks a file part's name; sets raw_payload / has_archive. */
static int check_file_part(const struct multipart_part *p, struct start_req *r, struct err *e)
{
	char name[PATH_MAX];

	if (str_eq_cstr(p->name, "archive")) {
		r->has_archive = r->raw_payload = true;
		return 0;
	}
	if (part_rel(p, name, e) < 0)
		return -1;
	if (is_definition_name(name))
		r->raw_payload = true;
	return 0;
}

static bool is_file_part(const struct multipart_part *p)
{
	return !multipart_part_is_text(p) && !str_eq_cstr(p->name, "request") && !str_eq_cstr(p->name, "meta");
}

/* An `out` text part adds its names to the request's `out` (Concord merges the two):
 * cfg.out becomes [the part's text, the request's names…], which list_field reads. */
static int merge_out(json_t *cfg, json_t *req_out, struct err *e)
{
	json_t *both = json_array();

	if (!both || json_array_append(both, json_object_get(cfg, "out")) < 0)
		goto oom;
	if (json_is_array(req_out) ? json_array_extend(both, req_out) < 0 : json_array_append(both, req_out) < 0)
		goto oom;
	return json_object_set_new(cfg, "out", both) < 0 ? err_set(e, ERR_INTERNAL, "out of memory") : 0;
oom:
	json_decref(both);
	return err_set(e, ERR_INTERNAL, "out of memory");
}

static int read_parts(const struct multipart *mp, struct start_req *r, struct err *e)
{
	const struct multipart_part *req = multipart_find(mp, "request"), *meta = multipart_find(mp, "meta");
	json_t *req_out;
	int rc = 0;

	if (req) {
		json_t *v = parse_object_part(req, "request", e);
		rc = v ? value_merge(r->cfg, v, e) : -1;
		json_decref(v);
		if (rc < 0)
			return -1;
	}
	if (meta && !(r->meta = parse_object_part(meta, "meta", e)))
		return -1;
	req_out = json_incref(json_object_get(r->cfg, "out"));
	for (size_t i = 0; i < mp->n_parts && rc == 0; i++) {
		const struct multipart_part *p = &mp->parts[i];
		if (multipart_part_is_text(p))
			rc = add_text_part(r->cfg, p, &r->out_from_part, e);
		else if (is_file_part(p))
			rc = check_file_part(p, r, e);
	}
	if (rc == 0 && r->out_from_part && req_out)
		rc = merge_out(r->cfg, req_out, e);
	json_decref(req_out);
	return rc;
}

static int typed_fields(struct start_req *r, int64_t now, struct err *e)
{
	json_t *c = r->cfg;

	if (str_field(c, "org", &r->org, e) || id_field(c, "orgId", &r->org_id, e) ||
	    str_field(c, "project", &r->project, e) || id_field(c, "projectId", &r->project_id, e) ||
	    str_field(c, "repo", &r->repo, e) || id_field(c, "repoId", &r->repo_id, e) ||
	    str_field(c, "repoBranchOrTag", &r->repo_branch_or_tag, e) ||
	    str_field(c, "repoCommitId", &r->repo_commit_id, e) || str_field(c, "entryPoint", &r->entry_point, e) ||
	    id_field(c, "parentInstanceId", &r->parent_instance_id, e))
		return -1;
	if (list_field(c, "activeProfiles", false, &r->active_profiles, e) || list_field(c, "out", false, &r->out, e) ||
	    list_field(c, "tags", true, &r->tags, e))
		return -1;
	if (r->tags && json_array_size(r->tags) > START_REQ_TAGS_MAX)
		return err_set(e, ERR_INVALID, "Too many tags: %zu (at most %d)", json_array_size(r->tags),
			       START_REQ_TAGS_MAX);
	if (start_at_field(c, now, &r->start_at, e) || timeout_field(c, "processTimeout", &r->timeout_s, e) ||
	    timeout_field(c, "suspendTimeout", &r->suspend_timeout_s, e))
		return -1;
	return 0;
}

int start_req_parse(const struct multipart *mp, int64_t now, struct start_req *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	r->timeout_s = -1;
	r->suspend_timeout_s = -1;
	if (!(r->cfg = json_object()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (read_parts(mp, r, e) < 0 || typed_fields(r, now, e) < 0) {
		start_req_cleanup(r);
		return -1;
	}
	return 0;
}

int start_req_from_cfg(json_t *cfg, int64_t now, struct start_req *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	r->timeout_s = -1;
	r->suspend_timeout_s = -1;
	r->cfg = cfg;
	if (typed_fields(r, now, e) < 0) {
		start_req_cleanup(r);
		return -1;
	}
	return 0;
}

void start_req_cleanup(struct start_req *r)
{
	if (!r)
		return;
	json_decref(r->cfg);
	json_decref(r->active_profiles);
	json_decref(r->out);
	json_decref(r->tags);
	json_decref(r->meta);
	memset(r, 0, sizeof *r);
	r->timeout_s = -1;
	r->suspend_timeout_s = -1;
}

/* Opens folder `comp` in parent (creating it 0700), never through a symbolic link.
 * Returns -2 when something that is not a folder is in the way. */
static int open_folder(int parent, const char *comp)
{
	int fd = openat(parent, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 || errno != ENOENT)
		return fd >= 0 ? fd : (errno == ENOTDIR || errno == ELOOP) ? -2 : -1;
	if (mkdirat(parent, comp, 0700) != 0 && errno != EEXIST)
		return -1;
	fd = openat(parent, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 ? fd : (errno == ENOTDIR || errno == ELOOP) ? -2 : -1;
}

/* Writes one file part beneath dirfd.  What is already there (from the archive) wins:
 * a path that exists, or whose folder is not a folder, leaves the part unwritten; unless
 * replace (a repository checkout is overlaid), when an existing file is replaced. */
static int write_part(int dirfd, const struct multipart_part *p, bool replace, struct err *e)
{
	char rel[PATH_MAX];
	char *comp = rel, *slash;
	int fd = dirfd, next, rc = 0;

	if (part_rel(p, rel, e) < 0) /* checked by start_req_parse too; cheap to repeat */
		return -1;
	while ((slash = strchr(comp, '/')) != NULL) {
		*slash = '\0';
		next = open_folder(fd, comp);
		if (fd != dirfd)
			close(fd);
		if (next < 0)
			return next == -2 ? 0
					  : err_set(e, err_code_of_write(errno), "cannot create the folder of '%s': %s", rel,
						    strerror(errno));
		*slash = '/';
		fd = next;
		comp = slash + 1;
	}
	next = openat(fd, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (next < 0 && errno == EEXIST && replace && unlinkat(fd, comp, 0) == 0)
		next = openat(fd, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (next < 0) {
		if (errno != EEXIST)
			rc = err_set(e, err_code_of_write(errno), "cannot create '%s': %s", rel, strerror(errno));
	} else {
		if (path_write_all(next, p->data.p, p->data.len) < 0)
			rc = err_set(e, err_code_of_write(errno), "cannot write '%s': %s", rel, strerror(errno));
		close(next);
	}
	if (fd != dirfd)
		close(fd);
	return rc;
}

int start_req_materialize(const struct multipart *mp, const struct start_req *r, const char *dir, bool overlay,
			  struct err *e)
{
	struct pack_limits lim = {limits.archive_entries, limits.archive_bytes, limits.archive_ratio};
	int dirfd, rc = 0;

	if (r->has_archive) {
		const struct multipart_part *a = multipart_find(mp, "archive");
		if (a && pack_unzip(a->data.p, a->data.len, dir, &lim, e) < 0)
			return -1;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return err_set(e, ERR_INTERNAL, "cannot open %s: %s", dir, strerror(errno));
	for (size_t i = 0; i < mp->n_parts && rc == 0; i++) {
		const struct multipart_part *p = &mp->parts[i];
		if (!is_file_part(p) || str_eq_cstr(p->name, "archive"))
			continue;
		rc = write_part(dirfd, p, overlay, e);
	}
	close(dirfd);
	return rc;
}

int start_req_files(const struct multipart *mp, uint64_t max, struct memdir *md, struct err *e)
{
	char rel[PATH_MAX];
	uint64_t bytes = 0;

	for (size_t i = 0; i < mp->n_parts; i++) {
		const struct multipart_part *p = &mp->parts[i];
		if (!is_file_part(p) || str_eq_cstr(p->name, "archive"))
			continue;
		if (__builtin_add_overflow(bytes, (uint64_t)p->data.len, &bytes) || bytes > max)
			return err_set(e, ERR_TOO_LARGE, "the file parts hold more than %llu bytes",
				       (unsigned long long)max);
		if (part_rel(p, rel, e) < 0 || memdir_add(md, rel, p->data.p, p->data.len, false, e) < 0)
			return -1;
	}
	return 0;
}
