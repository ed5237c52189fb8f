#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

static int m_get(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *path;
	struct scope sc;
	struct el_env env;
	json_t *v = NULL;
	int rc;
	if (task_arg_str(args, 0, "name", &path, e) < 0)
		return -1;
	scope_init(&sc, c->vm, c->t);
	scope_env(&sc, &env);
	rc = el_path_lookup(&env, path, strlen(path), &v, e);
	if (rc > 0)
		*out = json_incref(v);
	else if (rc == 0)
		*out = json_array_size(args) > 1 ? json_incref(json_array_get(args, 1)) : json_null();
	scope_cleanup(&sc);
	return rc < 0 ? -1 : 0;
}

static int m_set(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *name;
	if (task_arg_str(args, 0, "name", &name, e) < 0)
		return -1;
	scope_set(c->t, name, json_incref(json_array_get(args, 1)));
	*out = json_null();
	return 0;
}

static int m_eval(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	struct scope sc;
	struct el_env env;
	int rc;
	scope_init(&sc, c->vm, c->t);
	scope_env(&sc, &env);
	rc = el_json_eval_value(json_array_get(args, 0), EL_JSON_KEYS, &env, out, e);
	scope_cleanup(&sc);
	return rc;
}

static int m_concat(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	char *a = task_text(json_array_get(args, 0)), *b = task_text(json_array_get(args, 1));
	(void)c;
	if (!a || !b) {
		free(a);
		free(b);
		return oom_fail(e);
	}
	*out = json_pack("s++", "", a, b);
	free(a);
	free(b);
	return 0;
}

static const struct task_method methods[] = {
    {"get", m_get, 1, 2}, {"set", m_set, 2, 2}, {"eval", m_eval, 1, 1}, {"concat", m_concat, 2, 2}, {NULL, NULL, 0, 0}};

const struct task_def task_vars = {"vars", NULL, methods, false, true};
