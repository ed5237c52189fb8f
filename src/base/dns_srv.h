#ifndef ACCORD_BASE_DNS_SRV_H
#define ACCORD_BASE_DNS_SRV_H

#include <stddef.h>

#include "base/err.h"

/* DNS SRV records (RFC 2782): the servers a service name such as _ldap._tcp.example.com
 * names, for the ldap task's dnsSrvRr.  Blocking (the resolver's own timeouts and
 * retries); thread-safe (a resolver state per call). */

#define DNS_SRV_MAX 32
#define DNS_NAME_MAX 256
#define DNS_ANSWER_MAX 8192

struct dns_srv {
	unsigned priority, weight, port;
	char target[DNS_NAME_MAX]; /* without its final dot */
};

/* The SRV records of name into out (at most cap), by priority, then the heavier weight
 * first; *n how many.  server: "ADDR" or "ADDR:PORT" (IPv4) of the one DNS server to ask,
 * or NULL/"" for the system's (/etc/resolv.conf).  A name without SRV records (or that
 * does not exist) is ERR_NOT_FOUND, a server that does not answer ERR_UNAVAILABLE, a bad
 * server address ERR_INVALID. */
int dns_srv_lookup(const char *name, const char *server, struct dns_srv *out, size_t cap, size_t *n, struct err *e) WUR;

/* The SRV records among the answers of a DNS message (RFC 1035 4.1; at most
 * DNS_ANSWER_MAX bytes) into out as dns_srv_lookup has them; name is for messages only.
 * ERR_NOT_FOUND without SRV records, ERR_UNAVAILABLE for a malformed message. */
int dns_srv_parse(const unsigned char *ans, size_t len, const char *name, struct dns_srv *out, size_t cap, size_t *n,
		  struct err *e) WUR;

/* Whether server is a usable "ADDR" or "ADDR:PORT" (for checking a setting at start). */
int dns_server_check(const char *server, struct err *e) WUR;

#endif
