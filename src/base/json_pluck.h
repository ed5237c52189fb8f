#ifndef ACCORD_BASE_JSON_PLUCK_H
#define ACCORD_BASE_JSON_PLUCK_H

#include <stdbool.h>
#include <stddef.h>

/* Takes secret string values out of a JSON object's text before it is parsed, so that
 * they never become jansson strings (which are freed without being wiped): for each
 * wanted top-level key whose value is a string, the value is decoded into a buffer of its
 * own and its bytes in the text are overwritten — the string becomes `""` padded with
 * spaces — so the parser sees an empty string there.  Values of other types are left in
 * place (the handler's type check reports them).  Text that is not a well-formed JSON
 * object is left untouched and nothing is plucked: the parser then reports the error.
 * A key given twice keeps the last value (as the parser would). */

struct json_plucked {
	const char *key; /* set by the caller */
	char *value;	 /* NUL-terminated UTF-8, or NULL when absent / not a string */
	size_t len;
};

/* 0, or -1 when the text is not a well-formed object (nothing changed) or out of memory. */
int json_pluck(char *text, size_t len, struct json_plucked *want, size_t n_want);

/* Wipes and frees the values. */
void json_pluck_free(struct json_plucked *want, size_t n_want);

#endif
