#ifndef ACCORD_CRYPTO_AUDITKEY_H
#define ACCORD_CRYPTO_AUDITKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crypto/masterkey.h"

/* The key of the audit log's chain (docs/security.md "The audit chain"): BLAKE2b-256 keyed
 * with the master key over "accord audit chain v1", so that it lives where the master key
 * lives (outside the database) and every node that shares that key chains alike.  Each
 * entry's MAC covers the previous entry's MAC and the entry's fields, so a changed,
 * removed, inserted or reordered entry breaks the chain exactly there; the head (the newest
 * entry's number and MAC, and the anchor that retention moved) carries a tag under the
 * same key in its own context, so that cutting entries off the end is seen too.  A
 * symmetric signature: who verifies needs the master key, as a server start does.
 * Thread-safe once derived (read-only). */

#define AUDIT_MAC_BYTES 32

struct audit_keys {
	unsigned char key[32];
	unsigned char id[MASTERKEY_ID_BYTES]; /* the master key's public id: which key chained */
};

void auditkey_derive(const struct masterkey *mk, struct audit_keys *k);

/* One entry's fields as the MAC reads them; NULL strings differ from empty ones. */
struct audit_fields {
	int64_t chain_no, entry_date;
	const char *object, *action, *user_id, *username, *source, *api_key_id, *instance_id, *address, *details;
};

/* out = MAC(prev, fields) under k. */
void auditkey_mac(const struct audit_keys *k, const unsigned char prev[AUDIT_MAC_BYTES],
		  const struct audit_fields *f, unsigned char out[AUDIT_MAC_BYTES]);

/* The head: the newest entry's number and MAC, and the anchor (the last entry retention
 * removed: 0 and zeros when none). */
struct audit_head {
	int64_t head_no, anchor_no;
	unsigned char head_mac[AUDIT_MAC_BYTES], anchor_mac[AUDIT_MAC_BYTES];
};

void auditkey_head_tag(const struct audit_keys *k, const struct audit_head *h, unsigned char tag[AUDIT_MAC_BYTES]);
/* Compared in constant time. */
bool auditkey_head_ok(const struct audit_keys *k, const struct audit_head *h, const unsigned char *tag, size_t n);
bool auditkey_mac_equal(const unsigned char *a, const unsigned char *b, size_t n);

#endif
