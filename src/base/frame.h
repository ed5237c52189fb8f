#ifndef ACCORD_BASE_FRAME_H
#define ACCORD_BASE_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

/* Length-prefixed JSON frames: the IPC protocol between a supervisor and its runner on
 * fd 3 (docs/operations.md "Runner protocol").  A frame is a 4-byte big-endian length n
 * (1 <= n <= FRAME_MAX) followed by n bytes of one JSON object (UTF-8).  Anything else —
 * a length of 0 or over the maximum, invalid JSON, a value that is not an object, a
 * missing "type" string — is a protocol error: the reader stops and the peer is treated
 * as broken. */

#define FRAME_MAX (16u * 1024 * 1024)

/* Encodes v (BORROWED) as one frame appended to out. */
int frame_encode(const json_t *v, struct buf *out, struct err *e) WUR;

/* Writes one frame to fd, retrying on EINTR and partial writes (blocking fd). */
int frame_write(int fd, const json_t *v, struct err *e) WUR;

/* Incremental decoder for a non-blocking or blocking stream. */
struct frame_reader {
	struct buf in;
	size_t max; /* FRAME_MAX unless set lower */
};

void frame_reader_init(struct frame_reader *r);
void frame_reader_cleanup(struct frame_reader *r);
/* Adds bytes read from the stream. */
int frame_reader_feed(struct frame_reader *r, const void *p, size_t n, struct err *e) WUR;
/* The next complete frame: 1 with *out (NEW object), 0 when more bytes are needed, < 0 on
 * a protocol error (e names it). */
int frame_reader_next(struct frame_reader *r, json_t **out, struct err *e) WUR;

/* Blocking read of one whole frame from fd: 1 with *out, 0 at end of stream before any
 * byte of a frame, < 0 on error or a truncated frame. */
int frame_read(int fd, struct frame_reader *r, json_t **out, struct err *e) WUR;

#endif
