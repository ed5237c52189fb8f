#include "base/rand.h"

#include <stdio.h>
#include <stdlib.h>

#include <sodium.h>

void rand_init(void)
{
	if (sodium_init() < 0) {
		fprintf(stderr, "accord: libsodium could not be initialised\n");
		exit(1);
	}
}

void rand_bytes(void *out, size_t n)
{
	randombytes_buf(out, n);
}

uint32_t rand_uniform(uint32_t upper)
{
	return randombytes_uniform(upper);
}
