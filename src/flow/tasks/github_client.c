/* GitHub's REST API for the `github` task (github_client.h). */
#include "flow/tasks/github_client.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "flow/tasks/curl_api.h"
#include "flow/vm_internal.h"

#define GH_DEFAULT_API_URL "https://api.github.com"
#define GH_TIMEOUT_S 30L
#define GH_ATTEMPTS 5
#define GH_MAX_RETRY_AFTER_S 60L
#define GH_MAX_RESPONSE_BYTES (32u << 20)
#define GH_MAX_PAGES 100

static int oom(struct err *e)
{
	return err_set(e, ERR_INTERNAL, "out of memory");
}

/* Concord's API root: scheme, host and port of apiUrl; github.com becomes api.github.com,
 * any other host gets /api/v3. */
static int base_of(struct gh *g, const char *api_url, struct err *e)
{
	CURLU *u = curl.url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	int rc = -1;

	if (!u)
		return oom(e);
	if (curl.url_set(u, CURLUPART_URL, api_url, 0) != CURLUE_OK ||
	    curl.url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl.url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    (strcasecmp(scheme, "http") != 0 && strcasecmp(scheme, "https") != 0)) {
		err_set(e, ERR_INVALID, "github: apiUrl '%s' is not an http(s) URL", api_url);
		goto out;
	}
	if (curl.url_get(u, CURLUPART_PORT, &port, 0) != CURLUE_OK)
		port = NULL;
	bool dotcom = strcasecmp(host, "github.com") == 0 || strcasecmp(host, "gist.github.com") == 0;
	if (asprintf(&g->base, "%s://%s%s%s%s", scheme, dotcom ? "api.github.com" : host, port ? ":" : "",
		     port ? port : "", dotcom ? "" : "/api/v3") < 0) {
		g->base = NULL;
		oom(e);
		goto out;
	}
	rc = 0;
out:
	curl.free(scheme);
	curl.free(host);
	curl.free(port);
	curl.url_cleanup(u);
	return rc;
}

int gh_init(struct gh *g, struct task_ctx *c, const char *api_url, const char *token, bool raw, struct err *e)
{
	const struct flow_host *h = c->h;

	memset(g, 0, sizeof *g);
	g->c = c;
	if (!(g->token = strdup(token)))
		return oom(e);
	if (h->ops->sensitive)
		h->ops->sensitive(h->ctx, g->token, true);
	if (curl_api_load(e) < 0) {
		err_prefix(e, "the github task needs libcurl");
		return -1;
	}
	if (!api_url)
		api_url = GH_DEFAULT_API_URL;
	if (raw) {
		size_t n = strlen(api_url);
		while (n && api_url[n - 1] == '/')
			n--;
		if (strncasecmp(api_url, "http://", 7) != 0 && strncasecmp(api_url, "https://", 8) != 0)
			return err_set(e, ERR_INVALID, "github: apiUrl '%s' is not an http(s) URL", api_url);
		return (g->base = strndup(api_url, n)) ? 0 : oom(e);
	}
	return base_of(g, api_url, e);
}

void gh_cleanup(struct gh *g)
{
	if (g->token) {
		sodium_memzero(g->token, strlen(g->token));
		free(g->token);
	}
	free(g->base);
	memset(g, 0, sizeof *g);
}

char *gh_escape(const char *s)
{
	struct buf b;
	struct err e;
	buf_init(&b, 1u << 20);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((isalnum(*p) || strchr("-._~", *p) ? buf_append_char(&b, (char)*p, &e)
						       : buf_printf(&b, &e, "%%%02X", *p)) < 0) {
			buf_cleanup(&b);
			return NULL;
		}
	if (buf_append_char(&b, '\0', &e) < 0) {
		buf_cleanup(&b);
		return NULL;
	}
	return buf_detach(&b, NULL);
}

struct gh_answer {
	struct buf body;
	long retry_after_s; /* -1: none */
	char next[2048];    /* Link rel="next", "" when none */
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct gh_answer *a = ctx;
	struct err e;
	return buf_append(&a->body, p, size * n, &e) < 0 ? 0 : size * n;
}

/* Link: <url>; rel="next", <url>; rel="last" */
static void link_next(struct gh_answer *a, const char *v, size_t len)
{
	const char *end = v + len, *lt;
	while ((lt = memchr(v, '<', (size_t)(end - v)))) {
		const char *gt = memchr(lt, '>', (size_t)(end - lt)), *comma;
		if (!gt)
			return;
		comma = memchr(gt, ',', (size_t)(end - gt));
		size_t rest = (size_t)((comma ? comma : end) - gt);
		if (memmem(gt, rest, "rel=\"next\"", 10)) {
			str_fmt_cut(a->next, sizeof a->next, "%.*s", (int)(gt - lt - 1), lt + 1);
			return;
		}
		v = comma ? comma + 1 : end;
	}
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
	struct gh_answer *a = ctx;
	size_t len = size * n;
	int64_t v;
	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		struct str t = {p + 12, len - 12};
		while (t.len && (*t.p == ' ' || *t.p == '\t'))
			t.p++, t.len--;
		while (t.len && strchr(" \t\r\n", t.p[t.len - 1]))
			t.len--;
		if (str_to_i64(t, 0, GH_MAX_RETRY_AFTER_S * 100, &v, "Retry-After", &(struct err){0}) == 0)
			a->retry_after_s = (long)v;
	}
	if (len > 5 && strncasecmp(p, "Link:", 5) == 0)
		link_next(a, p + 5, len - 5);
	return len;
}

static void sleep_s(long s)
{
	struct timespec ts = {s, 0};
	while (nanosleep(&ts, &ts) < 0)
		;
}

static bool retryable(const char *method, long status)
{
	bool idempotent = strcmp(method, "POST") != 0 && strcmp(method, "PATCH") != 0;
	return idempotent && (status == 429 || status == 500 || status == 502 || status == 503);
}

/* One request to url (absolute); 0 with *status and a's body whatever the status, < 0 when
 * no answer came. */
static int perform(struct gh *g, const char *method, const char *url, const char *body,
		   struct gh_answer *a, long *status, struct err *e)
{
	char errbuf[CURL_ERROR_SIZE] = "", *auth = NULL;
	struct curl_slist *hdrs = NULL, *l;
	CURL *h;
	CURLcode rc;

	if (!(h = curl.easy_init()))
		return oom(e);
	if (asprintf(&auth, "Authorization: Bearer %s", g->token) < 0) {
		curl.easy_cleanup(h);
		return oom(e);
	}
	const char *const fixed[] = {"Accept: application/vnd.github+json", "Content-Type: application/json", auth};
	for (size_t i = 0; i < 3; i++) {
		if (!(l = curl.slist_append(hdrs, fixed[i])))
			break;
		hdrs = l;
	}
	sodium_memzero(auth, strlen(auth));
	free(auth);
	buf_reset(&a->body);
	a->retry_after_s = -1;
	a->next[0] = '\0';
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "Accord-GitHub-Task");
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body)
		curl.easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, GH_TIMEOUT_S);
	curl.easy_setopt(h, CURLOPT_TIMEOUT, GH_TIMEOUT_S * 4);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, a);
	curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl.easy_setopt(h, CURLOPT_HEADERDATA, a);
	rc = curl.easy_perform(h);
	curl.slist_free_all(hdrs);
	if (rc == CURLE_OK)
		curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	curl.easy_cleanup(h);
	if (rc != CURLE_OK)
		return err_set(e, ERR_UNAVAILABLE, "github: %s %s failed: %s", method, url,
			       *errbuf ? errbuf : curl.easy_strerror(rc));
	return 0;
}

/* GitHub's error text: "GitHub API error: <status> - <message>[ - <errors>]". */
static int api_error(struct gh_answer *a, long status, struct err *e)
{
	json_t *v = a->body.len ? json_loadb(a->body.data, a->body.len, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(v, "message"));
	char *errors = json_object_get(v, "errors") ? json_dumps(json_object_get(v, "errors"), JSON_COMPACT) : NULL;

	if (v)
		err_set(e, ERR_INVALID, "GitHub API error: %ld - %s%s%s", status, msg ? msg : "", errors ? " - " : "",
			errors ? errors : "");
	else
		err_set(e, ERR_INVALID, "GitHub API error: %ld - %.*s", status, (int)(a->body.len > 200 ? 200 : a->body.len),
			a->body.len ? a->body.data : "");
	free(errors);
	json_decref(v);
	return -1;
}

/* A request with its retries; the answer's parsed body in *resp (2xx). */
static int request(struct gh *g, const char *method, const char *url, json_t *body, json_t **resp, long *status,
		   char *next, size_t next_cap, struct err *e)
{
	struct gh_answer a = {.retry_after_s = -1};
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	int rc = -1;

	*status = 0;
	buf_init(&a.body, GH_MAX_RESPONSE_BYTES);
	if (body && !text) {
		oom(e);
		goto out;
	}
	for (int attempt = 1;; attempt++) {
		if (perform(g, method, url, text, &a, status, e) < 0)
			goto out;
		if (*status >= 200 && *status < 300)
			break;
		if (!retryable(method, *status) || attempt >= GH_ATTEMPTS) {
			api_error(&a, *status, e);
			goto out;
		}
		long wait = a.retry_after_s >= 0 ? a.retry_after_s : 1L << (attempt - 1);
		char msg[200];
		str_fmt_cut(msg, sizeof msg, "GitHub returned %ld. Retry in %ld s (attempt %d of %d)", *status,
			    wait > GH_MAX_RETRY_AFTER_S ? GH_MAX_RETRY_AFTER_S : wait, attempt, GH_ATTEMPTS);
		if (g->warn)
			g->warn(g->warn_ctx, msg);
		else
			vm_log(g->c->vm, FLOW_WARN, "%s", msg);
		sleep_s(wait > GH_MAX_RETRY_AFTER_S ? GH_MAX_RETRY_AFTER_S : wait);
	}
	if (!a.body.len) {
		*resp = json_null();
	} else if (!(*resp = jsonx_parse(a.body.data, a.body.len, 64, e))) {
		err_prefix(e, "github: %s %s: the answer is not JSON", method, url);
		goto out;
	}
	if (next)
		str_fmt_cut(next, next_cap, "%s", a.next);
	rc = 0;
out:
	free(text);
	buf_cleanup(&a.body);
	return rc;
}

int gh_call(struct gh *g, const char *method, const char *path, json_t *body, json_t **resp, long *status,
	    struct err *e)
{
	char *url = NULL;
	long st = 0;
	int rc;

	if (asprintf(&url, "%s%s", g->base, path) < 0)
		return oom(e);
	rc = request(g, method, url, body, resp, status ? status : &st, NULL, 0, e);
	free(url);
	return rc;
}

int gh_pages(struct gh *g, const char *path, int per_page, bool (*page)(void *ctx, json_t *items), void *ctx,
	     struct err *e)
{
	char url[2048], next[2048];
	json_t *items = NULL;
	long status;

	str_fmt_cut(url, sizeof url, "%s%s%sper_page=%d", g->base, path, strchr(path, '?') ? "&" : "?", per_page);
	for (int i = 0; i < GH_MAX_PAGES && url[0]; i++) {
		if (request(g, "GET", url, NULL, &items, &status, next, sizeof next, e) < 0)
			return -1;
		if (!json_is_array(items)) {
			json_decref(items);
			return err_set(e, ERR_INVALID, "github: GET %s: the answer is not a list", path);
		}
		bool more = page(ctx, items);
		json_decref(items);
		if (!more)
			break;
		/* the token goes nowhere but to the API's own root */
		str_fmt_cut(url, sizeof url, "%s", strncmp(next, g->base, strlen(g->base)) == 0 ? next : "");
	}
	return 0;
}

static bool collect(void *ctx, json_t *items)
{
	json_array_extend(ctx, items);
	return true;
}

int gh_list(struct gh *g, const char *path, json_t **out, struct err *e)
{
	json_t *all = json_array();

	if (!all)
		return oom(e);
	if (gh_pages(g, path, 100, collect, all, e) < 0) {
		json_decref(all);
		return -1;
	}
	*out = all;
	return 0;
}
