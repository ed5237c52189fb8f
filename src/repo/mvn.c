/* `imports: - mvn:` (repo/mvn.h): coordinates, cache, download, unpack. */
#include "repo/mvn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "base/buf.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/copy.h"
#include "flow/tasks/curl_api.h"
#include "repo/internal.h"

#define MAX_REPOS 16

static bool plain_part(const char *s, size_t n)
{
	if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      strchr(".-_+", s[i])))
			return false;
	return true;
}

static int part(const char *url, const char *s, size_t n, char *out, size_t cap, struct err *e)
{
	if (!plain_part(s, n) || n >= cap)
		return err_set(e, ERR_INVALID,
			       "invalid Maven URL '%.200s', expected mvn://groupId:artifactId:version[:classifier][@type]",
			       url);
	memcpy(out, s, n);
	out[n] = 0;
	return 0;
}

int repo_mvn_parse(const char *url, struct mvn_coords *c, struct err *e)
{
	char *caps[] = {c->group, c->artifact, c->version, c->classifier};
	const size_t cap[] = {sizeof c->group, sizeof c->artifact, sizeof c->version, sizeof c->classifier};
	const char *p, *end, *at;
	size_t n = 0;

	memset(c, 0, sizeof *c);
	if (strncmp(url, "mvn://", 6) != 0)
		return err_set(e, ERR_INVALID, "invalid Maven URL '%.200s': it must start with mvn://", url);
	p = url + 6;
	at = strchr(p, '@');
	end = at ? at : p + strlen(p);
	if (at && part(url, at + 1, strlen(at + 1), c->type, sizeof c->type, e))
		return -ERR_INVALID;
	if (!at)
		memcpy(c->type, "jar", 4);
	while (p <= end) {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		const char *q = colon ? colon : end;

		if (n == 4 || part(url, p, (size_t)(q - p), caps[n], cap[n], e))
			return err_set(e, ERR_INVALID,
				       "invalid Maven URL '%.200s', expected "
				       "mvn://groupId:artifactId:version[:classifier][@type]",
				       url);
		n++;
		p = q + 1;
	}
	if (n < 3)
		return err_set(e, ERR_INVALID,
			       "invalid Maven URL '%.200s', expected mvn://groupId:artifactId:version[:classifier][@type]",
			       url);
	return 0;
}

int repo_mvn_path(const struct mvn_coords *c, char *out, size_t cap, struct err *e)
{
	char group[sizeof c->group];

	memcpy(group, c->group, sizeof group);
	for (char *q = group; *q; q++)
		if (*q == '.')
			*q = '/';
	if (str_fmt(out, cap, "%s/%s/%s/%s-%s%s%s.%s", group, c->artifact, c->version, c->artifact, c->version,
		    c->classifier[0] ? "-" : "", c->classifier, c->type))
		return err_set(e, ERR_INVALID, "Maven artifact path too long");
	return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	return buf_append(b, p, size * n, NULL) < 0 ? 0 : size * n;
}

/* GET base/rel into b: 1 when the repository does not have it (404), 0 when fetched. */
static int download(const struct repos *rs, const char *base, const char *rel, struct buf *b, struct err *e)
{
	char *url = NULL, shown[2048];
	long status = 0;
	CURLcode cc;
	CURL *h;
	int rc;

	if (curl_api_load(e))
		return -1;
	if (!(h = curl.easy_init()) || asprintf(&url, "%s%s%s", base, base[strlen(base) - 1] == '/' ? "" : "/", rel) < 0) {
		if (h)
			curl.easy_cleanup(h);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	buf_reset(b);
	repo_strip_url_credentials(url, shown, sizeof shown); /* messages reach the user */
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
	curl.easy_setopt(h, CURLOPT_MAXREDIRS, 5L);
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_TIMEOUT, (long)rs->cfg.fetch_timeout_s);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, b);
	cc = curl.easy_perform(h);
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (cc == CURLE_WRITE_ERROR)
		rc = err_set(e, ERR_TOO_LARGE, "%s: larger than %llu bytes (limit archive_bytes)", shown,
			     (unsigned long long)limits.archive_bytes);
	else if (cc != CURLE_OK)
		rc = err_set(e, ERR_UNAVAILABLE, "%s: %s", shown, curl.easy_strerror(cc));
	else if (status == 404)
		rc = 1;
	else if (status != 200)
		rc = err_set(e, ERR_UNAVAILABLE, "%s: HTTP %ld", shown, status);
	else
		rc = 0;
	curl.easy_cleanup(h);
	free(url);
	return rc;
}

/* The artifact from the first repository of the list that has it; a repository that
 * fails is passed over (as Maven does), its error kept for the message. */
static int fetch_remote(const struct repos *rs, const char *url, const char *rel, struct buf *b, struct err *e)
{
	const char *list = rs->cfg.maven_repos;
	char base[2048], failed[ERR_MSG_MAX] = "";
	int rc = 1;

	if (!list || !*list)
		return err_set(e, ERR_INVALID, "%s: no Maven repository is configured (--maven-repository)", url);
	for (const char *p = list; rc != 0 && *p;) {
		size_t n = strcspn(p, ", \t\n");

		if (n && n < sizeof base) {
			memcpy(base, p, n);
			base[n] = 0;
			if ((rc = download(rs, base, rel, b, e)) < 0)
				str_fmt_cut(failed, sizeof failed, "%s", e->msg);
		}
		p += n;
		p += strspn(p, ", \t\n");
	}
	if (rc == 0)
		return 0;
	repo_strip_url_credentials(list, base, sizeof base);
	return err_set(e, failed[0] ? ERR_UNAVAILABLE : ERR_INVALID,
		       "%s: artifact %s not found in the Maven repositories (%s)%s%s", url, rel, base,
		       failed[0] ? "; last error: " : "", failed);
}

/* The artifact's bytes: from <data>/imports/mvn/<rel>, else downloaded and kept there. */
static int artifact(const struct repos *rs, const char *url, const struct mvn_coords *c, const char *rel,
		    struct buf *b, struct err *e)
{
	bool snapshot = strstr(c->version, "SNAPSHOT") != NULL;
	char *path = NULL, *data;
	size_t len = 0;
	int rc;

	if (asprintf(&path, "%s/imports/mvn/%s", rs->cfg.data_dir, rel) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if ((!snapshot || rs->cfg.offline) && access(path, F_OK) == 0) {
		rc = -1;
		if ((data = path_read_file(path, limits.archive_bytes, &len, e))) {
			rc = buf_append(b, data, len, e);
			free(data);
		}
		free(path);
		return rc;
	}
	if (rs->cfg.offline) {
		free(path);
		return err_set(e, ERR_UNAVAILABLE, "%s is not in the cache (offline)", url);
	}
	rc = fetch_remote(rs, url, rel, b, e);
	if (rc == 0) {
		char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;

		if (slash)
			*slash = 0;
		if (!dir || path_mkdirs(dir, 0700, e) || path_write_file(path, b->data, b->len, 0600, e))
			LOG_W("%s: not cached: %s", url, dir ? e->msg : "out of memory");
		free(dir);
	}
	free(path);
	return rc;
}

int repo_mvn_import(struct repo_imports *im, json_t *spec, const char *dest, struct err *e)
{
	struct pack_limits lim = {limits.archive_entries, limits.archive_bytes, limits.archive_ratio};
	const char *url = json_string_value(json_object_get(spec, "url"));
	unsigned char sum[crypto_hash_sha256_BYTES];
	char rel[1024], hex[2 * sizeof sum + 1], *tmp = NULL;
	struct mvn_coords c;
	struct buf b;
	int rc;

	if (!url)
		return err_set(e, ERR_INVALID, "Mandatory parameter 'url' not found");
	if ((rc = repo_mvn_parse(url, &c, e)) || (rc = repo_mvn_path(&c, rel, sizeof rel, e)))
		return rc;
	buf_init(&b, limits.archive_bytes);
	rc = artifact(im->rs, url, &c, rel, &b, e);
	if (rc == 0)
		rc = repo_import_scratch(im->rs, &tmp, e);
	if (rc == 0 && (rc = pack_unzip(b.data, b.len, tmp, &lim, e)))
		err_prefix(e, "%s", url);
	if (rc == 0)
		rc = flow_copy_tree(tmp, dest, NULL, e);
	if (rc == 0) {
		crypto_hash_sha256(sum, (const unsigned char *)b.data, b.len);
		sodium_bin2hex(hex, sizeof hex, sum, sizeof sum);
		if (json_array_append_new(im->resolved, json_pack("{s:s, s:s, s:s}", "type", "mvn", "url", url,
								  "sha256", hex)))
			rc = err_set(e, ERR_INTERNAL, "out of memory");
	}
	buf_cleanup(&b);
	repo_import_scratch_done(tmp);
	return rc;
}
