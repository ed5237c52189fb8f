#ifndef ACCORD_BASE_KRB5_CCACHE_H
#define ACCORD_BASE_KRB5_CCACHE_H

#include <stddef.h>
#include <stdint.h>

/* MIT Kerberos's FILE credentials cache (kinit's; format versions 3 and 4, big-endian, as
 * MIT's "Credential cache file format" documents it), read without libkrb5: the end time
 * (seconds since the epoch) of the first ticket-granting ticket (server krbtgt/…) in
 * data.  0, or -1 for data that is not such a cache or holds no such ticket. */
int krb5_ccache_tgt_end(const void *data, size_t len, int64_t *end);

#endif
