#include "store/sqlite_api.h"

#ifndef SQLITE_SONAME
#define SQLITE_SONAME "libsqlite3.so.0"
#endif

struct sqlite_api sqlite;

#define SQLITE_SYM(field, name) DLIB_SYM(struct sqlite_api, field, name)
static const struct dlib_sym symbols[] = {SQLITE_API_FUNCTIONS(SQLITE_SYM)};
static struct dlib_once once = DLIB_ONCE_INIT;

int sqlite_api_load(struct err *e)
{
	return dlib_load_once(&once, SQLITE_SONAME, "libsqlite3-0", symbols, sizeof symbols / sizeof symbols[0],
			      &sqlite, sizeof sqlite, e);
}
