#ifndef ACCORD_BASE_DLIB_H
#define ACCORD_BASE_DLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* A table of a shared library's functions, filled by dlopen + dlsym: how the libraries
 * Accord loads on demand instead of linking are opened (store/pq_api.c,
 * store/sqlite_api.c).  A module lists its functions once, as X(field, symbol) pairs, and
 * declares its table and the symbol list from that list:
 *
 *   #define FOO_FUNCTIONS(X) X(open, foo_open) X(close, foo_close)
 *   struct foo_api { FOO_FUNCTIONS(DLIB_FIELD) };
 *   static const struct dlib_sym syms[] = {FOO_FUNCTIONS(FOO_SYM)};
 *     with  #define FOO_SYM(field, name) DLIB_SYM(struct foo_api, field, name)
 *
 * and its load function is dlib_load_once with a static struct dlib_once. */
struct dlib_sym {
	const char *name;
	size_t offset; /* of the field in the table */
};

#define DLIB_FIELD(field, name) __typeof__(&name) field;
#define DLIB_SYM(type, field, name) {#name, offsetof(type, field)},

/* The result of a module's one load (static storage, initialised with DLIB_ONCE_INIT). */
struct dlib_once {
	pthread_mutex_t lock;
	bool done;
	int rc;
	char msg[ERR_MSG_MAX];
};
#define DLIB_ONCE_INIT                                                                                                 \
	{                                                                                                              \
		PTHREAD_MUTEX_INITIALIZER, false, 0, ""                                                                \
	}

/* dlib_load under once: only the first call loads; every call returns its result, 0 or
 * the first failure's message in e (ERR_INTERNAL, returned as err_set returns it).
 * Thread-safe; the table is complete before any call returns 0. */
int dlib_load_once(struct dlib_once *once, const char *soname, const char *package, const struct dlib_sym *syms,
		   size_t n_syms, void *table, size_t table_size, struct err *e) WUR;

/* Opens soname (RTLD_NOW | RTLD_LOCAL; the handle stays open for the life of the process,
 * as the table points into it) and writes each symbol's address into table at its offset.
 * 0 on success; -1 with "cannot load <soname> (package <package>): <dlerror>" or
 * "<soname> has no symbol <name>" in msg (cap bytes), the table then all zero.  Not
 * thread-safe by itself: modules call dlib_load_once. */
int dlib_load(const char *soname, const char *package, const struct dlib_sym *syms, size_t n_syms, void *table,
	      size_t table_size, char *msg, size_t cap) WUR;

#endif
