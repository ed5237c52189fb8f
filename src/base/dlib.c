#include "base/dlib.h"

#include <dlfcn.h>
#include <string.h>

#include "base/str.h"

int dlib_load(const char *soname, const char *package, const struct dlib_sym *syms, size_t n_syms, void *table,
	      size_t table_size, char *msg, size_t cap)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(msg, cap, "cannot load %s (package %s): %s", soname, package, dlerror());
		return -1;
	}
	for (size_t i = 0; i < n_syms; i++) {
		void *f = dlsym(h, syms[i].name);
		if (!f) {
			str_fmt_cut(msg, cap, "%s has no symbol %s", soname, syms[i].name);
			memset(table, 0, table_size);
			return -1;
		}
		memcpy((char *)table + syms[i].offset, &f, sizeof f);
	}
	return 0;
}

int dlib_load_once(struct dlib_once *once, const char *soname, const char *package, const struct dlib_sym *syms,
		   size_t n_syms, void *table, size_t table_size, struct err *e)
{
	int rc;

	pthread_mutex_lock(&once->lock);
	if (!once->done) {
		once->rc = dlib_load(soname, package, syms, n_syms, table, table_size, once->msg, sizeof once->msg);
		once->done = true;
	}
	rc = once->rc;
	pthread_mutex_unlock(&once->lock);
	return rc ? err_set(e, ERR_INTERNAL, "%s", once->msg) : 0;
}
