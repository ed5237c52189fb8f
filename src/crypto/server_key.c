/* The server's master key at start-up (crypto/server_key.h): loaded, compared with the
 * database's key check, and a previous key's envelopes re-wrapped (rotation). */
#include "crypto/server_key.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/log.h"
#include "base/str.h"
#include "crypto/auditkey.h"
#include "crypto/seal.h"
#include "store/audit_chain.h"
#include "store/meta.h"
#include "store/secrets.h"

#define KEY_CHECK_META "master_key_check"
#define KEY_ADVICE "every node must use the same master key; see docs/security.md 'The master key'"

/* The keys of this start and what one pass over the server-key envelopes found. */
struct startup_keys {
	const struct masterkey *mk;
	const struct masterkey *prev; /* NULL: no previous key */
	const char *from, *prev_from; /* where they came from, for messages */
	char path[4200], prev_path[4200], created_from[4300];
	size_t n_env, n_current, n_rewrapped;
	bool check_written, rotated; /* rotated: the check named the previous key */
};

/* Re-wraps an envelope of the previous key with the current one, and counts. */
static int visit_envelope(void *ctx, unsigned char *env, size_t env_len, bool *changed, struct err *e)
{
	struct startup_keys *k = ctx;
	int rc;

	*changed = false;
	k->n_env++;
	if (k->prev && seal_uses_key(env, env_len, k->prev)) {
		*changed = true;
		if ((rc = seal_rewrap(k->prev, k->mk, env, env_len, e)))
			return rc;
	}
	if (seal_uses_key(env, env_len, k->mk))
		k->n_current++;
	return 0;
}

/* The previous key of a rotation: ACCORD_MASTER_KEY_PREVIOUS or <data>/master.key.previous;
 * k->prev stays NULL when there is none. */
static int load_previous(const char *data_dir, struct masterkey *prev, struct startup_keys *k, struct err *e)
{
	const char *env_prev = getenv("ACCORD_MASTER_KEY_PREVIOUS");
	int rc;

	if (env_prev && *env_prev) {
		k->prev_from = "ACCORD_MASTER_KEY_PREVIOUS";
		rc = masterkey_load(env_prev, data_dir, prev, NULL, e);
	} else {
		k->prev_from = k->prev_path;
		rc = masterkey_load_file(k->prev_path, prev, e);
	}
	if (rc == -ERR_NOT_FOUND)
		return 0;
	if (rc) {
		err_prefix(e, "previous master key");
		return rc;
	}
	k->prev = prev;
	return 0;
}

static int refuse(const struct startup_keys *k, struct err *e)
{
	if (k->prev)
		return err_set(e, ERR_INVALID,
			       "neither the master key (from %s) nor the previous one (from %s) matches the key this "
			       "database was created with (key check in the database): " KEY_ADVICE,
			       k->from, k->prev_from);
	return err_set(e, ERR_INVALID,
		       "the master key (from %s) does not match the key this database was created with (key check "
		       "in the database): " KEY_ADVICE,
		       k->from);
}

/* A database without a key check (new, or from before the check existed) gets the current
 * key's, unless that key opens none of its server-key secrets.  When it opens only some, it
 * is written all the same (the caller logs it). */
static int first_check(struct store_conn *conn, struct startup_keys *k, const char *mine, struct err *e)
{
	char stored[128];
	bool added;
	int rc;

	if (k->n_env > 0 && k->n_current == 0)
		return err_set(e, ERR_INVALID,
			       "the master key (from %s) opens none of the %zu secret(s) this database has sealed with "
			       "a master key: " KEY_ADVICE,
			       k->from, k->n_env);
	if ((rc = store_meta_add(conn, KEY_CHECK_META, mine, &added, e)))
		return rc;
	k->check_written = added;
	if (added) /* else another node wrote one meanwhile */
		return 0;
	if ((rc = store_meta_get(conn, KEY_CHECK_META, stored, sizeof stored, e)))
		return rc;
	return masterkey_check_matches(k->mk, stored) ? 0 : refuse(k, e);
}

/* A rotation MACs the audit chain again under the new key (store/audit_chain.h); what did
 * not verify under the previous one is logged and kept in the chain as an entry. */
static int rekey_audit_chain(struct store_conn *conn, const struct startup_keys *k, struct err *e)
{
	struct audit_keys *keys = sodium_malloc(2 * sizeof *keys);
	char broken[512];
	int rc;

	if (!keys)
		return err_set(e, ERR_INTERNAL, "out of memory");
	auditkey_derive(k->prev, &keys[0]);
	auditkey_derive(k->mk, &keys[1]);
	rc = store_audit_chain_rekey(conn, &keys[0], &keys[1], broken, sizeof broken, e);
	sodium_free(keys);
	if (rc == 0 && broken[0])
		LOG_E("master key rotation: the audit chain did not verify under the previous key: %s; it is chained "
		      "again under the current key from here, with an AUDIT_LOG RESEAL entry saying so",
		      broken);
	return rc;
}

/* Compares the database's key check with the keys, re-wraps the envelopes of the previous
 * key and writes the current key's check where there was none or the previous key's: one
 * transaction, so that a rotation moves the envelopes and the check together. */
static int check_and_rotate(struct store_conn *conn, struct startup_keys *k, struct err *e)
{
	char stored[128], mine[MASTERKEY_CHECK_LEN + 1];
	bool absent = false;
	struct err e2;
	int rc;

	masterkey_check(k->mk, mine);
	if ((rc = store_tx_begin(conn, e)))
		return rc;
	rc = store_meta_get(conn, KEY_CHECK_META, stored, sizeof stored, &e2);
	if (rc == -ERR_NOT_FOUND) {
		absent = true;
		rc = 0;
	} else if (rc) {
		*e = e2;
	} else if (!masterkey_check_matches(k->mk, stored)) {
		k->rotated = k->prev && masterkey_check_matches(k->prev, stored);
		if (!k->rotated)
			rc = refuse(k, e);
	}
	if (rc == 0 && (absent || k->prev))
		rc = store_secret_rewrite_envelopes(conn, visit_envelope, k, &k->n_rewrapped, e);
	if (rc == 0 && absent)
		rc = first_check(conn, k, mine, e);
	if (rc == 0 && k->rotated && (rc = store_meta_set(conn, KEY_CHECK_META, mine, e)) == 0)
		k->check_written = true;
	if (rc == 0 && k->prev)
		rc = rekey_audit_chain(conn, k, e);
	if (rc == 0)
		return store_tx_commit(conn, e);
	store_tx_rollback(conn);
	return rc;
}

static void log_key_check(const struct startup_keys *k)
{
	if (k->prev)
		LOG_I("master key rotation: %zu secret(s) re-wrapped with the current master key", k->n_rewrapped);
	if (!k->check_written)
		LOG_I("secrets: the master key matches the database's key check");
	else if (k->rotated)
		LOG_I("secrets: the database's key check now names the current master key");
	else if (k->n_env == 0)
		LOG_I("secrets: key check of the master key written to the database (no secret sealed with a master "
		      "key yet)");
	else if (k->n_current == k->n_env)
		LOG_I("secrets: key check of the master key written to the database (the key opens all %zu secret(s) "
		      "sealed with a master key)",
		      k->n_env);
	else
		LOG_W("secrets: key check of the master key written to the database, but the key opens only %zu of "
		      "the %zu secret(s) sealed with a master key: the others were sealed with another key",
		      k->n_current, k->n_env);
}

static int set_paths(const char *data_dir, struct startup_keys *k, struct err *e)
{
	if (str_fmt(k->path, sizeof k->path, "%s/%s", data_dir, MASTERKEY_FILE) ||
	    str_fmt(k->prev_path, sizeof k->prev_path, "%s.previous", k->path) ||
	    str_fmt(k->created_from, sizeof k->created_from, "%s, created now as there was none; removed again",
		    k->path))
		return err_set(e, ERR_INVALID, "data folder path too long (limit %zu bytes): %s",
			       sizeof k->path - sizeof MASTERKEY_FILE - 10, data_dir);
	return 0;
}

/* Loads the keys, checks them against the database and rotates.  A master.key created by
 * this start is removed again when the start fails: nothing was sealed with it. */
static int load_and_check(struct store *store, const char *data_dir, struct masterkey *mk, struct err *e)
{
	static const char *const sources[] = {"ACCORD_MASTER_KEY", "master.key", "master.key (created)"};
	static const char *const from_env = "ACCORD_MASTER_KEY";
	struct masterkey *prev = sodium_malloc(sizeof *prev);
	struct startup_keys *k = calloc(1, sizeof *k);
	enum masterkey_source src = MASTERKEY_FROM_ENV;
	struct store_conn *conn;
	bool created = false;
	int rc;

	if (!prev || !k) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	k->mk = mk;
	if ((rc = set_paths(data_dir, k, e)) || (rc = masterkey_load(getenv(from_env), data_dir, mk, &src, e)))
		goto out;
	created = src == MASTERKEY_CREATED;
	LOG_I("secrets: master key loaded from %s", sources[src]);
	k->from = src == MASTERKEY_FROM_ENV ? from_env : created ? k->created_from : k->path;
	if ((rc = load_previous(data_dir, prev, k, e)))
		goto out;
	conn = store_conn(store, e);
	rc = conn ? check_and_rotate(conn, k, e) : -1;
	if (rc == 0)
		log_key_check(k);
out:
	if (rc && created)
		unlink(k->path);
	sodium_free(prev);
	free(k);
	return rc;
}

struct masterkey *server_key_open(struct store *store, const char *data_dir, struct err *e)
{
	struct masterkey *mk = sodium_malloc(sizeof *mk);

	if (!mk) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	if (load_and_check(store, data_dir, mk, e)) {
		sodium_free(mk);
		return NULL;
	}
	sodium_mprotect_readonly(mk);
	return mk;
}

void server_key_free(struct masterkey *mk)
{
	if (mk)
		sodium_free(mk); /* wipes */
}
