#include "http/mhd.h"

#include <dlfcn.h>
#include <stdio.h>
#include <pthread.h>
#include <string.h>

#include "base/str.h"

#ifndef MHD_SONAME
#define MHD_SONAME "libmicrohttpd.so.12"
#endif

struct mhd_api mhd;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[ERR_MSG_MAX];

#define SYM(field, name)                                                                                               \
	do {                                                                                                           \
		*(void **)&api.field = dlsym(h, name);                                                                 \
		if (!api.field) {                                                                                      \
			str_fmt_cut(load_error, sizeof load_error, "%s has no symbol %s", MHD_SONAME, name);           \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

static void load(void)
{
	struct mhd_api api;
	void *h = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(load_error, sizeof load_error, "cannot load %s (package libmicrohttpd12): %s", MHD_SONAME,
			    dlerror());
		return;
	}
	SYM(start_daemon, "MHD_start_daemon");
	SYM(stop_daemon, "MHD_stop_daemon");
	SYM(quiesce_daemon, "MHD_quiesce_daemon");
	SYM(get_daemon_info, "MHD_get_daemon_info");
	SYM(get_version, "MHD_get_version");
	SYM(lookup_connection_value, "MHD_lookup_connection_value");
	SYM(lookup_connection_value_n, "MHD_lookup_connection_value_n");
	SYM(get_connection_values, "MHD_get_connection_values");
	SYM(create_response_from_buffer, "MHD_create_response_from_buffer");
	SYM(create_response_from_buffer_with_free_callback, "MHD_create_response_from_buffer_with_free_callback");
	SYM(create_response_from_fd_at_offset64, "MHD_create_response_from_fd_at_offset64");
	SYM(create_response_from_callback, "MHD_create_response_from_callback");
	SYM(add_response_header, "MHD_add_response_header");
	SYM(queue_response, "MHD_queue_response");
	SYM(destroy_response, "MHD_destroy_response");
	SYM(suspend_connection, "MHD_suspend_connection");
	SYM(resume_connection, "MHD_resume_connection");
	SYM(get_connection_info, "MHD_get_connection_info");
	SYM(get_connection_values_n, "MHD_get_connection_values_n");
	mhd = api;
}

int mhd_load(struct err *e)
{
	pthread_once(&once, load);
	if (!mhd.start_daemon)
		return err_set(e, ERR_INTERNAL, "%s", load_error);
	return 0;
}
