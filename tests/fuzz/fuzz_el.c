/* libFuzzer driver for the expression language: the input is parsed as a template and as
 * a bare expression, and evaluated against a fixed set of variables and a fake task. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "base/limits.h"
#include "base/rand.h"
#include "flow/el/el.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static json_t *proto;
static json_t *vars;

static int f_lookup(void *ctx, const char *name, json_t **out, struct err *e)
{
	(void)ctx;
	(void)e;
	*out = json_object_get(vars, name);
	return *out != NULL;
}

static int f_assign(void *ctx, const char *name, json_t *value, struct err *e)
{
	(void)ctx;
	if (json_object_size(vars) > 64)
		return err_set(e, ERR_LIMIT, "too many variables");
	return json_object_set(vars, name, value) == 0 ? 0 : err_set(e, ERR_INTERNAL, "oom");
}

static bool f_is_task(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "log") == 0 || strcmp(name, "t") == 0;
}

static int f_call_task(void *ctx, const char *task, const char *method, json_t *args, json_t **out, struct err *e)
{
	(void)ctx;
	(void)task;
	if (strcmp(method, "fail") == 0)
		return err_set(e, ERR_INVALID, "task failed");
	if (strcmp(method, "user") == 0) {
		err_set(e, ERR_INVALID, "user error");
		return EL_THROWN;
	}
	*out = json_copy(args);
	return 0;
}

static int f_call_function(void *ctx, const struct el_env *env, const char *name, json_t *args, json_t **out,
			   struct err *e)
{
	(void)ctx;
	(void)env;
	(void)e;
	if (strcmp(name, "currentFlowName") == 0)
		*out = json_string("default");
	else if (strcmp(name, "allVariables") == 0)
		*out = json_deep_copy(vars);
	else if (strcmp(name, "echo") == 0)
		*out = json_copy(args);
	else
		return 0;
	return 1;
}

static const struct el_env env = {
    .lookup = f_lookup,
    .assign = f_assign,
    .is_task = f_is_task,
    .call_task = f_call_task,
    .call_function = f_call_function,
};

static void setup(void)
{
	if (proto)
		return;
	rand_init();
	limits_defaults();
	proto = json_loads("{\"i\": 5, \"s\": \"Hello\", \"n\": null, \"t\": true, \"d\": 2.5,"
			   " \"list\": [1, 2, 3], \"m\": {\"a\": 1, \"b\": {\"c\": \"deep\"}},"
			   " \"items\": [{\"name\": \"one\", \"v\": 1}, {\"name\": \"two\", \"v\": 2}],"
			   " \"e\": \"\", \"l0\": []}",
			   0, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e;
	struct el_expr *x;
	json_t *v = NULL;
	bool b;

	setup();
	vars = json_deep_copy(proto);
	x = el_parse_template((const char *)data, size, &e);
	if (x) {
		if (el_eval(x, &env, &v, &e) == 0)
			json_decref(v);
		if (el_eval_bool(x, &env, &b, &e) == 0)
			(void)b;
		el_free(x);
	}
	x = el_parse((const char *)data, size, &e);
	if (x) {
		if (el_eval(x, &env, &v, &e) == 0)
			json_decref(v);
		el_free(x);
	}
	json_decref(vars);
	vars = NULL;
	return 0;
}
