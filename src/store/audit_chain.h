#ifndef ACCORD_STORE_AUDIT_CHAIN_H
#define ACCORD_STORE_AUDIT_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "crypto/auditkey.h"
#include "store/store.h"

/* The audit log's chain (schema/024_audit_chain.sql, docs/security.md "The audit chain"):
 * every entry gets the next number and a MAC over the previous entry's MAC and its fields
 * (crypto/auditkey.h); the head row (newest number and MAC, and the anchor retention
 * moved) carries a tag under the key too.  Writers lock the head row, check its tag and
 * extend it in the entry's own transaction, so the chain is one line across threads and
 * nodes.  A head whose tag does not verify is never extended (the entry is then written
 * outside the chain and the error logged): evidence is kept, not re-signed. */

/* The keys every write uses from now on (once at start, before other threads write; NULL:
 * entries are written outside the chain, as unit tests without a master key do). */
void store_audit_chain_use(const struct audit_keys *k);

/* At start, after the master key check: makes the head when there is none (chaining the
 * entries written before, oldest first), else checks its tag (a failure is logged, the
 * start goes on) and logs entries found outside the chain.  Then store_audit_chain_use(k). */
int store_audit_chain_open(struct store_conn *c, const struct audit_keys *k, struct err *e) WUR;

/* In a master key rotation's transaction: checks the chain under prev and MACs it again
 * under k.  A chain that does not verify under prev is MACed again all the same (so that
 * it goes on), *broken gets the first problem (a message; "" when none) and an entry
 * AUDIT_LOG RESEAL saying it is appended under k, so the evidence stays in the chain.  No
 * head, or a head of another key than prev: nothing to do. */
int store_audit_chain_rekey(struct store_conn *c, const struct audit_keys *prev, const struct audit_keys *k,
			    char *broken, size_t cap, struct err *e) WUR;

/* Inside the entry's transaction (store_audit_insert): locks the head, checks it and
 * extends it by f (whose chain_no it sets), giving the entry's MAC.  0 chained; 1 not
 * chained (no keys, no head, or a head that does not verify — logged); < 0 a store error.
 * with: these keys instead of store_audit_chain_use's (NULL: those). */
int store_audit_chain_extend(struct store_conn *c, const struct audit_keys *with, struct audit_fields *f,
			     unsigned char mac[AUDIT_MAC_BYTES], struct err *e) WUR;

/* Retention inside its transaction: the oldest entries written before cutoff, at most
 * batch, in chain order, removed and the anchor moved to the last of them (head re-tagged).
 * Entries outside the chain older than cutoff go too.  *n: how many went. */
int store_audit_chain_expire(struct store_conn *c, int64_t cutoff, size_t batch, size_t *n, struct err *e) WUR;

/* accord audit verify: walks the chain from the anchor to the head.  ok, and what was
 * covered; else problem names the first entry that was changed, removed, added or
 * reordered (or the head). */
struct audit_verdict {
	bool ok;
	int64_t first_no, last_no, entries, outside; /* outside: entries with no chain number */
	char problem[512];
};
int store_audit_chain_verify(struct store_conn *c, const struct audit_keys *k, struct audit_verdict *v,
			     struct err *e) WUR;

#endif
