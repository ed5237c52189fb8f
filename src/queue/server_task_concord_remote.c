/* The `concord` task's `baseUrl`: a process started on another Accord or Concord server
 * over its REST API (POST /api/v1/process, multipart) with `apiKey`, as Concord's task
 * starts one.  The key goes only into the Authorization header of that one request; no
 * message names it.  Redirects are not followed; the answer is bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "base/buf.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/tasks/curl_api.h"
#include "queue/server_tasks.h"

#define REMOTE_ANSWER_MAX (64 * 1024)
#define REMOTE_CONNECT_MS 10000L
#define REMOTE_TIMEOUT_MS 120000L

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;
	struct err e;

	return buf_append(b, p, size * n, &e) == 0 ? size * n : 0;
}

static int check_url(const char *url, struct err *e)
{
	if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
		return err_set(e, ERR_INVALID, "concord: 'baseUrl' must be an http:// or https:// URL: %.200s", url);
	return 0;
}

/* The multipart body: archive (when given), request, and the text parts. */
static curl_mime *make_form(CURL *h, const void *zip, size_t zip_len, const char *request, json_t *parts)
{
	curl_mime *m = curl.mime_init(h);
	curl_mimepart *p;
	const char *k;
	json_t *v;

	if (!m)
		return NULL;
	if (zip) {
		p = curl.mime_addpart(m);
		curl.mime_name(p, "archive");
		curl.mime_filename(p, "payload.zip");
		curl.mime_type(p, "application/octet-stream");
		curl.mime_data(p, zip, zip_len);
	}
	p = curl.mime_addpart(m);
	curl.mime_name(p, "request");
	curl.mime_type(p, "application/json");
	curl.mime_data(p, request, CURL_ZERO_TERMINATED);
	json_object_foreach(parts, k, v)
	{
		p = curl.mime_addpart(m);
		curl.mime_name(p, k);
		curl.mime_data(p, json_string_value(v), CURL_ZERO_TERMINATED);
	}
	return m;
}

/* The instance id of the answer, or the remote server's refusal. */
static int read_answer(long status, struct buf *body, const char *url, char id[UUID_STR_LEN], struct err *e)
{
	json_t *j = json_loadb(body->data ? body->data : "", body->len, 0, NULL);
	const char *s = json_string_value(json_object_get(j, "instanceId"));
	const char *msg = json_string_value(json_object_get(j, "message"));
	int rc;

	if (status == 200 && s && uuid_valid(s, strlen(s)))
		rc = str_fmt(id, UUID_STR_LEN, "%s", s) ? err_set(e, ERR_INTERNAL, "bad instance id") : 0;
	else if (status == 200)
		rc = err_set(e, ERR_UNAVAILABLE, "concord: %.200s answered without a process ID", url);
	else
		rc = err_set(e, ERR_UNAVAILABLE, "concord: %.200s refused the start (HTTP %ld): %.300s", url, status,
			     msg ? msg : "no message");
	json_decref(j);
	return rc;
}

int server_task_concord_remote(const char *base_url, const char *api_key, const void *zip, size_t zip_len,
			       json_t *request, json_t *parts, char id[UUID_STR_LEN], struct err *e)
{
	char *url = NULL, *req = NULL, *auth = NULL, errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	struct buf body;
	curl_mime *form = NULL;
	CURL *h = NULL;
	long status = 0;
	CURLcode cc;
	int rc = -1;

	buf_init(&body, REMOTE_ANSWER_MAX);
	if (check_url(base_url, e) || curl_api_load(e))
		goto out;
	if (asprintf(&url, "%.*s/api/v1/process", (int)(strlen(base_url) - (base_url[strlen(base_url) - 1] == '/')),
		     base_url) < 0 ||
	    asprintf(&auth, "Authorization: %s", api_key) < 0 || !(req = json_dumps(request, JSON_COMPACT)) ||
	    !(h = curl.easy_init()) || !(form = make_form(h, zip, zip_len, req, parts)) ||
	    !(hdrs = curl.slist_append(NULL, auth))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "accord");
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl.easy_setopt(h, CURLOPT_MIMEPOST, form);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, REMOTE_CONNECT_MS);
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, REMOTE_TIMEOUT_MS);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, &body);
	if ((cc = curl.easy_perform(h)) != CURLE_OK) {
		rc = err_set(e, ERR_UNAVAILABLE, "concord: cannot start the process on %.200s: %s", url,
			     *errbuf ? errbuf : curl.easy_strerror(cc));
		goto out;
	}
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	rc = read_answer(status, &body, url, id, e);
out:
	if (auth) {
		sodium_memzero(auth, strlen(auth));
		free(auth);
	}
	if (curl.slist_free_all)
		curl.slist_free_all(hdrs);
	if (form)
		curl.mime_free(form);
	if (h)
		curl.easy_cleanup(h);
	buf_cleanup(&body);
	free(req);
	free(url);
	return rc;
}
