#include "flow/tasks/curl_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

#ifndef CURL_SONAME
#define CURL_SONAME "libcurl.so.4"
#endif

struct curl_api curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[ERR_MSG_MAX];

#define SYM(field, name)                                                                                               \
	do {                                                                                                           \
		*(void **)&api.field = dlsym(h, name);                                                                 \
		if (!api.field) {                                                                                      \
			str_fmt_cut(load_error, sizeof load_error, "%s has no symbol %s", CURL_SONAME, name);          \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

/* The handle stays open for the life of the process: libcurl keeps global state. */
static void load(void)
{
	struct curl_api api;
	CURLcode (*global_init)(long flags);
	CURLcode rc;
	void *h = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(load_error, sizeof load_error, "cannot load %s (package libcurl4): %s", CURL_SONAME,
			    dlerror());
		return;
	}
	SYM(easy_init, "curl_easy_init");
	SYM(easy_cleanup, "curl_easy_cleanup");
	SYM(easy_setopt, "curl_easy_setopt");
	SYM(easy_getinfo, "curl_easy_getinfo");
	SYM(easy_perform, "curl_easy_perform");
	SYM(easy_strerror, "curl_easy_strerror");
	SYM(easy_escape, "curl_easy_escape");
	SYM(free, "curl_free");
	SYM(url, "curl_url");
	SYM(url_set, "curl_url_set");
	SYM(url_get, "curl_url_get");
	SYM(url_cleanup, "curl_url_cleanup");
	SYM(url_strerror, "curl_url_strerror");
	SYM(slist_append, "curl_slist_append");
	SYM(slist_free_all, "curl_slist_free_all");
	SYM(mime_init, "curl_mime_init");
	SYM(mime_free, "curl_mime_free");
	SYM(mime_addpart, "curl_mime_addpart");
	SYM(mime_name, "curl_mime_name");
	SYM(mime_data, "curl_mime_data");
	SYM(mime_filedata, "curl_mime_filedata");
	SYM(mime_filename, "curl_mime_filename");
	SYM(mime_type, "curl_mime_type");
	*(void **)&global_init = dlsym(h, "curl_global_init");
	if (!global_init) {
		str_fmt_cut(load_error, sizeof load_error, "%s has no symbol curl_global_init", CURL_SONAME);
		return;
	}
	/* Once per process, before any other thread can use libcurl. */
	if ((rc = global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK) {
		str_fmt_cut(load_error, sizeof load_error, "%s cannot start: %s", CURL_SONAME, api.easy_strerror(rc));
		return;
	}
	curl = api;
}

int curl_api_load(struct err *e)
{
	pthread_once(&once, load);
	if (!curl.easy_init)
		return err_set(e, ERR_INTERNAL, "%s", load_error);
	return 0;
}
