#include "flow/tasks/defaults.h"

json_t *task_defaults_get(const struct flow_host *h, const char *key)
{
	json_t *v = h ? json_object_get(h->task_defaults, key) : NULL;
	return json_is_object(v) ? v : NULL;
}

json_t *task_defaults_secrets(const json_t *d)
{
	json_t *a = json_array(), *v;

	if ((v = json_object_get(json_object_get(d, "smtpParams"), "password")) && json_is_string(v))
		json_array_append(a, v);
	if ((v = json_object_get(json_object_get(d, "slackParams"), "apiToken")) && json_is_string(v))
		json_array_append(a, v);
	return a;
}
