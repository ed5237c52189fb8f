/* The audit chain's key, MACs and head tags (auditkey.h). */
#include "crypto/auditkey.h"

#include <string.h>

#include <sodium.h>

static const char key_context[] = "accord audit chain v1";
static const char entry_context[] = "entry";
static const char head_context[] = "head";

void auditkey_derive(const struct masterkey *mk, struct audit_keys *k)
{
	crypto_generichash(k->key, sizeof k->key, (const unsigned char *)key_context, sizeof key_context - 1, mk->key,
			   sizeof mk->key);
	memcpy(k->id, mk->id, sizeof k->id);
}

static void put_i64(crypto_generichash_state *st, int64_t v)
{
	unsigned char b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)v >> (56 - 8 * i));
	crypto_generichash_update(st, b, sizeof b);
}

/* A field as a presence byte, its length and its bytes: no two entries read alike. */
static void put_text(crypto_generichash_state *st, const char *s)
{
	unsigned char present = s != NULL;

	crypto_generichash_update(st, &present, 1);
	if (!s)
		return;
	put_i64(st, (int64_t)strlen(s));
	crypto_generichash_update(st, (const unsigned char *)s, strlen(s));
}

void auditkey_mac(const struct audit_keys *k, const unsigned char prev[AUDIT_MAC_BYTES],
		  const struct audit_fields *f, unsigned char out[AUDIT_MAC_BYTES])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, k->key, sizeof k->key, AUDIT_MAC_BYTES);
	crypto_generichash_update(&st, (const unsigned char *)entry_context, sizeof entry_context);
	crypto_generichash_update(&st, prev, AUDIT_MAC_BYTES);
	put_i64(&st, f->chain_no);
	put_i64(&st, f->entry_date);
	put_text(&st, f->object);
	put_text(&st, f->action);
	put_text(&st, f->user_id);
	put_text(&st, f->username);
	put_text(&st, f->source);
	put_text(&st, f->api_key_id);
	put_text(&st, f->instance_id);
	put_text(&st, f->address);
	put_text(&st, f->details);
	crypto_generichash_final(&st, out, AUDIT_MAC_BYTES);
}

void auditkey_head_tag(const struct audit_keys *k, const struct audit_head *h, unsigned char tag[AUDIT_MAC_BYTES])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, k->key, sizeof k->key, AUDIT_MAC_BYTES);
	crypto_generichash_update(&st, (const unsigned char *)head_context, sizeof head_context);
	put_i64(&st, h->head_no);
	crypto_generichash_update(&st, h->head_mac, AUDIT_MAC_BYTES);
	put_i64(&st, h->anchor_no);
	crypto_generichash_update(&st, h->anchor_mac, AUDIT_MAC_BYTES);
	crypto_generichash_final(&st, tag, AUDIT_MAC_BYTES);
}

bool auditkey_mac_equal(const unsigned char *a, const unsigned char *b, size_t n)
{
	return n == AUDIT_MAC_BYTES && sodium_memcmp(a, b, AUDIT_MAC_BYTES) == 0;
}

bool auditkey_head_ok(const struct audit_keys *k, const struct audit_head *h, const unsigned char *tag, size_t n)
{
	unsigned char mine[AUDIT_MAC_BYTES];

	auditkey_head_tag(k, h, mine);
	return auditkey_mac_equal(mine, tag, n);
}
