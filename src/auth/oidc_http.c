/* HTTP requests to the OpenID provider (oidc_http.h). */
#include "auth/oidc_http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/buf.h"
#include "flow/tasks/curl_api.h"

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct err e;

	return buf_append(ud, p, size * n, &e) == 0 ? size * n : 0;
}

static struct curl_slist *headers(const char *auth)
{
	struct curl_slist *h = curl.slist_append(NULL, "Accept: application/json"), *l;

	if (h && auth && !(l = curl.slist_append(h, auth))) {
		curl.slist_free_all(h);
		return NULL;
	}
	return h;
}

int oidc_http(const char *what, const char *url, const char *form, const char *auth, unsigned timeout_ms, long *status,
	      json_t **answer, struct err *e)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	struct err load;
	struct buf body;
	CURL *h = NULL;
	CURLcode cc;
	int rc = 0;

	*status = 0;
	*answer = NULL;
	buf_init(&body, OIDC_HTTP_ANSWER_MAX);
	buf_set_wipe(&body); /* tokens */
	if (curl_api_load(&load))
		return err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: %s", load.msg);
	if (!(h = curl.easy_init()) || !(hdrs = headers(auth))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "accord");
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, &body);
	if (form)
		curl.easy_setopt(h, CURLOPT_POSTFIELDS, form);
	if ((cc = curl.easy_perform(h)) != CURLE_OK) {
		rc = err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: %s: %s", what,
			     *errbuf ? errbuf : curl.easy_strerror(cc));
		goto out;
	}
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	*answer = json_loadb(body.data ? body.data : "", body.len, 0, NULL);
out:
	/* the header list holds a copy of the client's credential */
	for (struct curl_slist *l = hdrs; l; l = l->next)
		sodium_memzero(l->data, strlen(l->data));
	if (hdrs)
		curl.slist_free_all(hdrs);
	if (h)
		curl.easy_cleanup(h);
	buf_cleanup(&body);
	return rc;
}

char *oidc_http_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = malloc(n * 3 + 1), *o = out;

	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		    *p == '.' || *p == '_' || *p == '~') {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}
