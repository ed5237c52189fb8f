#include "store/pq_api.h"

#ifndef PQ_SONAME
#define PQ_SONAME "libpq.so.5"
#endif

struct pq_api pq;

#define PQ_SYM(field, name) DLIB_SYM(struct pq_api, field, name)
static const struct dlib_sym symbols[] = {PQ_API_FUNCTIONS(PQ_SYM)};
static struct dlib_once once = DLIB_ONCE_INIT;

int pq_api_load(struct err *e)
{
	return dlib_load_once(&once, PQ_SONAME, "libpq5", symbols, sizeof symbols / sizeof symbols[0], &pq, sizeof pq,
			      e);
}
