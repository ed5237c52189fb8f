#ifndef ACCORD_BASE_LOG_H
#define ACCORD_BASE_LOG_H

#include <stddef.h>

/* Structured log lines on stderr, one line per call, in logfmt:
 *   ts=2026-11-22T10:00:00.123Z level=info msg="listening" addr=127.0.0.1:8001
 * Callers pass the fields after the message as a preformatted "k=v k=v" string built with
 * log_kv helpers, or use log_msg for a plain message.  Thread-safe (one write(2) a line).
 * Never pass a secret, a password, an API key or an Authorization header. */

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR };

void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* Parses "debug|info|warn|error"; returns -1 when unknown. */
int log_level_parse(const char *s, enum log_level *out);

/* fields may be NULL; it is appended after msg verbatim. */
void log_line(enum log_level level, const char *msg, const char *fields);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Log files that are rotated (logrotate's move, then SIGHUP): log_remember_file notes the
 * path of stderr when it is a regular file (call once at start); log_reopen opens that
 * path again (created 0600 when moved away, appended to) in place of stderr.  Returns 1
 * when reopened, 0 when stderr is no file to reopen (a terminal, a pipe, the journal), -1
 * with errno when the path cannot be opened (stderr is then left as it was). */
void log_remember_file(void);
int log_reopen(void);

/* Appends ` key="value"` (quoted and escaped when needed) to a fixed-size field buffer. */
void log_kv(char *fields, size_t cap, const char *key, const char *value);
void log_kv_int(char *fields, size_t cap, const char *key, long long value);

#define LOG_D(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define LOG_I(...) log_msg(LOG_INFO, __VA_ARGS__)
#define LOG_W(...) log_msg(LOG_WARN, __VA_ARGS__)
#define LOG_E(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
