#ifndef ACCORD_BASE_ARCHIVE_API_H
#define ACCORD_BASE_ARCHIVE_API_H

#include <archive.h>
#include <archive_entry.h>

#include "base/err.h"

/* libarchive, loaded on demand.  Only base/pack.c speaks to it (process payloads, uploaded
 * ZIPs, suspended state), but Debian's libarchive brings libxml2, ICU and libstdc++, whose
 * relocations doubled the start-up of every `accord run` and every process runner.  So the
 * binary does not link it: archive_api_load() opens it on first use (once, thread-safe)
 * and fills `archive` with the functions pack.c uses, which call through `archive.x(...)`
 * instead of `archive_x(...)`.  The headers are included for the types only; each field
 * has the type of the prototype it stands for.
 *
 * The last four fields (writing ZIPs, links) are not used by pack.c: the unit tests build
 * their archives with them, so that they link exactly like the binary. */
struct archive_api {
	__typeof__(&archive_error_string) error_string;
	__typeof__(&archive_read_new) read_new;
	__typeof__(&archive_read_free) read_free;
	__typeof__(&archive_read_support_format_tar) read_support_format_tar;
	__typeof__(&archive_read_support_format_zip) read_support_format_zip;
	__typeof__(&archive_read_open_memory) read_open_memory;
	__typeof__(&archive_read_next_header) read_next_header;
	__typeof__(&archive_read_data) read_data;
	__typeof__(&archive_write_new) write_new;
	__typeof__(&archive_write_free) write_free;
	__typeof__(&archive_write_set_format_pax_restricted) write_set_format_pax_restricted;
	__typeof__(&archive_write_add_filter_none) write_add_filter_none;
	__typeof__(&archive_write_set_bytes_in_last_block) write_set_bytes_in_last_block;
	__typeof__(&archive_write_open) write_open;
	__typeof__(&archive_write_header) write_header;
	__typeof__(&archive_write_data) write_data;
	__typeof__(&archive_write_close) write_close;
	__typeof__(&archive_entry_new) entry_new;
	__typeof__(&archive_entry_free) entry_free;
	__typeof__(&archive_entry_clear) entry_clear;
	__typeof__(&archive_entry_pathname) entry_pathname;
	__typeof__(&archive_entry_filetype) entry_filetype;
	__typeof__(&archive_entry_perm) entry_perm;
	__typeof__(&archive_entry_hardlink) entry_hardlink;
	__typeof__(&archive_entry_symlink) entry_symlink;
	__typeof__(&archive_entry_size) entry_size;
	__typeof__(&archive_entry_size_is_set) entry_size_is_set;
	__typeof__(&archive_entry_set_pathname) entry_set_pathname;
	__typeof__(&archive_entry_set_filetype) entry_set_filetype;
	__typeof__(&archive_entry_set_perm) entry_set_perm;
	__typeof__(&archive_entry_set_size) entry_set_size;
	__typeof__(&archive_entry_set_mtime) entry_set_mtime;
	__typeof__(&archive_write_set_format_zip) write_set_format_zip;
	/* for the tests */
	__typeof__(&archive_write_open_memory) write_open_memory;
	__typeof__(&archive_entry_set_symlink) entry_set_symlink;
	__typeof__(&archive_entry_set_hardlink) entry_set_hardlink;
};

/* Filled by a successful archive_api_load(); all NULL before (and after a failed load). */
extern struct archive_api archive;

/* Loads the library (ARCHIVE_SONAME, set by the Makefile from the build's libarchive).
 * Thread-safe; only the first call does the work, later calls return its result.
 * ERR_INTERNAL "cannot load libarchive.so.13 (package libarchive13): <dlerror>" when the
 * library is missing, or naming the symbol when one is. */
int archive_api_load(struct err *e) WUR;

#endif
