#ifndef ACCORD_FLOW_TASKS_CURL_API_H
#define ACCORD_FLOW_TASKS_CURL_API_H

#include <curl/curl.h>

#include "base/err.h"

/* libcurl, loaded on demand.  Only the `http`, `smtp` and `slack` tasks speak to it, but Debian's libcurl
 * brings librtmp, GnuTLS, p11-kit, krb5, ldap, nghttp2, libssh2 and libpsl, whose
 * relocations and constructors made every `accord run` and every process runner start
 * several times slower and ~9 MB bigger.  So the binary does not link it: curl_api_load()
 * opens it on the task's first use (once, thread-safe), runs curl_global_init() once per
 * process, and fills `curl` with the functions http.c uses, which call through
 * `curl.x(...)` instead of `curl_x(...)`.  Note that these calls bypass the type checks
 * curl/typecheck-gcc.h puts on curl_easy_setopt() and curl_easy_getinfo(). */
struct curl_api {
	__typeof__(&curl_easy_init) easy_init;
	__typeof__(&curl_easy_cleanup) easy_cleanup;
	CURLcode (*easy_setopt)(CURL *h, CURLoption option, ...);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	__typeof__(&curl_easy_perform) easy_perform;
	__typeof__(&curl_easy_strerror) easy_strerror;
	__typeof__(&curl_easy_escape) easy_escape;
	__typeof__(&curl_free) free;
	__typeof__(&curl_url) url;
	__typeof__(&curl_url_set) url_set;
	__typeof__(&curl_url_get) url_get;
	__typeof__(&curl_url_cleanup) url_cleanup;
	__typeof__(&curl_url_strerror) url_strerror;
	__typeof__(&curl_slist_append) slist_append;
	__typeof__(&curl_slist_free_all) slist_free_all;
	__typeof__(&curl_mime_init) mime_init;
	__typeof__(&curl_mime_free) mime_free;
	__typeof__(&curl_mime_addpart) mime_addpart;
	__typeof__(&curl_mime_name) mime_name;
	__typeof__(&curl_mime_data) mime_data;
	__typeof__(&curl_mime_filedata) mime_filedata;
	__typeof__(&curl_mime_filename) mime_filename;
	__typeof__(&curl_mime_type) mime_type;
};

/* Filled by a successful curl_api_load(); all NULL before (and after a failed load). */
extern struct curl_api curl;

/* Loads the library (CURL_SONAME, set by the Makefile from the build's libcurl) and
 * initialises it.  Thread-safe; only the first call does the work, later calls return
 * its result.  ERR_INTERNAL naming the library and dlerror() when it or a symbol is
 * missing, or curl_global_init()'s message when that fails. */
int curl_api_load(struct err *e) WUR;

#endif
