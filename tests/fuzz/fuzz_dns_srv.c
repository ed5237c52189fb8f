/* libFuzzer driver for base/dns_srv's reader of DNS answers (the ldap task's dnsSrvRr):
 * whatever a DNS server sends, the records it accepts are in order, their targets
 * terminated and not empty. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/dns_srv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_srv out[4];
	struct err e;
	size_t n = 99;

	if (dns_srv_parse(data, size, "fuzz", out, 4, &n, &e) < 0) {
		assert(n <= 4);
		return 0;
	}
	assert(n >= 1 && n <= 4);
	for (size_t i = 0; i < n; i++) {
		assert(memchr(out[i].target, '\0', sizeof out[i].target) && out[i].target[0]);
		assert(out[i].port <= 65535);
		if (i)
			assert(out[i - 1].priority <= out[i].priority);
	}
	return 0;
}
