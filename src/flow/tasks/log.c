#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/tasks/task.h"
#include "flow/vm_internal.h"
#include "flow/yaml_dump.h"

static int parse_level(const char *s, enum flow_level *out)
{
	static const char *names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
	for (int i = 0; i < 4; i++)
		if (strcasecmp(s, names[i]) == 0) {
			*out = (enum flow_level)i;
			return 0;
		}
	return -1;
}

static int log_execute(struct task_ctx *c, json_t *in, json_t **out, struct err *e)
{
	json_t *msg = json_object_get(in, "msg");
	const char *lv = json_string_value(json_object_get(in, "level"));
	const char *fmt = json_string_value(json_object_get(in, "format"));
	enum flow_level level = FLOW_INFO;
	char *text;
	if (lv && parse_level(lv, &level) < 0)
		return err_set(e, ERR_INVALID, "Unknown log level '%s', expected DEBUG, INFO, WARN or ERROR", lv);
	if (fmt && strcmp(fmt, "yaml") == 0) {
		char *y = yaml_dump_text(msg ? msg : json_null());
		if (!y || asprintf(&text, "\n%s", y) < 0)
			text = NULL;
		free(y);
	} else {
		text = task_text(msg ? msg : json_null());
	}
	if (text)
		vm_log(c->vm, level, "%s", text);
	free(text);
	*out = NULL;
	return 0;
}

static int log_at(struct task_ctx *c, json_t *args, enum flow_level level)
{
	char *text = task_text(json_array_get(args, 0));
	if (text)
		vm_log(c->vm, level, "%s", text);
	free(text);
	return 0;
}

static int m_info(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	(void)e, (void)out;
	return log_at(c, args, FLOW_INFO);
}
static int m_warn(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	(void)e, (void)out;
	return log_at(c, args, FLOW_WARN);
}
static int m_error(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	(void)e, (void)out;
	return log_at(c, args, FLOW_ERROR);
}
static int m_debug(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	(void)e, (void)out;
	return log_at(c, args, FLOW_DEBUG);
}

static const struct task_method methods[] = {{"info", m_info, 1, 1},
					     {"warn", m_warn, 1, 1},
					     {"error", m_error, 1, 1},
					     {"debug", m_debug, 1, 1},
					     {NULL, NULL, 0, 0}};

const struct task_def task_log = {"log", log_execute, methods, false, true};
