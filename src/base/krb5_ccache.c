/* Reading a Kerberos FILE credentials cache (krb5_ccache.h). */
#include "base/krb5_ccache.h"

#include <stdbool.h>
#include <string.h>

struct rd {
	const unsigned char *p;
	size_t left;
	bool bad;
};

static uint32_t be(struct rd *r, size_t n)
{
	uint32_t v = 0;
	if (r->bad || r->left < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v = v << 8 | r->p[i];
	r->p += n;
	r->left -= n;
	return v;
}

/* A counted octet string (uint32 length, bytes): its start, or NULL (*n its length). */
static const unsigned char *octets(struct rd *r, uint32_t *n)
{
	const unsigned char *s;
	*n = be(r, 4);
	if (r->bad || r->left < *n) {
		r->bad = true;
		return NULL;
	}
	s = r->p;
	r->p += *n;
	r->left -= *n;
	return s;
}

/* A principal; *krbtgt: its first component is "krbtgt". */
static void principal(struct rd *r, bool *krbtgt)
{
	uint32_t count, n;
	const unsigned char *s;

	be(r, 4); /* name type */
	count = be(r, 4);
	octets(r, &n); /* realm */
	*krbtgt = false;
	for (uint32_t i = 0; i < count && !r->bad; i++) {
		s = octets(r, &n);
		if (i == 0 && s && n == 6 && memcmp(s, "krbtgt", 6) == 0)
			*krbtgt = true;
	}
}

/* A list of (uint16 type, octets): addresses, authorization data. */
static void tagged_list(struct rd *r)
{
	uint32_t count = be(r, 4), n;
	for (uint32_t i = 0; i < count && !r->bad; i++) {
		be(r, 2);
		octets(r, &n);
	}
}

int krb5_ccache_tgt_end(const void *data, size_t len, int64_t *end)
{
	struct rd r = {data, len, false};
	uint32_t version = be(&r, 2), n, endtime;
	bool tgt;

	if (version != 0x0503 && version != 0x0504)
		return -1;
	if (version == 0x0504) {
		n = be(&r, 2); /* the header's tags */
		if (r.bad || r.left < n)
			return -1;
		r.p += n;
		r.left -= n;
	}
	principal(&r, &tgt); /* the default principal */
	while (!r.bad && r.left) {
		principal(&r, &tgt); /* client */
		principal(&r, &tgt); /* server */
		be(&r, 2);	     /* keyblock: enctype (twice in version 3), key */
		if (version == 0x0503)
			be(&r, 2);
		octets(&r, &n);
		be(&r, 4); /* authtime, starttime */
		be(&r, 4);
		endtime = be(&r, 4);
		be(&r, 4); /* renew_till */
		be(&r, 1); /* is_skey */
		be(&r, 4); /* ticket flags */
		tagged_list(&r);
		tagged_list(&r);
		octets(&r, &n); /* ticket, second ticket */
		octets(&r, &n);
		if (!r.bad && tgt && endtime) {
			*end = (int64_t)endtime;
			return 0;
		}
	}
	return -1;
}
