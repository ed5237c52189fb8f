#ifndef ACCORD_STORE_PG_SQL_H
#define ACCORD_STORE_PG_SQL_H

/* Text work of the PostgreSQL backend (pg.c) that needs no server: placeholders, URLs and
 * messages.  Shared between pg.c and its tests only. */

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* The store's SQL (SQLite's placeholders) in PostgreSQL's: "?" becomes "$n" with n one more
 * than the largest number given so far and "?N" becomes "$N", as SQLite numbers them.  A
 * parameter followed by IS [NOT] NULL is cast to text ("$n::text IS NULL"), so that
 * PostgreSQL, which infers each parameter's type from where it is used, has one to infer
 * when that is the parameter's only use.  SQLite's index hints (INDEXED BY name) are
 * dropped: PostgreSQL's planner has statistics.  Quoted strings, quoted names and comments
 * are copied as they are.  Returns the new text (caller frees) and its number of parameters in
 * *n_params; NULL on a bad number (?0, over 32767) or out of memory. */
char *pg_sql_rewrite(const char *sql, int *n_params, struct err *e) WUR;

/* Whether a --db value names a PostgreSQL database: a postgresql:// or postgres:// URL, or
 * libpq's key=value form with a host= or dbname= key. */
bool pg_sql_is_url(const char *url);

/* The password as written in url (cap bytes at most, cut), "" when it has none: the text
 * after "user:" in a URL, the value of password= in the key=value form.  libpq quotes
 * back raw parts of a URL it cannot parse, before it knows any password (PQpass). */
void pg_sql_url_password(const char *url, char *out, size_t cap);

/* Copies a libpq message into out (cap bytes, cut visibly) on one line (line breaks and tabs
 * become single spaces, the end trimmed) with every occurrence of secret (may be NULL or "")
 * replaced by "***": libpq quotes parts of a malformed URL back. */
void pg_sql_clean_msg(const char *msg, const char *secret, char *out, size_t cap);

#endif
