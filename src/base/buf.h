#ifndef ACCORD_BASE_BUF_H
#define ACCORD_BASE_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* A growable byte buffer with a hard cap.  data is always NUL-terminated (the NUL is not
 * counted in len), so a buffer of text can be handed to C string functions.
 * Appends that would grow len past max fail with ERR_TOO_LARGE and leave the buffer as it
 * was.  Not thread-safe; one owner at a time. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
	size_t max;
	bool wipe; /* holds secrets: growing and cleanup zero the old memory */
};

/* Embedded use: buf_init / buf_cleanup.  max 0 means SIZE_MAX / 2.  The capacity never
 * grows past max + 1 (the NUL). */
void buf_init(struct buf *b, size_t max);
/* Marks b as holding secrets (request bodies, exported plaintext): from then on every
 * copy it leaves behind when growing, and its memory at cleanup, is zeroed first. */
void buf_set_wipe(struct buf *b);
void buf_cleanup(struct buf *b);
void buf_reset(struct buf *b);

int buf_reserve(struct buf *b, size_t extra, struct err *e) WUR;
int buf_append(struct buf *b, const void *p, size_t n, struct err *e) WUR;
int buf_append_str(struct buf *b, const char *s, struct err *e) WUR;
int buf_append_char(struct buf *b, char c, struct err *e) WUR;
int buf_printf(struct buf *b, struct err *e, const char *fmt, ...) WUR __attribute__((format(printf, 3, 4)));
int buf_vprintf(struct buf *b, struct err *e, const char *fmt, va_list ap) WUR;

/* Hands the data over (caller frees with free(), after zeroing it for a wiping buffer);
 * the buffer is left empty. Never NULL. */
char *buf_detach(struct buf *b, size_t *len);

#endif
