#ifndef ACCORD_CLI_RUN_IMPORTS_H
#define ACCORD_CLI_RUN_IMPORTS_H

#include <stdbool.h>

#include <jansson.h>

#include "base/err.h"
#include "base/buf.h"
#include "flow/model.h"
#include "repo/repo.h"

/* git and mvn `imports` for `accord run` (docs/flows.md "Imports"): fetched with the
 * server's code (repo.h repo_import_fetch) into the working folder, the clones and the
 * artifacts kept in a cache folder shared by every run of the user:
 * --imports-cache, else $XDG_CACHE_HOME/accord, else $HOME/.cache/accord.  The cache is
 * opened on the first git or mvn import only.  `secret` is refused (no server). */
struct run_imports_opts {
	const char *cache;	  /* NULL: the default above */
	const char *git_base_url; /* --imports-git-base-url */
	struct buf maven_repos;	  /* --maven-repository, comma-separated */
	bool offline;		  /* --offline: the cache only */
};

struct run_imports {
	const struct run_imports_opts *o;
	struct repos *rs;
	struct repo_imports im;
	struct model_importer importer;
};

/* The importer (ri->importer) of a run; ri must stay in place while it is used. */
int run_imports_init(struct run_imports *ri, const struct run_imports_opts *o, struct err *e) WUR;
/* The imports fetched, one text line each, for the log: a new array of strings. */
json_t *run_imports_lines(const struct run_imports *ri);
void run_imports_cleanup(struct run_imports *ri);

#endif
