#ifndef ACCORD_BASE_STR_H
#define ACCORD_BASE_STR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/err.h"

/* A borrowed slice of bytes; never assumed NUL-terminated. */
struct str {
	const char *p;
	size_t len;
};

#define STR_LIT(s) ((struct str){(s), sizeof(s) - 1})

struct str str_from(const char *s); /* NULL gives an empty slice */
bool str_eq(struct str a, struct str b);
bool str_eq_cstr(struct str a, const char *b);
bool str_ieq_cstr(struct str a, const char *b); /* ASCII case-insensitive */
bool str_has_prefix(struct str s, const char *prefix);
struct str str_trim(struct str s); /* ASCII white space both ends */

/* New NUL-terminated copy (caller frees); NULL only when out of memory. */
char *str_dup(struct str s);

/* Checked decimal parse of the whole slice (optional leading '-'); fails with ERR_INVALID
 * naming `what` unless the value lies in [min, max]. */
int str_to_i64(struct str s, int64_t min, int64_t max, int64_t *out, const char *what, struct err *e) WUR;

/* ASCII case-insensitive compare of C strings. */
bool cstr_ieq(const char *a, const char *b);

/* Case-insensitive ASCII substring test (needle "" matches). */
bool cstr_icontains(const char *hay, const char *needle);

/* snprintf that says whether everything fit: 0, or -1 when the text would be cut or the
 * format failed (buf is then empty, so that a cut path is never used by mistake; cap > 0).
 * For text whose every byte matters: paths, keys, ids, names, SQL, values copied into fixed
 * fields.  scripts/check-style refuses a bare snprintf whose result nobody looks at. */
int str_fmt(char *buf, size_t cap, const char *fmt, ...) WUR __attribute__((format(printf, 3, 4)));

/* Display text (messages, log lines, event descriptions) where a cut is acceptable: a cut
 * text ends in "..." so that the reader sees it was cut.  cap >= 4. */
void str_fmt_cut(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void str_vfmt_cut(char *buf, size_t cap, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Copies a string literal into a char array (a struct's fixed field), its size checked by
 * the compiler: no format, nothing to check at run time. */
#define str_set_lit(dst, lit)                                                                                          \
	do {                                                                                                           \
		_Static_assert(sizeof(lit) <= sizeof(dst), "literal longer than its field");                           \
		memcpy((dst), (lit), sizeof(lit));                                                                     \
	} while (0)

/* Constant-time equality of two byte strings of the same length. */
bool mem_ct_eq(const void *a, const void *b, size_t n);

#endif
