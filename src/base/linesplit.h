#ifndef ACCORD_BASE_LINESPLIT_H
#define ACCORD_BASE_LINESPLIT_H

#include <stddef.h>

/* Cuts a program's output stream into lines: each whole line is handed over without its
 * '\n' (and a '\r' before it), NUL-terminated; a line longer than LINESPLIT_MAX arrives in
 * pieces of that size.  Embedded (no allocation); zeroed is empty. */

#define LINESPLIT_MAX (16u << 10)

struct line_split {
	char buf[LINESPLIT_MAX + 1]; /* bytes not yet a whole line */
	size_t len;
};

/* line is writable and valid during the call only. */
typedef void (*line_split_fn)(void *ctx, char *line, size_t len);

/* Appends n bytes and hands every whole line to fn. */
void line_split_take(struct line_split *l, const char *p, size_t n, line_split_fn fn, void *ctx);
/* The end of the stream: what remains (a last line without '\n') goes to fn. */
void line_split_flush(struct line_split *l, line_split_fn fn, void *ctx);

#endif
