/* HTTP requests of server tasks to a REST API (api_client.h). */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/buf.h"
#include "queue/tasks/api_client.h"

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct err e;

	return buf_append(ud, p, size * n, &e) == 0 ? size * n : 0;
}

int api_client_perform(CURL *h, const char *what, char *auth, const char *extra, long *status, json_t **answer,
		       struct err *e)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL, *l;
	struct buf body;
	CURLcode cc;
	int rc = 0;

	*status = 0;
	*answer = NULL;
	buf_init(&body, API_CLIENT_ANSWER_MAX);
	hdrs = curl.slist_append(NULL, auth);
	sodium_memzero(auth, strlen(auth));
	if (!hdrs || !(l = curl.slist_append(hdrs, "Accept: application/json"))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	hdrs = l;
	if (extra && !(l = curl.slist_append(hdrs, extra))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	hdrs = l;
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "accord");
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, API_CLIENT_CONNECT_MS);
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, API_CLIENT_TIMEOUT_MS);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, &body);
	if ((cc = curl.easy_perform(h)) != CURLE_OK) {
		rc = err_set(e, ERR_UNAVAILABLE, "%s: %s", what, *errbuf ? errbuf : curl.easy_strerror(cc));
		goto out;
	}
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	*answer = json_loadb(body.data ? body.data : "", body.len, JSON_DECODE_ANY, NULL);
out:
	/* the header list holds a copy of the credential */
	for (l = hdrs; l; l = l->next)
		sodium_memzero(l->data, strlen(l->data));
	curl.slist_free_all(hdrs);
	buf_cleanup(&body);
	return rc;
}

int api_client_json(const char *method, const char *url, char *auth, json_t *body, long *status, json_t **answer,
		    struct err *e)
{
	char *text = NULL;
	CURL *h = NULL;
	int rc;

	if (curl_api_load(e)) {
		sodium_memzero(auth, strlen(auth));
		return -1;
	}
	if ((body && !(text = json_dumps(body, JSON_COMPACT))) || !(h = curl.easy_init())) {
		sodium_memzero(auth, strlen(auth));
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (text)
		curl.easy_setopt(h, CURLOPT_POSTFIELDS, text);
	else if (strcmp(method, "GET") != 0)
		curl.easy_setopt(h, CURLOPT_POSTFIELDS, "");
	rc = api_client_perform(h, url, auth, text ? "Content-Type: application/json" : NULL, status, answer, e);
out:
	if (h)
		curl.easy_cleanup(h);
	free(text);
	return rc;
}

char *api_client_segment(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s), j = 0;
	char *out = n < SIZE_MAX / 3 ? malloc(n * 3 + 1) : NULL;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
		    ch == '_' || ch == '.' || ch == '~') {
			out[j++] = (char)ch;
		} else {
			out[j++] = '%';
			out[j++] = hex[ch >> 4];
			out[j++] = hex[ch & 15];
		}
	}
	out[j] = '\0';
	return out;
}
