#include "base/buf.h"
#include "base/oom.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max ? max : SIZE_MAX / 2;
	b->wipe = false;
}

void buf_set_wipe(struct buf *b)
{
	b->wipe = true;
}

void buf_cleanup(struct buf *b)
{
	if (b->wipe && b->data)
		explicit_bzero(b->data, b->cap);
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

int buf_reserve(struct buf *b, size_t extra, struct err *e)
{
	size_t need, cap;
	char *p;

	if (__builtin_add_overflow(b->len, extra, &need) || need > b->max)
		return err_set(e, ERR_TOO_LARGE, "data exceeds the limit of %zu bytes", b->max);
	if (need + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need + 1) {
		if (__builtin_mul_overflow(cap, 2, &cap))
			return err_set(e, ERR_TOO_LARGE, "buffer size overflow");
	}
	if (cap > b->max + 1) /* like curl's dynbuf: never past the cap */
		cap = b->max + 1;
	if (b->wipe) {
		/* realloc would free the old copy as it is */
		p = malloc(cap);
		if (!p)
			return oom_fail(e);
		if (b->data) {
			memcpy(p, b->data, b->len + 1);
			explicit_bzero(b->data, b->cap);
			free(b->data);
		}
	} else {
		p = realloc(b->data, cap);
	}
	if (!p)
		return oom_fail(e);
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n, struct err *e)
{
	int rc = buf_reserve(b, n, e);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_append_str(struct buf *b, const char *s, struct err *e)
{
	return buf_append(b, s, strlen(s), e);
}

int buf_append_char(struct buf *b, char c, struct err *e)
{
	return buf_append(b, &c, 1, e);
}

int buf_vprintf(struct buf *b, struct err *e, const char *fmt, va_list ap)
{
	va_list ap2;
	int n, rc;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return err_set(e, ERR_INTERNAL, "format error");
	rc = buf_reserve(b, (size_t)n, e);
	if (rc)
		return rc;
	if (vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap) != n)
		return err_set(e, ERR_INTERNAL, "format error");
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, struct err *e, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, e, fmt, ap);
	va_end(ap);
	return rc;
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *p = b->data;

	if (!p) {
		p = calloc(1, 1);
		if (!p)
			abort();
	}
	if (len)
		*len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return p;
}
