/* DNS SRV look-ups through the C library's resolver (base/dns_srv.h). */
#include "base/dns_srv.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

/* "ADDR[:PORT]" into *sa. */
static int server_addr(const char *server, struct sockaddr_in *sa, struct err *e)
{
	char addr[64];
	const char *colon = strchr(server, ':');
	size_t len = colon ? (size_t)(colon - server) : strlen(server);
	struct in_addr in;
	int64_t port = 53;

	if (len >= sizeof addr)
		return err_set(e, ERR_INVALID, "DNS server '%.100s': expected ADDR or ADDR:PORT (IPv4)", server);
	memcpy(addr, server, len);
	addr[len] = '\0';
	if (colon && str_to_i64((struct str){colon + 1, strlen(colon + 1)}, 1, 65535, &port, "port", e) < 0)
		return err_set(e, ERR_INVALID, "DNS server '%.100s': bad port", server);
	if (inet_pton(AF_INET, addr, &in) != 1)
		return err_set(e, ERR_INVALID, "DNS server '%.100s': expected an IPv4 address", server);
	memset(sa, 0, sizeof *sa);
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	sa->sin_addr = in;
	return 0;
}

int dns_server_check(const char *server, struct err *e)
{
	struct sockaddr_in sa;

	return server_addr(server, &sa, e);
}

/* Points st at the one server "ADDR[:PORT]" instead of resolv.conf's. */
static int use_server(res_state st, const char *server, struct err *e)
{
	if (server_addr(server, &st->nsaddr_list[0], e) < 0)
		return -1;
	st->nscount = 1;
	return 0;
}

static unsigned get16(const unsigned char *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

/* One SRV record's data (d, len bytes, within the message msg..end) into r: 0, or 1 when
 * it is not usable. */
static int srv_record(const unsigned char *msg, const unsigned char *end, const unsigned char *d, unsigned len,
		      struct dns_srv *r)
{
	if (len < 7)
		return 1;
	r->priority = get16(d);
	r->weight = get16(d + 2);
	r->port = get16(d + 4);
	if (dn_expand(msg, end, d + 6, r->target, sizeof r->target) < 0 || !r->target[0] || strcmp(r->target, ".") == 0)
		return 1; /* "." : the service is decidedly not available there */
	return 0;
}

static int by_priority(const void *a, const void *b)
{
	const struct dns_srv *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority < y->priority ? -1 : 1;
	return x->weight == y->weight ? 0 : x->weight > y->weight ? -1 : 1;
}

int dns_srv_parse(const unsigned char *ans, size_t len, const char *name, struct dns_srv *out, size_t cap, size_t *n,
		  struct err *e)
{
	const unsigned char *p, *end = ans + len;
	unsigned qd, an;
	int skip;

	*n = 0;
	if (len < 12 || len > DNS_ANSWER_MAX)
		goto bad;
	p = ans + 12;
	qd = get16(ans + 4);
	an = get16(ans + 6);
	for (unsigned i = 0; i < qd; i++) {
		if ((skip = dn_skipname(p, end)) < 0 || end - p < skip + 4)
			goto bad;
		p += skip + 4;
	}
	for (unsigned i = 0; i < an && *n < cap; i++) {
		unsigned type, rdlen;
		if ((skip = dn_skipname(p, end)) < 0 || end - p < skip + 10)
			goto bad;
		p += skip;
		type = get16(p);
		rdlen = get16(p + 8);
		p += 10;
		if ((unsigned)(end - p) < rdlen)
			goto bad;
		if (type == ns_t_srv && srv_record(ans, end, p, rdlen, &out[*n]) == 0)
			(*n)++;
		p += rdlen;
	}
	if (!*n)
		return err_set(e, ERR_NOT_FOUND, "DNS: no SRV record for %.200s", name);
	qsort(out, *n, sizeof *out, by_priority);
	return 0;
bad:
	return err_set(e, ERR_UNAVAILABLE, "DNS: a malformed answer for %.200s", name);
}

int dns_srv_lookup(const char *name, const char *server, struct dns_srv *out, size_t cap, size_t *n, struct err *e)
{
	struct __res_state st;
	unsigned char *ans = NULL;
	int len, rc;

	*n = 0;
	memset(&st, 0, sizeof st);
	if (res_ninit(&st) != 0)
		return err_set(e, ERR_UNAVAILABLE, "DNS: the resolver could not be set up");
	if (server && *server && (rc = use_server(&st, server, e)) < 0)
		goto out;
	if (!(ans = malloc(DNS_ANSWER_MAX))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	len = res_nquery(&st, name, ns_c_in, ns_t_srv, ans, DNS_ANSWER_MAX);
	if (len < 0) {
		if (st.res_h_errno == HOST_NOT_FOUND || st.res_h_errno == NO_DATA)
			rc = err_set(e, ERR_NOT_FOUND, "DNS: no SRV record for %.200s", name);
		else
			rc = err_set(e, ERR_UNAVAILABLE, "DNS: no answer for %.200s from %s", name,
				     server && *server ? server : "the system's resolver");
		goto out;
	}
	/* a longer answer was cut to the buffer (its tail is then malformed) */
	rc = dns_srv_parse(ans, len > DNS_ANSWER_MAX ? DNS_ANSWER_MAX : (size_t)len, name, out, cap, n, e);
out:
	free(ans);
	res_nclose(&st);
	return rc;
}
