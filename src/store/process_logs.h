#ifndef ACCORD_STORE_PROCESS_LOGS_H
#define ACCORD_STORE_PROCESS_LOGS_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "store/store.h"

/* A process log is a sequence of chunks [start_off, start_off + len) in
 * process_log_chunks.  Appends are atomic single statements (the new chunk starts where
 * the last one ends), so the supervisor and the API (a stop's "Process cancelled" line)
 * may both append. */

/* Appends len > 0 bytes; *size (may be NULL) receives the log's new total size. */
int store_process_log_append(struct store_conn *c, const char *id, const void *data, size_t len, uint64_t *size,
			     struct err *e) WUR;

/* Appends one line as the server writes its own (queue_log_line, the policy's warnings):
 * "<ISO time>+0000 [LEVEL] text\n", text cut to fit a line of 1 KiB. */
int store_process_log_line(struct store_conn *c, const char *id, const char *level, const char *text,
			   struct err *e) WUR;

/* Total size of the log (0 when there is none). */
int store_process_log_size(struct store_conn *c, const char *id, uint64_t *size, struct err *e) WUR;

/* Appends exactly the bytes [off, off + len) of the log (clamped to its size) to out. */
int store_process_log_read(struct store_conn *c, const char *id, uint64_t off, uint64_t len, struct buf *out,
			   struct err *e) WUR;

#endif
