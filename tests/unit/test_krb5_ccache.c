/* Unit tests for src/base/krb5_ccache.c: the end time of the ticket-granting ticket in a
 * FILE credentials cache as kinit writes it (version 4, with a configuration entry before
 * the ticket), version 3, and data that is not such a cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/krb5_ccache.h"

struct w {
	unsigned char b[1024];
	size_t n;
};

static void be(struct w *w, uint32_t v, size_t bytes)
{
	while (bytes--)
		w->b[w->n++] = (unsigned char)(v >> (8 * bytes));
}

static void octets(struct w *w, const char *s)
{
	be(w, (uint32_t)strlen(s), 4);
	memcpy(w->b + w->n, s, strlen(s));
	w->n += strlen(s);
}

static void principal(struct w *w, const char *realm, const char *a, const char *b)
{
	be(w, 1, 4);
	be(w, b ? 2 : 1, 4);
	octets(w, realm);
	octets(w, a);
	if (b)
		octets(w, b);
}

static void credential(struct w *w, int version, const char *sa, const char *sb, uint32_t end)
{
	principal(w, "TEST.REALM", "deployer", NULL);
	principal(w, "TEST.REALM", sa, sb);
	be(w, 18, 2);
	if (version == 3)
		be(w, 18, 2);
	octets(w, "0123456789abcdef0123456789abcdef");
	be(w, end ? end - 20 : 0, 4);
	be(w, end ? end - 20 : 0, 4);
	be(w, end, 4);
	be(w, 0, 4);
	be(w, 0, 1);
	be(w, 0x40e10000, 4);
	be(w, 1, 4); /* one address */
	be(w, 2, 2);
	octets(w, "\x7f\x01\x01\x01");
	be(w, 0, 4); /* no authorization data */
	octets(w, "ticket");
	octets(w, "");
}

static size_t cache(struct w *w, int version)
{
	w->n = 0;
	be(w, version == 3 ? 0x0503 : 0x0504, 2);
	if (version == 4) {
		be(w, 12, 2);
		be(w, 1, 2);
		be(w, 8, 2);
		be(w, 0, 4);
		be(w, 0, 4);
	}
	principal(w, "TEST.REALM", "deployer", NULL);
	/* kinit's configuration entry first: no times */
	credential(w, version, "krb5_ccache_conf_data", "fast_avail", 0);
	credential(w, version, "krbtgt", "TEST.REALM", 1795772197);
	return w->n;
}

static void test_kinits_cache(void **state)
{
	struct w w;
	int64_t end = 0;
	(void)state;

	assert_int_equal(krb5_ccache_tgt_end(w.b, cache(&w, 4), &end), 0);
	assert_int_equal(end, 1795772197);
	end = 0;
	assert_int_equal(krb5_ccache_tgt_end(w.b, cache(&w, 3), &end), 0);
	assert_int_equal(end, 1795772197);
}

static void test_not_a_cache(void **state)
{
	struct w w;
	int64_t end = 7;
	size_t n = cache(&w, 4);
	(void)state;

	/* cut inside the ticket's record, anywhere: never read past the data */
	for (size_t cut = 0; cut < n - 20; cut++)
		assert_int_equal(krb5_ccache_tgt_end(w.b, cut, &end), -1);
	w.b[1] = 0x02; /* version 2: native byte order, not read */
	assert_int_equal(krb5_ccache_tgt_end(w.b, n, &end), -1);
	assert_int_equal(krb5_ccache_tgt_end("", 0, &end), -1);
	assert_int_equal(end, 7);
}

static void test_no_tgt(void **state)
{
	struct w w;
	int64_t end = 7;
	(void)state;

	w.n = 0;
	be(&w, 0x0504, 2);
	be(&w, 0, 2);
	principal(&w, "TEST.REALM", "deployer", NULL);
	credential(&w, 4, "host", "h1.test.realm", 1795772197);
	assert_int_equal(krb5_ccache_tgt_end(w.b, w.n, &end), -1);
	assert_int_equal(end, 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinits_cache),
	    cmocka_unit_test(test_not_a_cache),
	    cmocka_unit_test(test_no_tgt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
