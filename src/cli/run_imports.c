/* git and mvn imports of `accord run` (cli/run_imports.h). */
#include "cli/run_imports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/path.h"

#define FETCH_TIMEOUT_S 60
#define FETCH_MAX_AGE_S 30

static char *cache_dir(const struct run_imports_opts *o, struct err *e)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char *d = NULL;

	if (o->cache && *o->cache)
		d = strdup(o->cache);
	else if (xdg && *xdg == '/') {
		if (asprintf(&d, "%s/accord", xdg) < 0)
			d = NULL;
	} else if (home && *home == '/') {
		if (asprintf(&d, "%s/.cache/accord", home) < 0)
			d = NULL;
	} else {
		err_set(e, ERR_INVALID, "no folder for the imports cache: give --imports-cache DIR (or set HOME)");
		return NULL;
	}
	if (!d)
		err_set(e, ERR_INTERNAL, "out of memory");
	return d;
}

/* Opens the cache on first use, then fetches as the server does. */
static int fetch(void *ctx, const char *kind, json_t *spec, const char *dest, struct err *e)
{
	struct run_imports *ri = ctx;

	if (!ri->rs) {
		char *dir = cache_dir(ri->o, e);
		struct repos_cfg cfg = {
		    .exe = "/proc/self/exe",
		    .fetch_timeout_s = FETCH_TIMEOUT_S,
		    .fetch_max_age_s = FETCH_MAX_AGE_S,
		    .imports_git_base_url = ri->o->git_base_url,
		    .maven_repos = ri->o->maven_repos.len ? ri->o->maven_repos.data : NULL,
		    .offline = ri->o->offline,
		};

		if (!dir)
			return -1;
		cfg.data_dir = dir;
		if (path_mkdirs(dir, 0700, e) == 0)
			ri->rs = repos_open(&cfg, e);
		if (!ri->rs)
			err_prefix(e, "imports cache %s", dir);
		free(dir);
		if (!ri->rs)
			return -1;
		ri->im.rs = ri->rs;
	}
	return repo_import_fetch(&ri->im, kind, spec, dest, e);
}

int run_imports_init(struct run_imports *ri, const struct run_imports_opts *o, struct err *e)
{
	memset(ri, 0, sizeof *ri);
	ri->o = o;
	if (!(ri->im.resolved = json_array()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	ri->importer.fetch = fetch;
	ri->importer.ctx = ri;
	return 0;
}

json_t *run_imports_lines(const struct run_imports *ri)
{
	json_t *out = json_array(), *v;
	size_t i;

	json_array_foreach(ri->im.resolved, i, v)
	{
		const char *type = json_string_value(json_object_get(v, "type"));
		const char *url = json_string_value(json_object_get(v, "url"));
		char *line = NULL;
		int n;

		if (type && strcmp(type, "git") == 0)
			n = asprintf(&line, "Imported %s (%s) at commit %s", url,
				     json_string_value(json_object_get(v, "version")),
				     json_string_value(json_object_get(v, "commitId")));
		else
			n = asprintf(&line, "Imported %s (sha256 %s)", url, json_string_value(json_object_get(v, "sha256")));
		if (n >= 0) {
			json_array_append_new(out, json_string(line));
			free(line);
		}
	}
	return out;
}

void run_imports_cleanup(struct run_imports *ri)
{
	repos_close(ri->rs);
	json_decref(ri->im.resolved);
	memset(ri, 0, sizeof *ri);
}
