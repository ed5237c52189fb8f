/* libFuzzer target for the flow loader: YAML → node tree → validated, compiled model. */
#include <stddef.h>
#include <stdint.h>

#include "base/limits.h"
#include "flow/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	struct err e;
	struct model *m;
	if (!ready) {
		limits_defaults();
		limits.flow_yaml_nodes = 20000;
		ready = 1;
	}
	m = model_load_buffer("concord.yml", (const char *)data, size, &e);
	model_free(m);
	return 0;
}
