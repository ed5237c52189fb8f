/* The audit log's chain (audit_chain.h). */
#include "store/audit_chain.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "store/audit.h"

#define BATCH 256

static const struct audit_keys *use_keys;

static const char SQL_LOCK_HEAD[] = "UPDATE audit_chain SET head_no = head_no WHERE id = 1";
static const char SQL_READ_HEAD[] = "SELECT head_no, head_mac, anchor_no, anchor_mac, key_id, tag FROM audit_chain"
				    " WHERE id = 1";
static const char SQL_WRITE_HEAD[] = "UPDATE audit_chain SET head_no = ?, head_mac = ?, anchor_no = ?, anchor_mac = ?,"
				     " key_id = ?, tag = ? WHERE id = 1";
static const char SQL_NEW_HEAD[] = "INSERT INTO audit_chain (id, head_no, head_mac, anchor_no, anchor_mac, key_id, tag)"
				   " VALUES (1, ?, ?, ?, ?, ?, ?)";
#define ROW_COLS                                                                                                       \
	"seq, chain_no, entry_date, object, action, user_id, username, source, api_key_id, instance_id, address, "    \
	"details, mac"
static const char SQL_CHAINED[] = "SELECT " ROW_COLS " FROM audit_log WHERE chain_no > ? ORDER BY chain_no LIMIT ?";
static const char SQL_UNCHAINED[] = "SELECT " ROW_COLS " FROM audit_log WHERE chain_no IS NULL AND seq > ?"
				    " ORDER BY seq LIMIT ?";
static const char SQL_SET_ROW[] = "UPDATE audit_log SET chain_no = ?, mac = ? WHERE seq = ?";
static const char SQL_OUTSIDE[] = "SELECT count(*), coalesce(min(seq), 0) FROM audit_log WHERE chain_no IS NULL";

void store_audit_chain_use(const struct audit_keys *k)
{
	use_keys = k;
}

/* ---- the head ---------------------------------------------------------------------- */

struct head {
	struct audit_head h;
	unsigned char key_id[MASTERKEY_ID_BYTES], tag[AUDIT_MAC_BYTES];
	size_t key_id_len, tag_len;
	bool macs_ok; /* both MACs 32 bytes */
};

static void copy_blob(struct store_stmt *st, int col, unsigned char *dst, size_t cap, size_t *len)
{
	size_t n = 0;
	const void *p = store_col_blob(st, col, &n);

	*len = n;
	memset(dst, 0, cap);
	if (p && n <= cap)
		memcpy(dst, p, n);
}

/* 0 read, 1 none, < 0 error. */
static int read_head(struct store_conn *c, struct head *hd, struct err *e)
{
	struct store_stmt *st = store_prepare(c, SQL_READ_HEAD, e);
	size_t a = 0, b = 0;
	int rc;

	if (!st)
		return -1;
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		hd->h.head_no = store_col_int64(st, 0);
		copy_blob(st, 1, hd->h.head_mac, sizeof hd->h.head_mac, &a);
		hd->h.anchor_no = store_col_int64(st, 2);
		copy_blob(st, 3, hd->h.anchor_mac, sizeof hd->h.anchor_mac, &b);
		copy_blob(st, 4, hd->key_id, sizeof hd->key_id, &hd->key_id_len);
		copy_blob(st, 5, hd->tag, sizeof hd->tag, &hd->tag_len);
		hd->macs_ok = a == AUDIT_MAC_BYTES && b == AUDIT_MAC_BYTES;
	}
	store_reset(st);
	return rc == STORE_ROW ? 0 : rc < 0 ? rc : 1;
}

static bool head_verifies(const struct head *hd, const struct audit_keys *k)
{
	return hd->macs_ok && hd->key_id_len == sizeof k->id && memcmp(hd->key_id, k->id, sizeof k->id) == 0 &&
	       auditkey_head_ok(k, &hd->h, hd->tag, hd->tag_len);
}

static int write_head(struct store_conn *c, const char *sql, const struct audit_head *h, const struct audit_keys *k,
		      struct err *e)
{
	unsigned char tag[AUDIT_MAC_BYTES];
	struct store_stmt *st = store_prepare(c, sql, e);

	if (!st)
		return -1;
	auditkey_head_tag(k, h, tag);
	store_bind_int64(st, 1, h->head_no);
	store_bind_blob(st, 2, h->head_mac, AUDIT_MAC_BYTES);
	store_bind_int64(st, 3, h->anchor_no);
	store_bind_blob(st, 4, h->anchor_mac, AUDIT_MAC_BYTES);
	store_bind_blob(st, 5, k->id, sizeof k->id);
	store_bind_blob(st, 6, tag, sizeof tag);
	return store_step_done(st, e);
}

/* ---- walking the entries, a batch at a time ---------------------------------------- */

#define N_TEXTS 9

struct row {
	int64_t seq;
	bool chained;
	struct audit_fields f;
	char *texts[N_TEXTS];
	unsigned char mac[AUDIT_MAC_BYTES];
	size_t mac_len;
};

static void row_free(struct row *r)
{
	for (int i = 0; i < N_TEXTS; i++)
		free(r->texts[i]);
}

static int row_read(struct store_stmt *st, struct row *r, struct err *e)
{
	const char **dst[N_TEXTS] = {&r->f.object,  &r->f.action,     &r->f.user_id,
				     &r->f.username, &r->f.source,	  &r->f.api_key_id,
				     &r->f.instance_id, &r->f.address, &r->f.details};

	memset(r, 0, sizeof *r);
	r->seq = store_col_int64(st, 0);
	r->chained = !store_col_is_null(st, 1);
	r->f.chain_no = r->chained ? store_col_int64(st, 1) : 0;
	r->f.entry_date = store_col_int64(st, 2);
	for (int i = 0; i < N_TEXTS; i++) {
		const char *v = store_col_text(st, 3 + i);
		if (v && !(r->texts[i] = strdup(v))) {
			row_free(r);
			return err_set(e, ERR_INTERNAL, "out of memory");
		}
		*dst[i] = r->texts[i];
	}
	copy_blob(st, 12, r->mac, sizeof r->mac, &r->mac_len);
	return 0;
}

/* Calls fn for every entry in the chain (chained: by number, from after) or outside it (by
 * seq); fn returns 0 to go on, 1 to stop, < 0 an error.  Each batch is read whole before fn
 * sees it, so fn may write the rows. */
static int walk(struct store_conn *c, bool chained, int64_t after, int (*fn)(struct row *, void *, struct err *),
		void *ctx, struct err *e)
{
	struct row *rows = calloc(BATCH, sizeof *rows);
	int rc = 0;

	if (!rows)
		return err_set(e, ERR_INTERNAL, "out of memory");
	for (;;) {
		struct store_stmt *st = store_prepare(c, chained ? SQL_CHAINED : SQL_UNCHAINED, e);
		size_t n = 0;

		if (!st) {
			rc = -1;
			break;
		}
		store_bind_int64(st, 1, after);
		store_bind_int64(st, 2, BATCH);
		while (n < BATCH && (rc = store_step(st, e)) == STORE_ROW && (rc = row_read(st, &rows[n], e)) == 0)
			n++;
		store_reset(st);
		if (rc < 0) {
			for (size_t i = 0; i < n; i++)
				row_free(&rows[i]);
			break;
		}
		rc = 0;
		for (size_t i = 0; i < n; i++) {
			if (rc == 0)
				rc = fn(&rows[i], ctx, e);
			after = chained ? rows[i].f.chain_no : rows[i].seq;
			row_free(&rows[i]);
		}
		if (rc || n < BATCH)
			break;
	}
	free(rows);
	return rc < 0 ? rc : 0;
}

static int set_row(struct store_conn *c, int64_t seq, int64_t no, const unsigned char mac[AUDIT_MAC_BYTES],
		   struct err *e)
{
	struct store_stmt *st = store_prepare(c, SQL_SET_ROW, e);

	if (!st)
		return -1;
	store_bind_int64(st, 1, no);
	store_bind_blob(st, 2, mac, AUDIT_MAC_BYTES);
	store_bind_int64(st, 3, seq);
	return store_step_done(st, e);
}

/* ---- checking the chain, entry by entry --------------------------------------------- */

struct check {
	const struct audit_keys *k;
	int64_t expected; /* the next number */
	unsigned char prev[AUDIT_MAC_BYTES];
	char *problem; /* the first, "" while none */
	size_t cap;
	int64_t entries, first_no;
};

static void describe(const struct row *r, char *out, size_t cap)
{
	char date[DT_ISO_LEN];

	dt_format_iso(r->f.entry_date, date);
	str_fmt_cut(out, cap, "%s %s by %s at %s", r->f.action ? r->f.action : "?", r->f.object ? r->f.object : "?",
		    r->f.username ? r->f.username : "the server", date);
}

/* Checks r against the chain so far; the first problem is kept.  True while none. */
static bool check_row(struct check *ck, const struct row *r)
{
	unsigned char mine[AUDIT_MAC_BYTES];
	char what[200];

	if (ck->problem[0])
		return false;
	describe(r, what, sizeof what);
	if (r->f.chain_no != ck->expected) {
		str_fmt_cut(ck->problem, ck->cap,
			    r->f.chain_no > ck->expected
				? "entry %" PRId64 " was removed (the chain goes on at entry %" PRId64 ", seq %" PRId64
				  ": %s)"
				: "entry %" PRId64 " comes twice or out of order (found entry %" PRId64 ", seq %" PRId64
				  ": %s)",
			    ck->expected, r->f.chain_no, r->seq, what);
		return false;
	}
	auditkey_mac(ck->k, ck->prev, &r->f, mine);
	if (!auditkey_mac_equal(mine, r->mac, r->mac_len)) {
		str_fmt_cut(ck->problem, ck->cap,
			    "entry %" PRId64 " (seq %" PRId64 ": %s) was changed, or written without the key: its MAC "
			    "does not match",
			    r->f.chain_no, r->seq, what);
		return false;
	}
	if (ck->entries++ == 0)
		ck->first_no = r->f.chain_no;
	memcpy(ck->prev, r->mac, AUDIT_MAC_BYTES);
	ck->expected++;
	return true;
}

static void check_start(struct check *ck, const struct audit_keys *k, const struct head *hd, char *problem,
			size_t cap)
{
	memset(ck, 0, sizeof *ck);
	ck->k = k;
	ck->expected = hd->h.anchor_no + 1;
	memcpy(ck->prev, hd->h.anchor_mac, AUDIT_MAC_BYTES);
	ck->problem = problem;
	ck->cap = cap;
	problem[0] = '\0';
}

/* After the walk: the head names the last entry seen. */
static void check_end(struct check *ck, const struct head *hd)
{
	if (ck->problem[0])
		return;
	if (ck->expected - 1 < hd->h.head_no) {
		str_fmt_cut(ck->problem, ck->cap,
			    "entries %" PRId64 " to %" PRId64 " were removed (the chain's head names entry %" PRId64 ")",
			    ck->expected, hd->h.head_no, hd->h.head_no);
	} else if (ck->expected - 1 > hd->h.head_no || !auditkey_mac_equal(ck->prev, hd->h.head_mac, AUDIT_MAC_BYTES)) {
		str_fmt_cut(ck->problem, ck->cap, "the chain's head names entry %" PRId64 ", which does not match the entries",
			    hd->h.head_no);
	}
}

static int verify_fn(struct row *r, void *ctx, struct err *e)
{
	(void)e;
	return check_row(ctx, r) ? 0 : 1;
}

int store_audit_chain_verify(struct store_conn *c, const struct audit_keys *k, struct audit_verdict *v,
			     struct err *e)
{
	struct store_stmt *st;
	struct head hd;
	struct check ck;
	int rc;

	memset(v, 0, sizeof *v);
	if ((rc = read_head(c, &hd, e)) < 0)
		return rc;
	if (rc == 1) {
		str_fmt_cut(v->problem, sizeof v->problem,
			"the audit log has no chain yet: a server of this version starts it at its first start");
		return 0;
	}
	if (hd.key_id_len != sizeof k->id || memcmp(hd.key_id, k->id, sizeof k->id) != 0) {
		str_fmt_cut(v->problem, sizeof v->problem,
			"the chain was made with another master key than this one: verify with that key");
		return 0;
	}
	if (!head_verifies(&hd, k)) {
		str_fmt_cut(v->problem, sizeof v->problem,
			"the chain's head was changed: its tag does not verify (entries were removed or the head rewritten)");
		return 0;
	}
	check_start(&ck, k, &hd, v->problem, sizeof v->problem);
	if ((rc = walk(c, true, INT64_MIN, verify_fn, &ck, e)))
		return rc;
	check_end(&ck, &hd);
	v->first_no = ck.first_no;
	v->last_no = ck.expected - 1;
	v->entries = ck.entries;
	if (!(st = store_prepare(c, SQL_OUTSIDE, e)))
		return -1;
	if ((rc = store_step(st, e)) == STORE_ROW) {
		v->outside = store_col_int64(st, 0);
		if (v->outside && !v->problem[0])
			str_fmt_cut(v->problem, sizeof v->problem,
				"%" PRId64 " entr%s outside the chain (written without the key, or by a node of an older "
				"version), the first at seq %" PRId64,
				v->outside, v->outside == 1 ? "y is" : "ies are", store_col_int64(st, 1));
	}
	store_reset(st);
	if (rc < 0)
		return rc;
	v->ok = !v->problem[0];
	return 0;
}

/* ---- extending, starting, re-keying, expiring ---------------------------------------- */

int store_audit_chain_extend(struct store_conn *c, const struct audit_keys *with, struct audit_fields *f,
			     unsigned char mac[AUDIT_MAC_BYTES], struct err *e)
{
	const struct audit_keys *k = with ? with : use_keys;
	struct store_stmt *st;
	struct head hd;
	int rc;

	if (!k)
		return 1;
	/* The head's row lock orders the nodes' extensions on PostgreSQL; a write transaction
	 * on SQLite (BEGIN IMMEDIATE) excludes every other writer already, and the empty
	 * update was 3% of a process start's transaction there (callgrind). */
	if (store_row_locks(c) && (!(st = store_prepare(c, SQL_LOCK_HEAD, e)) || store_step_done(st, e)))
		return -1;
	if ((rc = read_head(c, &hd, e)) < 0)
		return rc;
	if (rc == 1 || !head_verifies(&hd, k)) {
		LOG_E("audit: %s; the entry %s %s is written outside the chain (run accord audit verify)",
		      rc == 1 ? "the audit chain has no head" : "the audit chain's head does not verify",
		      f->action ? f->action : "", f->object ? f->object : "");
		return 1;
	}
	f->chain_no = hd.h.head_no + 1;
	auditkey_mac(k, hd.h.head_mac, f, mac);
	hd.h.head_no = f->chain_no;
	memcpy(hd.h.head_mac, mac, AUDIT_MAC_BYTES);
	return write_head(c, SQL_WRITE_HEAD, &hd.h, k, e);
}

struct link {
	struct store_conn *c;
	const struct audit_keys *k;
	struct audit_head h;
};

static int link_fn(struct row *r, void *ctx, struct err *e)
{
	struct link *l = ctx;

	r->f.chain_no = ++l->h.head_no;
	auditkey_mac(l->k, l->h.head_mac, &r->f, l->h.head_mac);
	return set_row(l->c, r->seq, r->f.chain_no, l->h.head_mac, e);
}

int store_audit_chain_open(struct store_conn *c, const struct audit_keys *k, struct err *e)
{
	struct store_stmt *st;
	struct head hd;
	int rc;

	if ((rc = store_tx_begin_rows(c, e)))
		return rc;
	if (!(st = store_prepare(c, SQL_LOCK_HEAD, e)) || store_step_done(st, e) || (rc = read_head(c, &hd, e)) < 0)
		goto fail;
	if (rc == 1) {
		struct link l = {.c = c, .k = k};
		if ((rc = walk(c, false, INT64_MIN, link_fn, &l, e)) || (rc = write_head(c, SQL_NEW_HEAD, &l.h, k, e)))
			goto fail;
		LOG_I("audit: chain started (%" PRId64 " earlier entr%s chained)", l.h.head_no,
		      l.h.head_no == 1 ? "y" : "ies");
	} else if (!head_verifies(&hd, k)) {
		LOG_E("audit: the chain's head does not verify with this master key (entries removed or the head "
		      "rewritten): run accord audit verify; new entries are written outside the chain until it is "
		      "settled (docs/security.md \"The audit chain\")");
	}
	if ((rc = store_tx_commit(c, e)))
		return rc;
	if ((st = store_prepare(c, SQL_OUTSIDE, e)) && store_step(st, e) == STORE_ROW && store_col_int64(st, 0) > 0)
		LOG_W("audit: %" PRId64 " entr%s outside the chain (run accord audit verify)", store_col_int64(st, 0),
		      store_col_int64(st, 0) == 1 ? "y is" : "ies are");
	if (st)
		store_reset(st);
	store_audit_chain_use(k);
	return 0;
fail:
	store_tx_rollback(c);
	return rc ? rc : -1;
}

struct rekey {
	struct check ck; /* under the previous key */
	struct link l;	 /* under the new one */
};

static int rekey_fn(struct row *r, void *ctx, struct err *e)
{
	struct rekey *rk = ctx;

	(void)check_row(&rk->ck, r);
	rk->l.h.head_no = r->f.chain_no;
	auditkey_mac(rk->l.k, rk->l.h.head_mac, &r->f, rk->l.h.head_mac);
	return set_row(rk->l.c, r->seq, r->f.chain_no, rk->l.h.head_mac, e);
}

int store_audit_chain_rekey(struct store_conn *c, const struct audit_keys *prev, const struct audit_keys *k,
			    char *broken, size_t cap, struct err *e)
{
	struct rekey rk = {.l = {.c = c, .k = k}};
	struct head hd;
	int rc;

	broken[0] = '\0';
	if ((rc = read_head(c, &hd, e)))
		return rc < 0 ? rc : 0;
	if (hd.key_id_len != sizeof prev->id || memcmp(hd.key_id, prev->id, sizeof prev->id) != 0)
		return 0; /* already this key's, or another's: store_audit_chain_open says so */
	check_start(&rk.ck, prev, &hd, broken, cap);
	if (!head_verifies(&hd, prev))
		str_fmt_cut(broken, cap, "the chain's head did not verify under the previous master key");
	rk.l.h = hd.h;
	rk.l.h.head_no = hd.h.anchor_no;
	memcpy(rk.l.h.head_mac, hd.h.anchor_mac, AUDIT_MAC_BYTES);
	if ((rc = walk(c, true, INT64_MIN, rekey_fn, &rk, e)))
		return rc;
	check_end(&rk.ck, &hd);
	if ((rc = write_head(c, SQL_WRITE_HEAD, &rk.l.h, k, e)) || !broken[0])
		return rc;
	/* The evidence stays in the chain: an entry saying what did not verify. */
	json_t *details = json_pack("{s:s,s:s}", "reason", "master key rotation", "problem", broken);
	struct audit_entry a = {.object = "AUDIT_LOG", .action = "RESEAL", .source = "SYSTEM", .details = details};
	if (!details)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = store_audit_insert_with(c, &a, k, e);
	json_decref(details);
	return rc;
}

int store_audit_chain_expire(struct store_conn *c, int64_t cutoff, size_t batch, size_t *n, struct err *e)
{
	static const char SQL_OLDEST[] = "SELECT chain_no, mac, entry_date FROM audit_log WHERE chain_no IS NOT NULL"
					 " ORDER BY chain_no LIMIT ?";
	static const char SQL_DROP[] = "DELETE FROM audit_log WHERE chain_no IS NOT NULL AND chain_no <= ?";
	static const char SQL_DROP_OUTSIDE[] = "DELETE FROM audit_log WHERE seq IN (SELECT seq FROM audit_log"
					       " WHERE chain_no IS NULL AND entry_date < ? ORDER BY entry_date LIMIT ?)";
	const struct audit_keys *k = use_keys;
	struct store_stmt *st;
	struct head hd;
	int rc = 0;

	*n = 0;
	if (k && (!(st = store_prepare(c, SQL_LOCK_HEAD, e)) || store_step_done(st, e)))
		return -1;
	if (k && (rc = read_head(c, &hd, e)) == 0 && head_verifies(&hd, k)) {
		int64_t last = 0;
		size_t len = 0;
		if (!(st = store_prepare(c, SQL_OLDEST, e)))
			return -1;
		store_bind_int64(st, 1, (int64_t)batch);
		while ((rc = store_step(st, e)) == STORE_ROW && store_col_int64(st, 2) < cutoff) {
			last = store_col_int64(st, 0);
			copy_blob(st, 1, hd.h.anchor_mac, sizeof hd.h.anchor_mac, &len);
		}
		store_reset(st);
		if (rc < 0)
			return rc;
		if (last) {
			if (!(st = store_prepare(c, SQL_DROP, e)))
				return -1;
			store_bind_int64(st, 1, last);
			if (store_step_done(st, e))
				return -1;
			*n = (size_t)store_changes(c);
			hd.h.anchor_no = last;
			if (write_head(c, SQL_WRITE_HEAD, &hd.h, k, e))
				return -1;
		}
	} else if (k) {
		LOG_W("audit: retention keeps the chained entries: the chain's head %s (run accord audit verify)",
		      rc < 0 ? "cannot be read" : rc == 1 ? "is missing" : "does not verify");
	}
	if (*n >= batch || !(st = store_prepare(c, SQL_DROP_OUTSIDE, e)))
		return *n >= batch ? 0 : -1;
	store_bind_int64(st, 1, cutoff);
	store_bind_int64(st, 2, (int64_t)(batch - *n));
	if (store_step_done(st, e))
		return -1;
	*n += (size_t)store_changes(c);
	return 0;
}
