#include "base/frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/json_dump.h"
#include "base/jsonx.h"
#include "base/path.h"

#define FRAME_DEPTH 256

int frame_encode(const json_t *v, struct buf *out, struct err *e)
{
	char *text = json_dump_compact(v, false);
	size_t n;
	unsigned char hdr[4];
	int rc;

	if (!text)
		return err_set(e, ERR_INTERNAL, "frame: cannot serialize (out of memory)");
	n = strlen(text);
	if (n == 0 || n > FRAME_MAX) {
		free(text);
		return err_set(e, ERR_TOO_LARGE, "frame of %zu bytes exceeds the maximum of %u", n, FRAME_MAX);
	}
	hdr[0] = (unsigned char)(n >> 24);
	hdr[1] = (unsigned char)(n >> 16);
	hdr[2] = (unsigned char)(n >> 8);
	hdr[3] = (unsigned char)n;
	rc = buf_append(out, hdr, 4, e);
	if (rc == 0)
		rc = buf_append(out, text, n, e);
	free(text);
	return rc;
}

int frame_write(int fd, const json_t *v, struct err *e)
{
	struct buf b;
	int rc;

	buf_init(&b, (size_t)FRAME_MAX + 4);
	rc = frame_encode(v, &b, e);
	if (rc == 0 && path_write_all(fd, b.data, b.len) < 0)
		rc = err_set(e, ERR_INTERNAL, "frame: write failed: %s", strerror(errno));
	buf_cleanup(&b);
	return rc;
}

void frame_reader_init(struct frame_reader *r)
{
	buf_init(&r->in, (size_t)FRAME_MAX + 4);
	r->max = FRAME_MAX;
}

void frame_reader_cleanup(struct frame_reader *r)
{
	buf_cleanup(&r->in);
}

/* The length a frame's 4-byte header gives (big-endian). */
static size_t frame_length(const unsigned char *p)
{
	return (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | (size_t)p[3];
}

int frame_reader_feed(struct frame_reader *r, const void *p, size_t n, struct err *e)
{
	return buf_append(&r->in, p, n, e);
}

int frame_reader_next(struct frame_reader *r, json_t **out, struct err *e)
{
	const unsigned char *p = (const unsigned char *)r->in.data;
	size_t n;
	json_t *v;

	*out = NULL;
	if (r->in.len < 4)
		return 0;
	n = frame_length(p);
	if (n == 0 || n > r->max)
		return err_set(e, ERR_INVALID, "frame length %zu is outside 1..%zu", n, r->max);
	if (r->in.len - 4 < n)
		return 0;
	v = jsonx_parse(r->in.data + 4, n, FRAME_DEPTH, e);
	memmove(r->in.data, r->in.data + 4 + n, r->in.len - 4 - n);
	r->in.len -= 4 + n;
	r->in.data[r->in.len] = '\0';
	if (!v)
		return -1;
	if (!json_is_object(v) || !json_is_string(json_object_get(v, "type"))) {
		json_decref(v);
		return err_set(e, ERR_INVALID, "frame is not an object with a \"type\" string");
	}
	*out = v;
	return 1;
}

/* What the next read asks for: the rest of the frame begun (its header checked by
 * frame_reader_next), at least a page. */
static size_t read_want(const struct frame_reader *r)
{
	const unsigned char *p = (const unsigned char *)r->in.data;
	size_t want = 4096;

	if (r->in.len >= 4) {
		size_t n = frame_length(p);
		if (4 + n - r->in.len > want)
			want = 4 + n - r->in.len;
	}
	return want < r->in.max - r->in.len ? want : r->in.max - r->in.len;
}

/* Reads straight into the reader's buffer: a 64 kB buffer on the stack was two pages a
 * runner, forked with the zygote's stack, had to fault in (bench/RESULTS.md). */
int frame_read(int fd, struct frame_reader *r, json_t **out, struct err *e)
{
	for (;;) {
		int rc = frame_reader_next(r, out, e);
		size_t want;
		ssize_t n;
		if (rc != 0)
			return rc;
		want = read_want(r);
		if (want == 0)
			return err_set(e, ERR_INVALID, "frame: larger than its reader's limit");
		if (buf_reserve(&r->in, want, e) < 0)
			return -1;
		n = read(fd, r->in.data + r->in.len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_set(e, ERR_INTERNAL, "frame: read failed: %s", strerror(errno));
		if (n == 0)
			return r->in.len == 0 ? 0 : err_set(e, ERR_INVALID, "frame: stream ended inside a frame");
		r->in.len += (size_t)n;
		r->in.data[r->in.len] = '\0';
	}
}
