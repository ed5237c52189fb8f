/* The table of server tasks (server_tasks.h). */
#include <stdlib.h>
#include <string.h>

#include "queue/server_tasks.h"

static const struct {
	const char *name;
	server_task_fn fn;
} tasks[] = {
    {"concord", server_task_concord},
    {NULL, NULL}, /* one line per task: {"kv", server_task_kv}, … */
};

void task_call_sensitive(struct task_call *tc, const char *value)
{
	if (!value || !*value)
		return;
	if (!tc->sensitive)
		tc->sensitive = json_array();
	json_array_append_new(tc->sensitive, json_string(value));
}

int server_task_run(struct task_call *tc, struct err *e)
{
	for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
		if (tasks[i].name && strcmp(tasks[i].name, tc->task) == 0)
			return tasks[i].fn(tc, e);
	return err_set(e, ERR_UNAVAILABLE, "Task '%s' is not available on this server (docs/flows.md, \"Tasks\")",
		       tc->task ? tc->task : "?");
}
