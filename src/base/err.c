#include "base/err.h"

#include <errno.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

int err_set(struct err *e, enum err_code code, const char *fmt, ...)
{
	if (e) {
		va_list ap;
		e->code = code;
		va_start(ap, fmt);
		str_vfmt_cut(e->msg, sizeof e->msg, fmt, ap);
		va_end(ap);
	}
	return -(int)code;
}

void err_prefix(struct err *e, const char *fmt, ...)
{
	char prefix[ERR_MSG_MAX], old[ERR_MSG_MAX];
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	str_vfmt_cut(prefix, sizeof prefix, fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof old);
	/* a message that no longer fits ends in "..." rather than silently */
	if (snprintf(e->msg, sizeof e->msg, "%s: %s", prefix, old) >= (int)sizeof e->msg)
		memcpy(e->msg + sizeof e->msg - 4, "...", 4);
}

void err_clear(struct err *e)
{
	if (e) {
		e->code = ERR_OK;
		e->msg[0] = '\0';
	}
}

const char *err_code_name(enum err_code code)
{
	static const char *const names[ERR__COUNT] = {
	    [ERR_OK] = "ok",
	    [ERR_INVALID] = "invalid",
	    [ERR_UNAUTH] = "unauthorized",
	    [ERR_FORBIDDEN] = "forbidden",
	    [ERR_NOT_FOUND] = "not_found",
	    [ERR_METHOD] = "method_not_allowed",
	    [ERR_CONFLICT] = "conflict",
	    [ERR_TOO_LARGE] = "too_large",
	    [ERR_MEDIA_TYPE] = "unsupported_media_type",
	    [ERR_UNAVAILABLE] = "unavailable",
	    [ERR_INTERNAL] = "internal",
	    [ERR_LIMIT] = "limit",
	    [ERR_RANGE] = "range_not_satisfiable",
	    [ERR_NO_SPACE] = "insufficient_storage",
	    [ERR_TOO_MANY] = "too_many_requests",
	};
	if (code < 0 || code >= ERR__COUNT || !names[code])
		return "unknown";
	return names[code];
}

enum err_code err_code_of_write(int errnum)
{
	return errnum == ENOSPC || errnum == EDQUOT ? ERR_NO_SPACE : ERR_INTERNAL;
}
