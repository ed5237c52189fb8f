#include "base/archive_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

#ifndef ARCHIVE_SONAME
#define ARCHIVE_SONAME "libarchive.so.13"
#endif

struct archive_api archive;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[ERR_MSG_MAX];

#define SYM(field, name)                                                                                               \
	do {                                                                                                           \
		*(void **)&api.field = dlsym(h, name);                                                                 \
		if (!api.field) {                                                                                      \
			str_fmt_cut(load_error, sizeof load_error, "%s has no symbol %s", ARCHIVE_SONAME, name);       \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

/* The handle stays open for the life of the process: the table points into it. */
static void load(void)
{
	struct archive_api api;
	void *h = dlopen(ARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(load_error, sizeof load_error, "cannot load %s (package libarchive13): %s", ARCHIVE_SONAME,
			    dlerror());
		return;
	}
	SYM(error_string, "archive_error_string");
	SYM(read_new, "archive_read_new");
	SYM(read_free, "archive_read_free");
	SYM(read_support_format_tar, "archive_read_support_format_tar");
	SYM(read_support_format_zip, "archive_read_support_format_zip");
	SYM(read_open_memory, "archive_read_open_memory");
	SYM(read_next_header, "archive_read_next_header");
	SYM(read_data, "archive_read_data");
	SYM(write_new, "archive_write_new");
	SYM(write_free, "archive_write_free");
	SYM(write_set_format_pax_restricted, "archive_write_set_format_pax_restricted");
	SYM(write_add_filter_none, "archive_write_add_filter_none");
	SYM(write_set_bytes_in_last_block, "archive_write_set_bytes_in_last_block");
	SYM(write_open, "archive_write_open");
	SYM(write_header, "archive_write_header");
	SYM(write_data, "archive_write_data");
	SYM(write_close, "archive_write_close");
	SYM(entry_new, "archive_entry_new");
	SYM(entry_free, "archive_entry_free");
	SYM(entry_clear, "archive_entry_clear");
	SYM(entry_pathname, "archive_entry_pathname");
	SYM(entry_filetype, "archive_entry_filetype");
	SYM(entry_perm, "archive_entry_perm");
	SYM(entry_hardlink, "archive_entry_hardlink");
	SYM(entry_symlink, "archive_entry_symlink");
	SYM(entry_size, "archive_entry_size");
	SYM(entry_size_is_set, "archive_entry_size_is_set");
	SYM(entry_set_pathname, "archive_entry_set_pathname");
	SYM(entry_set_filetype, "archive_entry_set_filetype");
	SYM(entry_set_perm, "archive_entry_set_perm");
	SYM(entry_set_size, "archive_entry_set_size");
	SYM(entry_set_mtime, "archive_entry_set_mtime");
	SYM(write_set_format_zip, "archive_write_set_format_zip");
	SYM(write_open_memory, "archive_write_open_memory");
	SYM(entry_set_symlink, "archive_entry_set_symlink");
	SYM(entry_set_hardlink, "archive_entry_set_hardlink");
	archive = api;
}

int archive_api_load(struct err *e)
{
	pthread_once(&once, load);
	if (!archive.read_new)
		return err_set(e, ERR_INTERNAL, "%s", load_error);
	return 0;
}
