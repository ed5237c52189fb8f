#ifndef ACCORD_REPO_MVN_H
#define ACCORD_REPO_MVN_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "repo/repo.h"

/* `imports: - mvn: {url, dest}` (repo.h repo_import_fetch): Maven coordinates, the
 * repository layout path, the artifact cache and the download (libcurl, loaded on
 * demand by flow/tasks/curl_api.h). */

struct mvn_coords {
	char group[256];
	char artifact[256];
	char version[128];
	char classifier[128]; /* "" when none */
	char type[32];	      /* "jar" when none */
};

/* mvn://group:artifact:version[:classifier][@type].  Every part is a plain name
 * (letters, digits, '.', '-', '_', '+'; not "." or ".."): ERR_INVALID naming the URL. */
int repo_mvn_parse(const char *url, struct mvn_coords *c, struct err *e) WUR;

/* group/with/slashes/artifact/version/artifact-version[-classifier].type into out. */
int repo_mvn_path(const struct mvn_coords *c, char *out, size_t cap, struct err *e) WUR;

int repo_mvn_import(struct repo_imports *im, json_t *spec, const char *dest, struct err *e) WUR;

#endif
