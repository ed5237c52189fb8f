#ifndef ACCORD_STORE_SQLITE_API_H
#define ACCORD_STORE_SQLITE_API_H

#include <sqlite3.h>

#include "base/dlib.h"
#include "base/err.h"

/* SQLite, loaded on demand.  The store on SQLite, `accord backup`/`restore` and the
 * inventory sandbox use it; `accord run`, `accord version` and the process runners never
 * do, and linking it cost each of them ~1,600 symbol bindings (SQLite's exported API
 * table and its calls to its own exported functions), three quarters of the dynamic
 * loader's work at start.  So the binary does not link it: sqlite_api_load() opens
 * SQLITE_SONAME (set by the Makefile from the build's libsqlite3) once, thread-safely, and
 * fills `sqlite` with the functions Accord uses; they are called as `sqlite.step(st)`
 * instead of `sqlite3_step(st)`.  The header is included for the types and constants
 * only; each field has the type of the prototype it stands for.  Every path into SQLite
 * loads it first: sqlite.c's connection open, store/backup.c, store/sqlite_mem.c and the
 * inventory sandbox. */
#define SQLITE_API_FUNCTIONS(X)                                                                                        \
	X(aggregate_context, sqlite3_aggregate_context)                                                                \
	X(backup_finish, sqlite3_backup_finish)                                                                        \
	X(backup_init, sqlite3_backup_init)                                                                            \
	X(backup_pagecount, sqlite3_backup_pagecount)                                                                  \
	X(backup_step, sqlite3_backup_step)                                                                            \
	X(bind_blob64, sqlite3_bind_blob64)                                                                            \
	X(bind_int, sqlite3_bind_int)                                                                                  \
	X(bind_int64, sqlite3_bind_int64)                                                                              \
	X(bind_null, sqlite3_bind_null)                                                                                \
	X(bind_text, sqlite3_bind_text)                                                                                \
	X(bind_text64, sqlite3_bind_text64)                                                                            \
	X(busy_handler, sqlite3_busy_handler)                                                                          \
	X(busy_timeout, sqlite3_busy_timeout)                                                                          \
	X(changes64, sqlite3_changes64)                                                                                \
	X(clear_bindings, sqlite3_clear_bindings)                                                                      \
	X(close, sqlite3_close)                                                                                        \
	X(close_v2, sqlite3_close_v2)                                                                                  \
	X(column_blob, sqlite3_column_blob)                                                                            \
	X(column_bytes, sqlite3_column_bytes)                                                                          \
	X(column_count, sqlite3_column_count)                                                                          \
	X(column_double, sqlite3_column_double)                                                                        \
	X(column_int, sqlite3_column_int)                                                                              \
	X(column_int64, sqlite3_column_int64)                                                                          \
	X(column_text, sqlite3_column_text)                                                                            \
	X(column_type, sqlite3_column_type)                                                                            \
	X(config, sqlite3_config)                                                                                      \
	X(create_function_v2, sqlite3_create_function_v2)                                                              \
	X(create_module_v2, sqlite3_create_module_v2)                                                                  \
	X(db_config, sqlite3_db_config)                                                                                \
	X(db_filename, sqlite3_db_filename)                                                                            \
	X(declare_vtab, sqlite3_declare_vtab)                                                                          \
	X(errcode, sqlite3_errcode)                                                                                    \
	X(errmsg, sqlite3_errmsg)                                                                                      \
	X(errstr, sqlite3_errstr)                                                                                      \
	X(exec, sqlite3_exec)                                                                                          \
	X(extended_errcode, sqlite3_extended_errcode)                                                                  \
	X(extended_result_codes, sqlite3_extended_result_codes)                                                        \
	X(finalize, sqlite3_finalize)                                                                                  \
	X(free, sqlite3_free)                                                                                          \
	X(get_autocommit, sqlite3_get_autocommit)                                                                      \
	X(get_auxdata, sqlite3_get_auxdata)                                                                            \
	X(libversion, sqlite3_libversion)                                                                              \
	X(limit, sqlite3_limit)                                                                                        \
	X(open_v2, sqlite3_open_v2)                                                                                    \
	X(prepare_v2, sqlite3_prepare_v2)                                                                              \
	X(prepare_v3, sqlite3_prepare_v3)                                                                              \
	X(progress_handler, sqlite3_progress_handler)                                                                  \
	X(reset, sqlite3_reset)                                                                                        \
	X(result_blob64, sqlite3_result_blob64)                                                                        \
	X(result_error, sqlite3_result_error)                                                                          \
	X(result_error_nomem, sqlite3_result_error_nomem)                                                              \
	X(result_int, sqlite3_result_int)                                                                              \
	X(result_int64, sqlite3_result_int64)                                                                          \
	X(result_subtype, sqlite3_result_subtype)                                                                      \
	X(result_text, sqlite3_result_text)                                                                            \
	X(set_authorizer, sqlite3_set_authorizer)                                                                      \
	X(set_auxdata, sqlite3_set_auxdata)                                                                            \
	X(sleep, sqlite3_sleep)                                                                                        \
	X(step, sqlite3_step)                                                                                          \
	X(stmt_readonly, sqlite3_stmt_readonly)                                                                        \
	X(user_data, sqlite3_user_data)                                                                                \
	X(value_bytes, sqlite3_value_bytes)                                                                            \
	X(value_double, sqlite3_value_double)                                                                          \
	X(value_int64, sqlite3_value_int64)                                                                            \
	X(value_text, sqlite3_value_text)                                                                              \
	X(update_hook, sqlite3_update_hook)                                                                            \
	X(value_type, sqlite3_value_type)                                                                              \
	X(vtab_config, sqlite3_vtab_config)                                                                            \
	X(wal_autocheckpoint, sqlite3_wal_autocheckpoint)                                                              \
	X(wal_checkpoint_v2, sqlite3_wal_checkpoint_v2)                                                                \
	X(wal_hook, sqlite3_wal_hook)

struct sqlite_api {
	SQLITE_API_FUNCTIONS(DLIB_FIELD)
};

/* Filled by a successful sqlite_api_load(); all NULL before (and after a failed load). */
extern struct sqlite_api sqlite;

/* Loads the library.  Thread-safe; only the first call does the work, later calls return
 * its result.  ERR_INTERNAL "cannot load libsqlite3.so.0 (package libsqlite3-0):
 * <dlerror>" when the library is missing, or naming the symbol when one is. */
int sqlite_api_load(struct err *e) WUR;

#endif
