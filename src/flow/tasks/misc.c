#include <string.h>

#include "flow/el/el.h"
#include "flow/tasks/task.h"

static int m_trim(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *s;
	size_t len;
	long long n;
	(void)c;
	if (task_arg_str(args, 0, "value", &s, e) < 0)
		return -1;
	len = strlen(s);
	if (json_array_size(args) > 1) {
		if (task_arg_int(args, 1, "length", &n, e) < 0)
			return -1;
		*out = json_stringn(s, n >= 0 && (size_t)n < len ? (size_t)n : len);
		return 0;
	}
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++, len--;
	while (len > 0 && strchr(" \t\n\r", s[len - 1]))
		len--;
	*out = json_stringn(s, len);
	return 0;
}

static int m_throw(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *msg;
	(void)c, (void)out;
	if (task_arg_str(args, 0, "message", &msg, e) < 0)
		return -1;
	err_set(e, ERR_INVALID, "%s", msg);
	return EL_THROWN;
}

static int m_concat(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	json_t *a = json_array_get(args, 0), *b = json_array_get(args, 1);
	(void)c;
	if (!json_is_array(a) || !json_is_array(b))
		return err_set(e, ERR_INVALID, "concat expects two lists");
	*out = json_copy(a);
	json_array_extend(*out, b);
	return 0;
}

static const struct task_method methods[] = {
    {"trim", m_trim, 1, 2}, {"throwRuntimeException", m_throw, 1, 1}, {"concat", m_concat, 2, 2}, {NULL, NULL, 0, 0}};

const struct task_def task_misc = {"misc", NULL, methods, false, false};
