#include <string.h>

#include "flow/el/el.h"
#include "flow/tasks/task.h"
#include "flow/value.h"

static int throw_execute(struct task_ctx *c, json_t *in, json_t **out, struct err *e)
{
	json_t *ex = json_object_get(in, "exception"), *payload = json_object_get(in, "payload");
	*out = NULL;
	if (payload)
		c->payload = json_incref(payload);
	if (json_is_object(ex) && json_is_string(json_object_get(ex, "message"))) {
		if (!payload && json_object_get(ex, "payload"))
			c->payload = json_incref(json_object_get(ex, "payload"));
		return err_set(e, ERR_INVALID, "%s", json_string_value(json_object_get(ex, "message")));
	}
	if (json_is_string(ex))
		return err_set(e, ERR_INVALID, "%s", json_string_value(ex));
	if (!c->payload && ex)
		c->payload = json_incref(ex);
	return err_set(e, ERR_INVALID, "Process Error");
}

static const struct task_method methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_throw = {"throw", throw_execute, methods, false, true};
