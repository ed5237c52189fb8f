#ifndef ACCORD_API_WEB_ASSETS_H
#define ACCORD_API_WEB_ASSETS_H

#include <stddef.h>

/* The console's files (web/), embedded at build time by scripts/embed-web into
 * build/gen/web_assets.c.  index.html already has its @ASSETS@ placeholder replaced by
 * "/assets/<web_bundle_hash>". */
struct web_asset {
	const char *path; /* relative to web/: "app.js", "lib/api.js" */
	const char *content_type;
	const unsigned char *data;
	size_t len;
	const unsigned char *gz; /* gzip -9n of data; NULL when it would not be smaller */
	size_t gz_len;
	const char *etag; /* quoted: "\"<sha256 prefix>\"" */
};

/* Ends with a {0} entry. */
extern const struct web_asset web_assets[];
/* SHA-256 prefix (hex) over every path and content: changes with any file. */
extern const char web_bundle_hash[];

#endif
