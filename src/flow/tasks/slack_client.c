#include "flow/tasks/slack_client.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "base/oom.h"
#include "base/str.h"
#include "flow/tasks/curl_api.h"
#include "flow/tasks/defaults.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

#define SLACK_DEFAULT_API_URL "https://slack.com/api/"
#define SLACK_DEFAULT_TIMEOUT_MS 30000L
#define SLACK_MAX_TIMEOUT_MS 600000L
#define SLACK_DEFAULT_RETRIES 3
#define SLACK_MAX_RETRIES 10
#define SLACK_DEFAULT_RETRY_AFTER_S 10L
#define SLACK_MAX_RETRY_AFTER_S 60L
#define SLACK_MAX_RESPONSE_BYTES (4u << 20)

struct slack_job {
	struct task_job base; /* must be first */
	const char *task;
	char what[200];
	slack_done_fn done;
	bool ignore_errors;
	char *url, *proxy;
	char *auth; /* "Authorization: Bearer …", wiped when done */
	char *body;
	long connect_ms, so_ms;
	int retries;
	CURL *h;
	/* the outcome */
	long status;
	long retry_after_s;
	struct buf resp;
	int rc;
	struct err e;
};

static void job_free(struct task_job *base)
{
	struct slack_job *j = (struct slack_job *)base;
	if (j->h)
		curl.easy_cleanup(j->h);
	if (j->auth) {
		sodium_memzero(j->auth, strlen(j->auth));
		free(j->auth);
	}
	free(j->url);
	free(j->proxy);
	free(j->body);
	buf_cleanup(&j->resp);
	free(j);
}

static int opt_long(json_t *m, const char *key, long def, long min, long max, long *out, struct err *e)
{
	json_t *v = json_object_get(m, key);
	int64_t n;
	*out = def;
	if (!v || json_is_null(v))
		return 0;
	if (value_to_long(v, &n, e) < 0 || n < min || n > max)
		return err_set(e, ERR_INVALID, "'%s' must be a number from %ld to %ld", key, min, max);
	*out = (long)n;
	return 0;
}

/* The token: the flow's (masked from now on) or the server's.  *own tells which. */
static int token_of(struct task_ctx *t, json_t *in, json_t *d, const char **token, bool *own, struct err *e)
{
	if (task_opt_str(in, "apiToken", token, e) < 0 || (!*token && task_opt_str(in, "authToken", token, e) < 0))
		return -1;
	*own = *token != NULL;
	if (!*token && task_opt_str(d, "apiToken", token, e) < 0)
		return -1;
	if (!*token || !**token)
		return err_set(e, ERR_INVALID,
			       "%s: no Slack API token: give 'apiToken', or start the server with ACCORD_SLACK_TOKEN",
			       t->task);
	if (*own && t->h->ops->sensitive)
		t->h->ops->sensitive(t->h->ctx, *token, true);
	return 0;
}

static int url_of(struct task_ctx *t, json_t *in, json_t *d, bool own, const char *method, char **url, struct err *e)
{
	const char *base;
	size_t n;
	if (task_opt_str(in, "apiUrl", &base, e) < 0)
		return -1;
	if (base && !own)
		return err_set(e, ERR_INVALID, "%s: 'apiUrl' may be given only with the flow's own 'apiToken'", t->task);
	if (!base && task_opt_str(d, "apiUrl", &base, e) < 0)
		return -1;
	if (!base || !*base)
		base = SLACK_DEFAULT_API_URL;
	if (strncasecmp(base, "http://", 7) != 0 && strncasecmp(base, "https://", 8) != 0)
		return err_set(e, ERR_INVALID, "%s: the Slack API URL must be http:// or https://, got '%.100s'", t->task,
			       base);
	n = strlen(base);
	if (asprintf(url, "%s%s%s", base, n && base[n - 1] == '/' ? "" : "/", method) < 0) {
		*url = NULL;
		return oom_fail(e);
	}
	return 0;
}

static int proxy_of(json_t *in, json_t *d, char **proxy, struct err *e)
{
	const char *host;
	long port;
	json_t *src = json_object_get(in, "proxyAddress") ? in : d;
	*proxy = NULL;
	if (task_opt_str(src, "proxyAddress", &host, e) < 0 || !host || !*host)
		return host || e->code == 0 ? 0 : -1;
	if (opt_long(src, "proxyPort", 0, 1, 65535, &port, e) < 0)
		return -1;
	if (port == 0)
		return err_set(e, ERR_INVALID, "'proxyPort' is required with 'proxyAddress'");
	if (strpbrk(host, "/@ \t\r\n"))
		return err_set(e, ERR_INVALID, "'proxyAddress' must be a host name, got '%.100s'", host);
	if (asprintf(proxy, "http://%s:%ld", host, port) < 0) {
		*proxy = NULL;
		return oom_fail(e);
	}
	return 0;
}

static int parse_settings(struct task_ctx *t, json_t *in, const char *method, struct slack_job *j, struct err *e)
{
	json_t *d = task_defaults_get(t->h, "slackParams");
	const char *token;
	long retries;
	bool own;

	if (token_of(t, in, d, &token, &own, e) < 0 || url_of(t, in, d, own, method, &j->url, e) < 0 ||
	    proxy_of(in, d, &j->proxy, e) < 0)
		return -1;
	if (opt_long(in, "connectTimeout", SLACK_DEFAULT_TIMEOUT_MS, 0, SLACK_MAX_TIMEOUT_MS, &j->connect_ms, e) < 0 ||
	    opt_long(in, "soTimeout", SLACK_DEFAULT_TIMEOUT_MS, 0, SLACK_MAX_TIMEOUT_MS, &j->so_ms, e) < 0 ||
	    opt_long(in, "retryCount", SLACK_DEFAULT_RETRIES, 0, SLACK_MAX_RETRIES, &retries, e) < 0)
		return -1;
	j->retries = (int)retries;
	if (json_object_get(in, "ignoreErrors") &&
	    value_to_bool(json_object_get(in, "ignoreErrors"), &j->ignore_errors, e) < 0) {
		err_prefix(e, "'ignoreErrors'");
		return -1;
	}
	if (asprintf(&j->auth, "Authorization: Bearer %s", token) < 0) {
		j->auth = NULL;
		return oom_fail(e);
	}
	return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct slack_job *j = ud;
	return buf_append(&j->resp, p, size * n, NULL) < 0 ? 0 : size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct slack_job *j = ud;
	size_t len = size * n;
	int64_t v;
	if (len > 12 && strncasecmp(p, "Retry-After:", 12) == 0) {
		struct str s = {p + 12, len - 12};
		while (s.len && (*s.p == ' ' || *s.p == '\t'))
			s.p++, s.len--;
		while (s.len && (s.p[s.len - 1] == '\r' || s.p[s.len - 1] == '\n' || s.p[s.len - 1] == ' '))
			s.len--;
		if (str_to_i64(s, 0, SLACK_MAX_RETRY_AFTER_S * 1000, &v, "Retry-After", NULL) == 0)
			j->retry_after_s = v > SLACK_MAX_RETRY_AFTER_S ? SLACK_MAX_RETRY_AFTER_S : (long)v;
	}
	return len;
}

static struct curl_slist *set_options(struct slack_job *j, char *errbuf)
{
	struct curl_slist *hdrs = curl.slist_append(NULL, "Content-Type: application/json; charset=utf-8"), *l;
	CURL *h = j->h;
	if (hdrs && (l = curl.slist_append(hdrs, j->auth)))
		hdrs = l;
	curl.easy_setopt(h, CURLOPT_URL, j->url);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "accord");
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl.easy_setopt(h, CURLOPT_POSTFIELDS, j->body);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, j->connect_ms);
	if (j->so_ms > 0) {
		curl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (j->so_ms + 999) / 1000);
	}
	if (j->proxy) {
		curl.easy_setopt(h, CURLOPT_PROXY, j->proxy);
		/* the proxy relays bytes and never sees the token, even for an http:// API */
		curl.easy_setopt(h, CURLOPT_HTTPPROXYTUNNEL, 1L);
	}
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, j);
	curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl.easy_setopt(h, CURLOPT_HEADERDATA, j);
	return hdrs;
}

static void sleep_s(long s)
{
	struct timespec ts = {s, 0};
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* On the job's thread: the call and its retries, touching only the job's data. */
static void job_run(struct task_job *base)
{
	struct slack_job *j = (struct slack_job *)base;
	char errbuf[CURL_ERROR_SIZE];
	struct curl_slist *hdrs;

	for (int attempt = 0; attempt <= j->retries; attempt++) {
		CURLcode rc;
		if (attempt > 0)
			sleep_s(j->retry_after_s);
		buf_reset(&j->resp);
		errbuf[0] = '\0';
		j->retry_after_s = SLACK_DEFAULT_RETRY_AFTER_S;
		hdrs = set_options(j, errbuf);
		rc = curl.easy_perform(j->h);
		if (hdrs)
			curl.slist_free_all(hdrs);
		if (rc != CURLE_OK) {
			j->rc = err_set(&j->e, ERR_UNAVAILABLE, "%s task error: POST %s failed: %s", j->task, j->url,
					*errbuf ? errbuf : curl.easy_strerror(rc));
			return;
		}
		curl.easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &j->status);
		if (j->status == 200)
			return;
	}
}

static int job_finish(struct task_job *base, struct task_ctx *t, json_t **out, struct err *e)
{
	struct slack_job *j = (struct slack_job *)base;
	json_t *resp;
	int rc;

	*out = NULL;
	if (j->rc < 0) {
		*e = j->e;
		if (!j->ignore_errors)
			return -1;
		vm_log(t->vm, FLOW_WARN, "%s (ignoreErrors=true)", e->msg);
		*out = json_pack("{s:b, s:s}", "ok", 0, "error", e->msg);
		return *out ? 0 : oom_fail(e);
	}
	if (j->status != 200) {
		char msg[160];
		vm_log(t->vm, FLOW_WARN, "%s: POST %s -> response code: %ld", j->task, j->url, j->status);
		str_fmt_cut(msg, sizeof msg, "Slack request not successful after %d retries. Last response code: %ld",
			    j->retries, j->status);
		if (!(resp = json_pack("{s:b, s:s}", "ok", 0, "error", msg)))
			return oom_fail(e);
	} else if (!(resp = jsonx_parse(j->resp.data ? j->resp.data : "", j->resp.len, 64, e)) ||
		   !json_is_object(resp)) {
		json_decref(resp);
		return err_set(e, ERR_UNAVAILABLE, "%s task error: POST %s: the answer is not a JSON object", j->task,
			       j->url);
	}
	rc = j->done(t, j->what, resp, out, e);
	json_decref(resp);
	return rc;
}

int slack_call(struct task_ctx *t, json_t *in, const char *method, json_t *body, const char *what, slack_done_fn done,
	       struct err *e)
{
	struct slack_job *j = NULL;

	if (!body)
		return oom_fail(e);
	if (curl_api_load(e) < 0) {
		err_prefix(e, "the %s task needs libcurl", t->task);
		goto fail;
	}
	if (!(j = calloc(1, sizeof *j))) {
		oom_fail(e);
		goto fail;
	}
	j->base = (struct task_job){job_run, job_finish, job_free};
	j->task = t->task;
	j->done = done;
	str_fmt_cut(j->what, sizeof j->what, "%s", what ? what : "");
	buf_init(&j->resp, SLACK_MAX_RESPONSE_BYTES);
	if (!(j->body = json_dumps(body, JSON_COMPACT)) || !(j->h = curl.easy_init())) {
		oom_fail(e);
		goto fail;
	}
	if (parse_settings(t, in, method, j, e) < 0)
		goto fail;
	json_decref(body);
	t->job = &j->base;
	return 0;
fail:
	json_decref(body);
	if (j)
		job_free(&j->base);
	return -1;
}
