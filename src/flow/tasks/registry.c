#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

#define SERVER_TASK(n)                                                                                                 \
	{                                                                                                              \
		n, NULL, no_methods, true, false                                                                       \
	}

static const struct task_def server_tasks[] = {
    SERVER_TASK("concord"),
    SERVER_TASK("crypto"),
    SERVER_TASK("kv"),
    SERVER_TASK("jsonStore"),
    SERVER_TASK("lock"),
    SERVER_TASK("unlock"),
    SERVER_TASK("project"),
    SERVER_TASK("concordSecrets"),
    SERVER_TASK("repositoryRefresh"),
    SERVER_TASK("docker"),
    SERVER_TASK("inventory"),
};

static const struct task_def *const local_tasks[] = {&task_log,	     &task_throw,  &task_sleep, &task_resource,
						     &task_datetime, &task_base64, &task_files, &task_env,
						     &task_vars,     &task_misc,   &task_http, &task_smtp, &task_slack, &task_slack_channel, &task_ansible, &task_git, &task_github, &task_ldap};

const struct task_def *task_find(const char *name)
{
	for (size_t i = 0; i < sizeof local_tasks / sizeof local_tasks[0]; i++)
		if (strcmp(local_tasks[i]->name, name) == 0)
			return local_tasks[i];
	for (size_t i = 0; i < sizeof server_tasks / sizeof server_tasks[0]; i++)
		if (strcmp(server_tasks[i].name, name) == 0)
			return &server_tasks[i];
	return NULL;
}

int task_arg_str(json_t *args, size_t i, const char *what, const char **out, struct err *e)
{
	json_t *v = json_array_get(args, i);
	if (!json_is_string(v))
		return err_set(e, ERR_INVALID, "'%s' must be a string, got %s", what, value_class_name(v));
	*out = json_string_value(v);
	return 0;
}

int task_arg_int(json_t *args, size_t i, const char *what, long long *out, struct err *e)
{
	json_t *v = json_array_get(args, i);
	int64_t n;
	if (value_to_long(v, &n, e) < 0) {
		err_prefix(e, "'%s'", what);
		return -1;
	}
	*out = n;
	return 0;
}

int task_opt_str(json_t *in, const char *key, const char **out, struct err *e)
{
	json_t *v = json_object_get(in, key);
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return err_set(e, ERR_INVALID, "'%s' must be a string, got %s", key, value_class_name(v));
	*out = json_string_value(v);
	return 0;
}

int task_opt_bool(json_t *in, const char *key, bool def, bool *out, struct err *e)
{
	json_t *v = json_object_get(in, key);

	*out = def;
	if (!v || json_is_null(v))
		return 0;
	if (value_to_bool(v, out, e) < 0) {
		err_prefix(e, "'%s'", key);
		return -1;
	}
	return 0;
}

int task_opt_long(json_t *in, const char *key, int64_t def, int64_t *out, struct err *e)
{
	json_t *v = json_object_get(in, key);

	*out = def;
	if (!v || json_is_null(v))
		return 0;
	if (value_to_long(v, out, e) < 0) {
		err_prefix(e, "'%s'", key);
		return -1;
	}
	return 0;
}

char *task_text(const json_t *v)
{
	if (json_is_string(v))
		return strdup(json_string_value(v));
	return value_to_cstr(v, NULL);
}

static const struct task_method *find_method(const struct task_def *d, const char *name)
{
	for (const struct task_method *m = d->methods; m && m->name; m++)
		if (strcmp(m->name, name) == 0)
			return m;
	return NULL;
}

static int call_local(struct task_ctx *c, const struct task_def *d, const char *method, json_t *args, json_t **out,
		      struct err *e)
{
	const struct task_method *m = find_method(d, method);
	int n = (int)json_array_size(args);
	if (!m)
		return err_set(e, ERR_INVALID, "Method not found: %s.%s(%d arguments)", d->name, method, n);
	if (n < m->min_args || n > m->max_args)
		return err_set(e, ERR_INVALID, "Method not found: %s.%s(%d arguments)", d->name, method, n);
	return m->fn(c, args, out, e);
}

int task_call_method(struct vm *vm, struct thread *t, const char *task, const char *method, json_t *args, json_t **out,
		     bool may_suspend, struct err *e)
{
	const struct task_def *d = task_find(task);
	struct task_ctx c = {.vm = vm, .t = t, .h = vm->h, .task = task};
	int64_t start = dt_mono_ns();
	char *corr;
	int rc;
	if (!d)
		return err_set(e, ERR_NOT_FOUND, "Task not found: '%s'", task);
	if (task_dry_run_check(vm, t, vm->cur, task, e) < 0 || task_policy_check(vm, task, method, NULL, args, e) < 0)
		return -1;
	*out = NULL;
	if (!d->no_files && flow_host_files(vm->h, e) < 0)
		return -1;
	corr = events_task_pre(vm, t, task, method, args);
	if (d->server)
		rc = vm->h->ops->server_task(vm->h->ctx, task, method, args, out,
					     may_suspend && t ? &c.suspend_event : NULL, e);
	else
		rc = call_local(&c, d, method, args, out, e);
	if (rc == 0 && !*out)
		*out = json_null();
	if (rc == 0 && c.suspend_event && !t->error) {
		free(t->event);
		t->event = c.suspend_event;
		c.suspend_event = NULL;
		t->state = TH_SUSPENDED;
	}
	events_task_post(vm, t, task, method, corr, (dt_mono_ns() - start) / 1000000, rc < 0 ? e->msg : NULL,
			 rc < 0 ? NULL : *out);
	free(corr);
	json_decref(c.payload);
	free(c.suspend_event);
	return rc;
}
