#include <stdlib.h>

#include "flow/tasks/task.h"

static int m_get(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *name, *v;
	(void)c;
	if (task_arg_str(args, 0, "name", &name, e) < 0)
		return -1;
	v = getenv(name);
	*out = v ? json_string(v) : json_array_size(args) > 1 ? json_incref(json_array_get(args, 1)) : json_null();
	return 0;
}

static const struct task_method methods[] = {{"get", m_get, 1, 1}, {"getOrDefault", m_get, 2, 2}, {NULL, NULL, 0, 0}};

const struct task_def task_env = {"env", NULL, methods, false, false};
