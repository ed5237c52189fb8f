/* The `crypto` task on the server (docs/flows.md "Tasks", docs/security.md): secrets of
 * the store exported to the flow as its initiator, and values encrypted with the project
 * key.  Every plaintext handed to the flow is marked sensitive (the runner prints it as
 * ******) and never appears in a message of this file. */
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/rbac.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "crypto/payload.h"
#include "crypto/projkey.h"
#include "crypto/seal.h"
#include "queue/tasks/server_tasks.h"
#include "queue/tasks/task_secret.h"
#include "store/orgs.h"
#include "store/secrets.h"
#include "store/users.h"

#define EXPORT_DIR ".tmp" /* default folder of exported files, relative to the working dir */

static const struct masterkey *master_key(struct task_call *tc, struct err *e)
{
	const struct masterkey *mk = tc->r->q ? tc->r->q->cfg.master_key : NULL;
	if (!mk)
		err_set(e, ERR_UNAVAILABLE, "crypto: the server's master key is not available to processes");
	return mk;
}

/* The secret reference of a call: ([dir,] [org,] name, password), n_fixed leading args. */
struct secret_ref {
	const char *org, *name, *password;
};

static int parse_ref(struct task_call *tc, size_t first, struct secret_ref *ref, struct err *e)
{
	size_t n = json_array_size(tc->args) - first;
	json_t *org = n == 3 ? json_array_get(tc->args, first) : NULL;
	json_t *name = json_array_get(tc->args, first + n - 2), *pw = json_array_get(tc->args, first + n - 1);

	if (n != 2 && n != 3)
		return err_set(e, ERR_INVALID, "Method not found: crypto.%s(%zu arguments)", tc->method,
			       json_array_size(tc->args));
	if (org && !json_is_null(org) && !json_is_string(org))
		return err_set(e, ERR_INVALID, "crypto.%s: the organization name must be a string", tc->method);
	if (!json_is_string(name) || !json_string_length(name))
		return err_set(e, ERR_INVALID, "crypto.%s: the secret name must be a non-empty string", tc->method);
	if (!json_is_null(pw) && !json_is_string(pw))
		return err_set(e, ERR_INVALID, "crypto.%s: the password must be a string or null", tc->method);
	ref->org = json_string_value(org);
	ref->name = json_string_value(name);
	ref->password = json_is_string(pw) && json_string_length(pw) ? json_string_value(pw) : NULL;
	return 0;
}

/* Finds, checks and opens the secret of ref: *pt is released with payload_free. */
static int open_secret(struct task_call *tc, const struct secret_ref *ref, enum secret_type want, struct secret *s,
		       unsigned char **pt, size_t *pt_len, struct err *e)
{
	int rc;

	*pt = NULL;
	if ((rc = task_secret_find(tc, ref->org, ref->name, ACCESS_READER, true, s, e)))
		return rc;
	if (s->type != want)
		return err_set(e, ERR_INVALID, "Invalid secret type: %s, expected: %s", secret_type_name(s->type),
			       secret_type_name(want));
	return task_secret_open(tc, s, ref->password, pt, pt_len, e);
}

/* A sensitive string for the flow: valid UTF-8 without NUL, else an error. */
static json_t *sensitive_string(struct task_call *tc, const char *what, const char *p, size_t n, struct err *e)
{
	json_t *v = memchr(p, 0, n) ? NULL : json_stringn(p, n);

	if (!v) {
		err_set(e, ERR_INVALID, "crypto.%s: %s is not text (use exportAsFile)", tc->method, what);
		return NULL;
	}
	task_call_sensitive(tc, json_string_value(v));
	return v;
}

/* Writes data to a new file <dir>/<prefix>_<uuid><suffix> beneath the working dir; the
 * path relative to the working dir in *rel (new string). */
static int write_export(struct task_call *tc, const char *dir, const char *prefix, const char *suffix, const void *data,
			size_t len, char **rel, struct err *e)
{
	char id[UUID_STR_LEN];
	int rc;

	*rel = NULL;
	if (!path_is_safe_relative(dir))
		return err_set(e, ERR_INVALID,
			       "crypto.%s: the folder '%s' is not a relative path inside the working "
			       "directory",
			       tc->method, dir);
	if ((rc = path_mkdirs_beneath(tc->workdir, dir, 0700, e)))
		return rc;
	uuid_v4(id);
	if (asprintf(rel, "%s/%s_%s%s", dir, prefix, id, suffix) < 0) {
		*rel = NULL;
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	if ((rc = path_write_beneath(tc->workdir, *rel, data, len, 0600, e)) == 0)
		rc = queue_give_to_runner(tc->r->q, tc->workdir, *rel, e); /* the runner's user reads it */
	if (rc) {
		free(*rel);
		*rel = NULL;
	}
	return rc;
}

static int export_as_string(struct task_call *tc, struct err *e)
{
	struct secret_ref ref;
	struct secret s;
	unsigned char *pt;
	size_t n;
	int rc = parse_ref(tc, 0, &ref, e);

	if (rc || (rc = open_secret(tc, &ref, SECRET_TYPE_DATA, &s, &pt, &n, e)))
		return rc;
	if (!(tc->out = sensitive_string(tc, "the secret", (const char *)pt, n, e)))
		rc = -1;
	payload_free(pt, n);
	return rc;
}

static int export_credentials(struct task_call *tc, struct err *e)
{
	struct secret_ref ref;
	struct secret s;
	unsigned char *pt;
	char *user = NULL;
	size_t n, user_len = 0;
	struct str pw;
	json_t *ju = NULL, *jp = NULL;
	int rc = parse_ref(tc, 0, &ref, e);

	if (rc || (rc = open_secret(tc, &ref, SECRET_TYPE_USERNAME_PASSWORD, &s, &pt, &n, e)))
		return rc;
	rc = payload_userpass_decode(pt, n, &user, &user_len, &pw, e);
	if (rc == 0 &&
	    (!(ju = json_stringn(user, user_len)) || !(jp = sensitive_string(tc, "the password", pw.p, pw.len, e))))
		rc = ju ? -1 : err_set(e, ERR_INVALID, "crypto.%s: the username is not text", tc->method);
	if (rc == 0)
		tc->out = json_pack("{s:o, s:o}", "username", ju, "password", jp);
	else
		json_decref(ju);
	payload_free(user, user_len);
	payload_free(pt, n);
	return rc;
}

static int export_key_as_file(struct task_call *tc, struct err *e)
{
	struct secret_ref ref;
	struct secret s;
	unsigned char *pt;
	struct str pub, priv;
	char *pub_rel = NULL, *priv_rel = NULL;
	size_t n;
	int rc = parse_ref(tc, 0, &ref, e);

	if (rc || (rc = open_secret(tc, &ref, SECRET_TYPE_KEY_PAIR, &s, &pt, &n, e)))
		return rc;
	if ((rc = payload_keypair_decode(pt, n, &pub, &priv, e)) == 0 &&
	    (rc = write_export(tc, EXPORT_DIR, "private", ".key", priv.p, priv.len, &priv_rel, e)) == 0 &&
	    (rc = write_export(tc, EXPORT_DIR, "public", ".pub", pub.p, pub.len, &pub_rel, e)) == 0)
		tc->out = json_pack("{s:s, s:s}", "public", pub_rel, "private", priv_rel);
	free(pub_rel);
	free(priv_rel);
	payload_free(pt, n);
	return rc;
}

/* publicKey([org,] name): the public key of a key pair, as text.  Not secret (nothing is
 * masked), but read with the rules of the other exports: the initiator's READER access
 * and the secret's project restriction. */
static int public_key(struct task_call *tc, struct err *e)
{
	size_t n = json_array_size(tc->args);
	json_t *org = n == 2 ? json_array_get(tc->args, 0) : NULL, *name = json_array_get(tc->args, n - 1);
	struct secret s;
	unsigned char *pt;
	struct str pub, priv;
	size_t len;
	int rc;

	if (n != 1 && n != 2)
		return err_set(e, ERR_INVALID, "Method not found: crypto.publicKey(%zu arguments)", n);
	if (org && !json_is_null(org) && !json_is_string(org))
		return err_set(e, ERR_INVALID, "crypto.publicKey: the organization name must be a string");
	if (!json_is_string(name) || !json_string_length(name))
		return err_set(e, ERR_INVALID, "crypto.publicKey: the secret name must be a non-empty string");
	if ((rc = open_secret(tc, &(struct secret_ref){json_string_value(org), json_string_value(name), NULL},
			      SECRET_TYPE_KEY_PAIR, &s, &pt, &len, e)))
		return rc;
	if ((rc = payload_keypair_decode(pt, len, &pub, &priv, e)) == 0 && !(tc->out = json_stringn(pub.p, pub.len)))
		rc = err_set(e, ERR_INVALID, "crypto.publicKey: the public key of secret '%s' is not text", s.name);
	payload_free(pt, len);
	return rc;
}

static int export_as_file(struct task_call *tc, struct err *e)
{
	size_t nargs = json_array_size(tc->args);
	json_t *dir = nargs == 4 ? json_array_get(tc->args, 0) : NULL;
	struct secret_ref ref;
	struct secret s;
	unsigned char *pt;
	char *rel = NULL;
	size_t n;
	int rc;

	if (dir && !json_is_string(dir))
		return err_set(e, ERR_INVALID, "crypto.exportAsFile: the folder must be a string");
	if ((rc = parse_ref(tc, dir ? 1 : 0, &ref, e)) ||
	    (rc = open_secret(tc, &ref, SECRET_TYPE_DATA, &s, &pt, &n, e)))
		return rc;
	rc = write_export(tc, dir ? json_string_value(dir) : EXPORT_DIR, "file", ".bin", pt, n, &rel, e);
	if (rc == 0)
		tc->out = json_string(rel);
	free(rel);
	payload_free(pt, n);
	return rc;
}

static int project_value(struct task_call *tc, bool encrypt, struct err *e)
{
	const struct masterkey *mk = master_key(tc, e);
	const char *pid = tc->r->p.project_id;
	json_t *v = json_array_get(tc->args, 0);
	char *out;
	size_t n;
	int rc;

	if (!mk)
		return -1;
	if (json_array_size(tc->args) != 1 || !json_is_string(v))
		return err_set(e, ERR_INVALID, "crypto.%s takes one string", tc->method);
	if (!pid[0])
		return err_set(e, ERR_INVALID,
			       "crypto.%s: the process has no project (values are encrypted with the "
			       "project's key; start the process in a project)",
			       tc->method);
	if (encrypt) {
		if (!(out = projkey_encrypt(mk, pid, json_string_value(v), json_string_length(v), e)))
			return -1;
		tc->out = json_string(out);
		free(out);
		return 0;
	}
	if ((rc = projkey_decrypt(mk, pid, json_string_value(v), &out, &n, e)))
		return rc;
	if (!(tc->out = sensitive_string(tc, "the decrypted value", out, n, e)))
		rc = -1;
	payload_free(out, n + 1);
	return rc;
}

int server_task_crypto(struct task_call *tc, struct err *e)
{
	const char *m = tc->method;

	if (!m)
		return server_task_crypto_action(tc, e);
	if (!json_is_array(tc->args))
		return err_set(e, ERR_INVALID, "crypto: arguments must be a list");
	if (strcmp(m, "exportAsString") == 0)
		return export_as_string(tc, e);
	if (strcmp(m, "exportCredentials") == 0)
		return export_credentials(tc, e);
	if (strcmp(m, "exportKeyAsFile") == 0)
		return export_key_as_file(tc, e);
	if (strcmp(m, "exportAsFile") == 0)
		return export_as_file(tc, e);
	if (strcmp(m, "publicKey") == 0)
		return public_key(tc, e);
	if (strcmp(m, "encryptString") == 0 || strcmp(m, "decryptString") == 0)
		return project_value(tc, m[0] == 'e', e);
	return err_set(e, ERR_INVALID,
		       "Method not found: crypto.%s (exportAsString, exportCredentials, "
		       "exportKeyAsFile, exportAsFile, publicKey, encryptString, decryptString)",
		       m);
}
