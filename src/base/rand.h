#ifndef ACCORD_BASE_RAND_H
#define ACCORD_BASE_RAND_H

#include <stddef.h>
#include <stdint.h>

/* Cryptographically secure randomness (libsodium).  rand_init must be called once at
 * start-up before any thread uses these; it exits the process if the RNG is unusable. */
void rand_init(void);
void rand_bytes(void *out, size_t n);
/* Uniform in [0, upper). */
uint32_t rand_uniform(uint32_t upper);

#endif
