#include "store/pq_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "base/str.h"

#ifndef PQ_SONAME
#define PQ_SONAME "libpq.so.5"
#endif

struct pq_api pq;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[ERR_MSG_MAX];

#define PQ_API_SLOT(field, name) {#name, offsetof(struct pq_api, field)},
static const struct {
	const char *name;
	size_t offset;
} symbols[] = {PQ_API_FUNCTIONS(PQ_API_SLOT)};
#undef PQ_API_SLOT

/* The handle stays open for the life of the process: the table points into it. */
static void load(void)
{
	struct pq_api api;
	void *h = dlopen(PQ_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(load_error, sizeof load_error, "cannot load %s (package libpq5): %s", PQ_SONAME, dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		void *f = dlsym(h, symbols[i].name);
		if (!f) {
			str_fmt_cut(load_error, sizeof load_error, "%s has no symbol %s", PQ_SONAME, symbols[i].name);
			return;
		}
		*(void **)((char *)&api + symbols[i].offset) = f;
	}
	pq = api;
}

int pq_api_load(struct err *e)
{
	pthread_once(&once, load);
	if (!pq.connectdb_params)
		return err_set(e, ERR_INTERNAL, "%s", load_error);
	return 0;
}
