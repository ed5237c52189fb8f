#include <dirent.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sodium.h>

#include "base/limits.h"
#include "base/memdir.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/model_load.h"

static const char *root_names[] = {".concord.yml", "concord.yml", ".concord.yaml", "concord.yaml"};

struct file_list {
	char **v;
	size_t n, cap;
};

static int list_add(struct file_list *l, const char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, cap * sizeof *v);
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = strdup(s);
	if (!l->v[l->n])
		return -1;
	l->n++;
	return 0;
}

static void list_free(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool default_extra(const char *rel)
{
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	if (strncmp(rel, "concord/", 8) != 0)
		return false;
	if (strcmp(base, "concord.yml") == 0 || strcmp(base, "concord.yaml") == 0)
		return true;
	size_t len = strlen(base);
	return (len > 12 && strcmp(base + len - 12, ".concord.yml") == 0) ||
	       (len > 13 && strcmp(base + len - 13, ".concord.yaml") == 0);
}

static bool pattern_match(const json_t *patterns, const char *rel)
{
	size_t i;
	json_t *p;
	if (!patterns)
		return default_extra(rel);
	json_array_foreach(patterns, i, p)
	{
		const char *s = json_string_value(p);
		if (!s)
			continue;
		if (strncmp(s, "glob:", 5) == 0) {
			char g[1024];
			const char *src = s + 5;
			size_t o = 0;
			/* the pattern "any folder or none" becomes "*": without FNM_PATHNAME a star crosses slashes */
			for (; *src && o + 1 < sizeof g; src++) {
				if (strncmp(src, "{**/,}", 6) == 0) {
					src += 5;
					g[o++] = '*';
					continue;
				}
				g[o++] = *src;
			}
			g[o] = '\0';
			if (fnmatch(g, rel, 0) == 0)
				return true;
		} else if (strncmp(s, "regex:", 6) == 0) {
			regex_t re;
			bool ok = false;
			if (regcomp(&re, s + 6, REG_EXTENDED | REG_NOSUB) == 0) {
				ok = regexec(&re, rel, 0, NULL, 0) == 0;
				regfree(&re);
			}
			if (ok)
				return true;
		} else if (strcmp(s, rel) == 0) {
			return true;
		}
	}
	return false;
}

static int walk(const char *root, const char *rel, int depth, const json_t *patterns, struct file_list *out,
		struct err *e)
{
	char path[4096];
	DIR *d;
	struct dirent *de;
	int rc = 0;
	if (depth > 32)
		return 0;
	if (str_fmt(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel))
		return err_set(e, ERR_INVALID, "path too long (limit %zu bytes): %s/%.200s...", sizeof path - 1, root,
			       rel);
	d = opendir(path);
	if (!d)
		return 0;
	while (rc == 0 && (de = readdir(d))) {
		char sub[4096], full[8192];
		struct stat st;
		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (!*rel && (strcmp(de->d_name, "_attachments") == 0 || strcmp(de->d_name, ".concord_tmp") == 0))
			continue;
		if (str_fmt(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", de->d_name) ||
		    str_fmt(full, sizeof full, "%s/%s", root, sub)) {
			rc = err_set(e, ERR_INVALID, "path too long (limit %zu bytes): %s/%.200s...", sizeof sub - 1,
				     root, rel);
			break;
		}
		if (lstat(full, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rc = walk(root, sub, depth + 1, patterns, out, e);
		else if (S_ISREG(st.st_mode) && *rel && pattern_match(patterns, sub) && list_add(out, sub) < 0)
			rc = oom_fail(e);
	}
	closedir(d);
	return rc;
}

/* The file rel of files (a new copy), as path_read_file reads it from a folder. */
static char *mem_read(const struct memdir *files, const char *rel, size_t *len, struct err *e)
{
	const struct memdir_entry *x = memdir_find(files, rel);
	char *data;

	if (!x || x->dir)
		return err_set(e, ERR_NOT_FOUND, "%s: no such file", rel), NULL;
	if (x->len > limits.flow_yaml_bytes)
		return err_set(e, ERR_TOO_LARGE, "%s: more than %zu bytes", rel, limits.flow_yaml_bytes), NULL;
	if (!(data = malloc(x->len + 1)))
		return oom_fail(e), NULL;
	memcpy(data, x->data, x->len + 1);
	*len = x->len;
	return data;
}

static int parse_file(struct model *m, const char *dir, const char *rel, crypto_generichash_state *h, struct err *e)
{
	char *full = NULL, *data = NULL;
	size_t len = 0;
	struct ydoc *d = &m->docs[m->n_docs];
	int rc = -1;
	memset(d, 0, sizeof *d);
	if (m->files) {
		data = mem_read(m->files, rel, &len, e);
	} else {
		full = dir ? path_join_safe(dir, rel, e) : strdup(rel);
		if (!full)
			goto out;
		data = path_read_file(full, limits.flow_yaml_bytes, &len, e);
	}
	if (!data) {
		if (e->code == ERR_TOO_LARGE) {
			e->code = ERR_LIMIT;
			err_prefix(e, "(%s): limit flow_yaml_bytes = %zu", rel, limits.flow_yaml_bytes);
		}
		goto out;
	}
	crypto_generichash_update(h, (const unsigned char *)rel, strlen(rel) + 1);
	crypto_generichash_update(h, (const unsigned char *)data, len);
	m->n_docs++; /* counted before parsing: ydoc_parse initialises d even when it fails */
	rc = ydoc_parse(d, rel, data, len, e);
out:
	free(full);
	free(data);
	return rc;
}

static int find_root(const char *path, char **dir, char **rel, struct err *e)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return err_set(e, ERR_NOT_FOUND, "%s: no such file or directory", path);
	if (S_ISREG(st.st_mode)) {
		const char *slash = strrchr(path, '/');
		*dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
		*rel = strdup(slash ? slash + 1 : path);
		return *dir && *rel ? 1 : oom_fail(e);
	}
	for (size_t i = 0; i < 4; i++) {
		char full[4096];
		if (str_fmt(full, sizeof full, "%s/%s", path, root_names[i]))
			return err_set(e, ERR_INVALID, "path too long (limit %zu bytes): %.200s...", sizeof full - 1,
				       path);
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
			*dir = strdup(path);
			*rel = strdup(root_names[i]);
			return *dir && *rel ? 0 : oom_fail(e);
		}
	}
	return err_set(e, ERR_NOT_FOUND, "%s: no concord.yml (or .concord.yml, concord.yaml) found", path);
}

/* The root file of a folder held in memory, as find_root finds it in a folder. */
static int mem_root(const struct memdir *files, const char *path, char **dir, char **rel, struct err *e)
{
	for (size_t i = 0; i < 4; i++) {
		const struct memdir_entry *x = memdir_find(files, root_names[i]);
		if (x && !x->dir) {
			*dir = strdup(path ? path : ".");
			*rel = strdup(root_names[i]);
			return *dir && *rel ? 0 : oom_fail(e);
		}
	}
	return err_set(e, ERR_NOT_FOUND, "%s: no concord.yml (or .concord.yml, concord.yaml) found", path ? path : ".");
}

/* walk over a folder held in memory: its regular files that match, at most 32 folders deep,
 * not in the top-level _attachments or .concord_tmp. */
static int mem_walk(const struct memdir *files, const json_t *patterns, struct file_list *out, struct err *e)
{
	for (size_t i = 0; i < files->n; i++) {
		const char *p = files->v[i].path;
		int depth = 0;
		for (const char *c = p; *c; c++)
			depth += *c == '/';
		if (files->v[i].dir || depth > 32 || strncmp(p, "_attachments/", 13) == 0 ||
		    strncmp(p, ".concord_tmp/", 13) == 0 || strcmp(p, "_attachments") == 0 ||
		    strcmp(p, ".concord_tmp") == 0 || !pattern_match(patterns, p))
			continue;
		if (list_add(out, p) < 0)
			return oom_fail(e);
	}
	return 0;
}

/* Whether the root document has `imports` (which copy files into the folder). */
static bool has_imports(const struct model *m)
{
	const struct ynode *r = m->docs[0].root;
	return r && r->kind == YN_MAP && ynode_get(r, "imports");
}

static int parse_extra(struct model *m, const char *dir, crypto_generichash_state *h, struct err *e)
{
	struct file_list extra = {0};
	json_t *patterns = NULL;
	struct ydoc *docs, root;
	int rc = -1;
	if (m->files && has_imports(m)) {
		if (m->needs_folder)
			*m->needs_folder = true;
		err_set(e, ERR_INVALID, "the definition's imports need its folder");
		goto out;
	}
	if (model_root_patterns(m, &patterns, e) < 0 || (!m->files && model_import_dirs(m, e) < 0))
		goto out;
	if ((m->files ? mem_walk(m->files, patterns, &extra, e) : walk(dir, "", 0, patterns, &extra, e)) < 0)
		goto out;
	if (extra.n > 1)
		qsort(extra.v, extra.n, sizeof *extra.v, cmp_str);
	docs = realloc(m->docs, (extra.n + 1) * sizeof *docs);
	if (!docs) {
		oom_fail(e);
		goto out;
	}
	m->docs = docs;
	for (size_t i = 0; i < extra.n; i++)
		if (parse_file(m, dir, extra.v[i], h, e) < 0)
			goto out;
	/* extra files first, the root file last: later files win when merging */
	root = m->docs[0];
	memmove(&m->docs[0], &m->docs[1], extra.n * sizeof *docs);
	m->docs[extra.n] = root;
	rc = 0;
out:
	json_decref(patterns);
	list_free(&extra);
	return rc;
}

int model_load_files(struct model *m, const struct model_opts *o, struct err *e)
{
	char *dir = NULL, *rel = NULL;
	crypto_generichash_state h;
	unsigned char digest[32];
	int rc = -1, single;

	m->files = o->files;
	m->needs_folder = o->needs_folder;
	single = o->files ? mem_root(o->files, o->path, &dir, &rel, e) : find_root(o->path, &dir, &rel, e);
	if (single < 0)
		goto out;
	m->root_dir = arena_strdup(&m->arena, dir);
	crypto_generichash_init(&h, NULL, 0, sizeof digest);
	m->docs = calloc(1, sizeof *m->docs);
	if (!m->docs) {
		oom_fail(e);
		goto out;
	}
	if (parse_file(m, dir, rel, &h, e) < 0)
		goto out;
	if (!single && parse_extra(m, dir, &h, e) < 0)
		goto out;
	crypto_generichash_final(&h, digest, sizeof digest);
	sodium_bin2hex(m->hash, sizeof m->hash, digest, sizeof digest);
	rc = 0;
out:
	m->files = NULL;
	m->needs_folder = NULL;
	free(dir);
	free(rel);
	return rc;
}
