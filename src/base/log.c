#include "base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/str.h"

static _Atomic enum log_level min_level = LOG_INFO;

void log_set_level(enum log_level level)
{
	min_level = level;
}

enum log_level log_get_level(void)
{
	return min_level;
}

int log_level_parse(const char *s, enum log_level *out)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};

	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	return -1;
}

static char log_path[PATH_MAX]; /* stderr's file at start, "" when it is none */

void log_remember_file(void)
{
	struct stat st;
	ssize_t n;

	log_path[0] = '\0';
	if (fstat(STDERR_FILENO, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	n = readlink("/proc/self/fd/2", log_path, sizeof log_path - 1);
	log_path[n > 0 && log_path[0] == '/' ? n : 0] = '\0';
}

int log_reopen(void)
{
	int fd;

	if (!log_path[0])
		return 0;
	fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (dup2(fd, STDERR_FILENO) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	close(fd);
	return 1;
}

static size_t append_quoted(char *dst, size_t pos, size_t cap, const char *v)
{
	bool quote = (*v == '\0');

	for (const char *p = v; *p && !quote; p++)
		if (*p == ' ' || *p == '"' || *p == '=' || (unsigned char)*p < 0x20)
			quote = true;
	if (!quote) {
		int n = snprintf(dst + pos, cap - pos, "%s", v);
		return n < 0 ? pos : (size_t)n + pos >= cap ? cap - 1 : pos + (size_t)n;
	}
	if (pos + 1 < cap)
		dst[pos++] = '"';
	for (const char *p = v; *p && pos + 3 < cap; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '"' || c == '\\') {
			dst[pos++] = '\\';
			dst[pos++] = (char)c;
		} else if (c == '\n') {
			dst[pos++] = '\\';
			dst[pos++] = 'n';
		} else if (c < 0x20) {
			dst[pos++] = '?';
		} else {
			dst[pos++] = (char)c;
		}
	}
	if (pos + 1 < cap)
		dst[pos++] = '"';
	dst[pos] = '\0';
	return pos;
}

void log_kv(char *fields, size_t cap, const char *key, const char *value)
{
	size_t pos = strlen(fields);
	int n = snprintf(fields + pos, cap - pos, " %s=", key);

	if (n < 0 || (size_t)n >= cap - pos)
		return;
	append_quoted(fields, pos + (size_t)n, cap, value ? value : "");
}

void log_kv_int(char *fields, size_t cap, const char *key, long long value)
{
	size_t pos = strlen(fields);
	str_fmt_cut(fields + pos, cap - pos, " %s=%lld", key, value);
}

void log_line(enum log_level level, const char *msg, const char *fields)
{
	static const char *const names[] = {"debug", "info", "warn", "error"};
	char line[4096], ts[DT_ISO_LEN];
	size_t pos;
	int n;

	if (level < min_level)
		return;
	dt_format_iso(dt_now_ms(), ts);
	n = snprintf(line, sizeof line, "ts=%s level=%s msg=", ts, names[level]);
	pos = (size_t)n;
	pos = append_quoted(line, pos, sizeof line - 1, msg);
	if (fields && *fields) {
		n = snprintf(line + pos, sizeof line - 1 - pos, "%s", fields);
		if (n > 0)
			pos = (size_t)n + pos >= sizeof line - 1 ? sizeof line - 2 : pos + (size_t)n;
	}
	line[pos++] = '\n';
	(void)!write(STDERR_FILENO, line, pos);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	if (level < min_level)
		return;
	va_start(ap, fmt);
	str_vfmt_cut(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_line(level, msg, NULL);
}
