#ifndef ACCORD_HTTP_MHD_H
#define ACCORD_HTTP_MHD_H

#include <microhttpd.h>

#include "base/err.h"

/* libmicrohttpd, loaded on demand.  Only `accord serve` speaks HTTP, but libmicrohttpd
 * brings GnuTLS and p11-kit, whose start-up work costs ~6 M instructions in every process
 * that links them — fifty times the rest of `accord run`'s start.  So the binary does
 * not link it: mhd_load() opens it (once, thread-safe) and fills `mhd` with the functions
 * the HTTP layer uses, which call through `mhd.x(...)` instead of `MHD_x(...)`. */
struct mhd_api {
	__typeof__(&MHD_start_daemon) start_daemon;
	__typeof__(&MHD_stop_daemon) stop_daemon;
	__typeof__(&MHD_quiesce_daemon) quiesce_daemon;
	__typeof__(&MHD_get_daemon_info) get_daemon_info;
	__typeof__(&MHD_get_version) get_version;
	__typeof__(&MHD_lookup_connection_value) lookup_connection_value;
	__typeof__(&MHD_lookup_connection_value_n) lookup_connection_value_n;
	__typeof__(&MHD_get_connection_values) get_connection_values;
	__typeof__(&MHD_create_response_from_buffer) create_response_from_buffer;
	__typeof__(&MHD_create_response_from_buffer_with_free_callback) create_response_from_buffer_with_free_callback;
	__typeof__(&MHD_create_response_from_fd_at_offset64) create_response_from_fd_at_offset64;
	__typeof__(&MHD_create_response_from_callback) create_response_from_callback;
	__typeof__(&MHD_add_response_header) add_response_header;
	__typeof__(&MHD_queue_response) queue_response;
	__typeof__(&MHD_destroy_response) destroy_response;
	__typeof__(&MHD_suspend_connection) suspend_connection;
	__typeof__(&MHD_resume_connection) resume_connection;
	__typeof__(&MHD_get_connection_info) get_connection_info;
	__typeof__(&MHD_get_connection_values_n) get_connection_values_n;
};

extern struct mhd_api mhd;

/* Loads the library (MHD_SONAME, set by the Makefile from the build's libmicrohttpd).
 * ERR_INTERNAL naming the library and dlerror() when it or a symbol is missing. */
int mhd_load(struct err *e) WUR;

#endif
