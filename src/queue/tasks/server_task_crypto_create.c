/* The `crypto` task's `task:` form, Concord's CryptoTaskV2.execute: `action: create`
 * stores a new secret as the process's initiator (docs/flows.md "crypto").  The value
 * comes from `stringValue`, from files of the working directory (`data`, `keyPair`) or
 * from `usernamePassword`; it never appears in a message. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/limits.h"
#include "base/path.h"
#include "base/str.h"
#include "crypto/payload.h"
#include "queue/tasks/server_tasks.h"
#include "queue/tasks/task_secret.h"

/* A file of the working directory, named by a path relative to it (never outside). */
static int read_file(struct task_call *tc, const char *key, json_t *path, char **out, size_t *len, struct err *e)
{
	if (!json_is_string(path))
		return err_set(e, ERR_INVALID, "crypto: '%s' must be the path of a file of the working directory", key);
	if (!(*out = path_read_beneath(tc->workdir, json_string_value(path), limits.secret_bytes, len, e))) {
		err_prefix(e, "crypto: can't create the secret from '%s' (%.200s)", key, json_string_value(path));
		return -1;
	}
	return 0;
}

static int key_pair(struct task_call *tc, json_t *kp, unsigned char **pt, size_t *pt_len, struct err *e)
{
	char *pub = NULL, *priv = NULL;
	size_t pub_len = 0, priv_len = 0;
	int rc;

	if (!json_is_object(kp))
		return err_set(e, ERR_INVALID, "crypto: 'keyPair' must be a map with 'public' and 'private'");
	if ((rc = read_file(tc, "keyPair.public", json_object_get(kp, "public"), &pub, &pub_len, e)) == 0 &&
	    (rc = read_file(tc, "keyPair.private", json_object_get(kp, "private"), &priv, &priv_len, e)) == 0)
		rc = payload_keypair_encode((struct str){pub, pub_len}, (struct str){priv, priv_len}, pt, pt_len, e);
	free(pub);
	payload_free(priv, priv_len);
	return rc;
}

static int username_password(json_t *up, unsigned char **pt, size_t *pt_len, struct err *e)
{
	json_t *u = json_object_get(up, "username"), *p = json_object_get(up, "password");

	if (!json_is_object(up) || !json_is_string(u) || !json_is_string(p))
		return err_set(e, ERR_INVALID,
			       "crypto: 'usernamePassword' must be a map with a 'username' and a 'password'");
	return payload_userpass_encode((struct str){json_string_value(u), json_string_length(u)},
				       (struct str){json_string_value(p), json_string_length(p)}, pt, pt_len, e);
}

/* The value of the secret and its type, from the one value key of in. */
static int value(struct task_call *tc, json_t *in, enum secret_type *type, unsigned char **pt, size_t *pt_len,
		 struct err *e)
{
	json_t *data = json_object_get(in, "data"), *sv = json_object_get(in, "stringValue");
	json_t *kp = json_object_get(in, "keyPair"), *up = json_object_get(in, "usernamePassword");
	char *file = NULL;
	int rc;

	*pt = NULL;
	*pt_len = 0;
	*type = SECRET_TYPE_DATA;
	if (data && sv)
		return err_set(e, ERR_INVALID, "The 'data' parameter and 'stringValue' are mutually exclusive.");
	if (sv) {
		if (!json_is_string(sv))
			return err_set(e, ERR_INVALID, "crypto: 'stringValue' must be a string");
		if (json_string_length(sv) > limits.secret_bytes)
			return err_set(e, ERR_TOO_LARGE, "crypto: 'stringValue' exceeds the secret limit of %zu bytes",
				       limits.secret_bytes);
		if (!(*pt = malloc(json_string_length(sv) + 1)))
			return err_set(e, ERR_INTERNAL, "out of memory");
		memcpy(*pt, json_string_value(sv), json_string_length(sv));
		*pt_len = json_string_length(sv);
		return 0;
	}
	if (data) {
		if ((rc = read_file(tc, "data", data, &file, pt_len, e)) == 0)
			*pt = (unsigned char *)file;
		return rc;
	}
	if (kp) {
		*type = SECRET_TYPE_KEY_PAIR;
		return key_pair(tc, kp, pt, pt_len, e);
	}
	if (up) {
		*type = SECRET_TYPE_USERNAME_PASSWORD;
		return username_password(up, pt, pt_len, e);
	}
	return err_set(e, ERR_INVALID, "One of 'data', 'stringValue', 'keyPair' or 'usernamePassword' is required");
}

static int opt_string(json_t *in, const char *key, const char **out, struct err *e)
{
	json_t *v = json_object_get(in, key);

	*out = json_string_value(v);
	if (v && !json_is_null(v) && !json_is_string(v))
		return err_set(e, ERR_INVALID, "crypto: '%s' must be a string", key);
	return 0;
}

static int create(struct task_call *tc, json_t *in, struct err *e)
{
	struct task_secret_new n = {.projects = json_object_get(in, "project")};
	json_t *gen = json_object_get(in, "generatePassword");
	char id[UUID_STR_LEN], *password = NULL;
	unsigned char *pt = NULL;
	size_t pt_len = 0;
	int rc;

	if (opt_string(in, "org", &n.org, e) || opt_string(in, "secretName", &n.name, e) ||
	    opt_string(in, "storePassword", &n.store_password, e) || opt_string(in, "visibility", &n.visibility, e))
		return -ERR_INVALID;
	if (n.projects && !json_is_null(n.projects) && !json_is_string(n.projects))
		return err_set(e, ERR_INVALID, "crypto: 'project' must be a project name");
	n.generate_password =
	    json_is_true(gen) || (json_is_string(gen) && strcasecmp(json_string_value(gen), "true") == 0);
	if (!n.name)
		return err_set(e, ERR_INVALID, "crypto: 'secretName' is required");
	if ((rc = value(tc, in, &n.type, &pt, &pt_len, e)))
		return rc;
	if (task_call_dry_run(tc)) { /* Concord: nothing is created, the step succeeds */
		payload_free(pt, pt_len);
		tc->out = json_pack("{s:b}", "ok", 1);
		return 0;
	}
	n.pt = pt;
	n.pt_len = pt_len;
	rc = task_secret_create(tc, &n, id, &password, e);
	payload_free(pt, pt_len);
	if (rc)
		return rc;
	task_call_sensitive(tc, password);
	tc->out = json_pack("{s:b,s:s?,s:s}", "ok", 1, "password", password, "id", id);
	task_secret_password_free(password);
	return 0;
}

/* Concord trims the action and compares it without case. */
static bool is_action(const char *a, const char *want)
{
	size_t n;

	while (isspace((unsigned char)*a))
		a++;
	n = strlen(a);
	while (n && isspace((unsigned char)a[n - 1]))
		n--;
	return n == strlen(want) && strncasecmp(a, want, n) == 0;
}

int server_task_crypto_action(struct task_call *tc, struct err *e)
{
	const char *action = json_string_value(json_object_get(tc->args, "action"));

	if (!json_is_object(tc->args))
		return err_set(e, ERR_INVALID, "crypto: 'in' must be an object");
	if (!action)
		return err_set(e, ERR_INVALID, "crypto: 'action' is required (create)");
	if (!is_action(action, "create"))
		return err_set(e, ERR_INVALID, "Unknown action: '%.64s'. Available actions: [CREATE]", action);
	return create(tc, tc->args, e);
}
