/* libFuzzer driver for the real task methods (flow/tasks/), through the real VM and task
 * registry: fuzz_el drives a fake task, so this is where datetime, base64, misc and the
 * resource task's parsers meet hostile input.  The input is split at its first two NUL
 * bytes into the strings a, b and c; one flow calls every method that has no side effect
 * with them, each step in its own try block so that one refusal does not hide the rest.
 * Methods that touch files, sleep or the network are left out: they have their own tests. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/limits.h"
#include "base/rand.h"
#include "flow/model.h"
#include "flow/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *calls[] = {
    "datetime.parse(a, b)",
    "datetime.format(a, b)",
    "datetime.format('2024-05-01T10:20:30.456Z', a)",
    "datetime.currentWithZone(a, b)",
    "datetime.current(a)",
    "base64.encode(a)",
    "base64.decode(a)",
    "misc.trim(a)",
    "misc.trim(a, n)",
    "resource.fromJsonString(a)",
    "resource.fromYamlString(a)",
    "resource.prettyPrintJson(resource.fromJsonString(a))",
    "resource.printJson(resource.fromYamlString(a))",
    "resource.fromJsonString(a, b)",
};

static struct model *model;

static void quiet_log(void *ctx, enum flow_level level, const char *msg)
{
	(void)ctx, (void)level, (void)msg;
}

static const struct flow_host_ops ops = {.log = quiet_log};
static const struct flow_host host = {.ops = &ops, .workdir = "/nonexistent"};

static void setup(void)
{
	char text[8192];
	size_t len;
	struct err e;

	if (model)
		return;
	rand_init();
	limits_defaults();
	len = (size_t)snprintf(text, sizeof text, "flows:\n  default:\n");
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		len += (size_t)snprintf(text + len, sizeof text - len,
					"    - try:\n        - log: \"${%s}\"\n      error:\n        - log: \"e\"\n",
					calls[i]);
	model = model_load_buffer("concord.yml", text, len, &e);
	if (!model)
		abort(); /* the driver's own flow must load */
}

/* The next NUL-terminated piece of data (the rest when there is no NUL), as a flow's
 * string: UTF-8 (YAML and JSON give nothing else), an empty one when the bytes are not. */
static json_t *piece(const uint8_t **d, size_t *n)
{
	const uint8_t *end = memchr(*d, 0, *n);
	size_t len = end ? (size_t)(end - *d) : *n;
	json_t *s = json_stringn((const char *)*d, len);
	*d += len + (end ? 1 : 0);
	*n -= len + (end ? 1 : 0);
	return s ? s : json_string("");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e;
	struct vm *vm;
	json_t *args;

	setup();
	if (size > 4096)
		return 0;
	args = json_object();
	json_object_set_new(args, "a", piece(&data, &size));
	json_object_set_new(args, "b", piece(&data, &size));
	json_object_set_new(args, "n", json_integer(size ? (json_int_t)(int8_t)data[0] : 3));
	vm = vm_new(model, &host);
	if (vm_start(vm, "default", args, NULL, &e) == 0)
		(void)vm_run(vm);
	vm_free(vm);
	json_decref(args);
	return 0;
}
