/* The `concord` task's `baseUrl`: a process started on another Accord or Concord server
 * over its REST API (POST /api/v1/process, multipart) with `apiKey`, as Concord's task
 * starts one.  The key goes only into the Authorization header of that one request; no
 * message names it.  Redirects are not followed; the answer is bounded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "base/str.h"
#include "base/uuid.h"
#include "queue/tasks/api_client.h"
#include "queue/tasks/server_tasks.h"

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
static int read_answer(long status, json_t *j, const char *url, char id[UUID_STR_LEN], struct err *e)
{
	const char *s = json_string_value(json_object_get(j, "instanceId"));
	const char *msg = json_string_value(json_object_get(j, "message"));

	if (status == 200 && s && uuid_valid(s, strlen(s)))
		return str_fmt(id, UUID_STR_LEN, "%s", s) ? err_set(e, ERR_INTERNAL, "bad instance id") : 0;
	if (status == 200)
		return err_set(e, ERR_UNAVAILABLE, "concord: %.200s answered without a process ID", url);
	return err_set(e, ERR_UNAVAILABLE, "concord: %.200s refused the start (HTTP %ld): %.300s", url, status,
		       msg ? msg : "no message");
}

int server_task_concord_remote(const char *base_url, const char *api_key, const void *zip, size_t zip_len,
			       json_t *request, json_t *parts, char id[UUID_STR_LEN], struct err *e)
{
	char *url = NULL, *req = NULL, *auth = NULL, *what = NULL;
	json_t *answer = NULL;
	curl_mime *form = NULL;
	CURL *h = NULL;
	long status = 0;
	size_t len = strlen(base_url);
	int rc = -1;

	if (check_url(base_url, e) || curl_api_load(e))
		return -1;
	if (asprintf(&url, "%.*s/api/v1/process", (int)(len - (len && base_url[len - 1] == '/')), base_url) < 0 ||
	    asprintf(&what, "concord: cannot start the process on %s", url) < 0 ||
	    asprintf(&auth, "Authorization: %s", api_key) < 0 || !(req = json_dumps(request, JSON_COMPACT)) ||
	    !(h = curl.easy_init()) || !(form = make_form(h, zip, zip_len, req, parts))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_MIMEPOST, form);
	if (api_client_perform(h, what, auth, NULL, &status, &answer, e) == 0)
		rc = read_answer(status, answer, url, id, e);
out:
	if (auth) {
		sodium_memzero(auth, strlen(auth));
		free(auth);
	}
	if (form)
		curl.mime_free(form);
	if (h)
		curl.easy_cleanup(h);
	json_decref(answer);
	free(req);
	free(url);
	free(what);
	return rc;
}
