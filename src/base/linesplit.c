/* Output streams into lines (linesplit.h). */
#include "base/linesplit.h"

#include <string.h>

static void emit(struct line_split *l, size_t n, line_split_fn fn, void *ctx)
{
	char saved = l->buf[n];
	size_t end = n;

	if (end && l->buf[end - 1] == '\r')
		end--;
	l->buf[end] = '\0';
	fn(ctx, l->buf, end);
	l->buf[n] = saved;
}

void line_split_take(struct line_split *l, const char *p, size_t n, line_split_fn fn, void *ctx)
{
	while (n) {
		size_t room = LINESPLIT_MAX - l->len, k = n < room ? n : room;
		char *nl;
		memcpy(l->buf + l->len, p, k);
		l->len += k;
		p += k;
		n -= k;
		while ((nl = memchr(l->buf, '\n', l->len))) {
			size_t line = (size_t)(nl - l->buf);
			emit(l, line, fn, ctx);
			memmove(l->buf, nl + 1, l->len - line - 1);
			l->len -= line + 1;
		}
		if (l->len == LINESPLIT_MAX) {
			emit(l, l->len, fn, ctx);
			l->len = 0;
		}
	}
}

void line_split_flush(struct line_split *l, line_split_fn fn, void *ctx)
{
	if (l->len) {
		emit(l, l->len, fn, ctx);
		l->len = 0;
	}
}
