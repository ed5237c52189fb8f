/* Creating secrets from multipart/form-data: the parts of POST /api/v1/org/{org}/secret
 * and the value parts shared with the v2 update. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "api/secrets.h"
#include "auth/entity_policy.h"
#include "base/datetime.h"
#include "base/limits.h"
#include "base/names.h"
#include "base/str.h"
#include "crypto/keypool.h"
#include "crypto/payload.h"
#include "crypto/storepass.h"

/* RSA pairs come from the pool generated ahead of demand (crypto/keypool.h).  When it is
 * empty the pair is generated here, on the request's thread: CPU-bound (RSA 4096: about a
 * second), so at most keygen_limit() such generations run at once, keeping most HTTP
 * threads free for other requests; beyond that a create gets 503 and can be retried. */
static atomic_int keygens_running;

static int keygen_limit(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 2 ? 2 : (int)n;
}

static int generate_pair(struct api_call *c, const struct multipart *mp, struct keypair *kp)
{
	char *kt = secrets_text(c, mp, "keyType");
	enum keypair_type t = KEYPAIR_RSA;
	int rc;

	if (kt && keypair_type_parse(kt, &t, &c->err))
		return -ERR_INVALID;
	if (t == KEYPAIR_RSA && keypool_take(kp) == 0)
		return 0;
	if (atomic_fetch_add(&keygens_running, 1) >= keygen_limit()) {
		atomic_fetch_sub(&keygens_running, 1);
		return api_fail(c, ERR_UNAVAILABLE,
				"Too many key pairs are being generated at the moment; retry in a few seconds");
	}
	rc = keypair_generate(t, kp, &c->err);
	atomic_fetch_sub(&keygens_running, 1);
	return rc;
}

static int key_pair_value(struct api_call *c, const struct multipart *mp, unsigned char **pt, size_t *pt_len,
			  char **public_key)
{
	const struct multipart_part *pub = multipart_find(mp, "public"), *priv = multipart_find(mp, "private");
	struct keypair kp = {0};
	int rc;

	if (pub && !priv)
		return api_fail(c, ERR_INVALID, "'private' is required when 'public' is given");
	if (!pub && priv)
		return api_fail(c, ERR_INVALID, "'public' is required when 'private' is given");
	if (pub) {
		if ((rc = payload_keypair_encode(pub->data, priv->data, pt, pt_len, &c->err)))
			return rc;
		*public_key = strndup(pub->data.p, pub->data.len);
		if (!*public_key) {
			payload_free(*pt, *pt_len);
			*pt = NULL;
			return api_fail(c, ERR_INTERNAL, "out of memory");
		}
		return 0;
	}
	if ((rc = generate_pair(c, mp, &kp)))
		return rc;
	rc = payload_keypair_encode((struct str){kp.public_key, kp.public_len},
				    (struct str){kp.private_key, kp.private_len}, pt, pt_len, &c->err);
	if (rc == 0) {
		*public_key = strdup(kp.public_key);
		if (!*public_key) {
			payload_free(*pt, *pt_len);
			*pt = NULL;
			rc = api_fail(c, ERR_INTERNAL, "out of memory");
		}
	}
	keypair_cleanup(&kp);
	return rc;
}

static int username_password_value(struct api_call *c, const struct multipart *mp, unsigned char **pt, size_t *pt_len)
{
	struct str user, pass;

	if (!multipart_text(mp, "username", &user))
		return api_fail(c, ERR_INVALID, "'username' is required for a secret of type username_password");
	if (!multipart_text(mp, "password", &pass))
		return api_fail(c, ERR_INVALID, "'password' is required for a secret of type username_password");
	if (user.len + pass.len > limits.secret_bytes)
		return api_fail(c, ERR_TOO_LARGE, "'username' and 'password' exceed the secret limit of %zu bytes",
				limits.secret_bytes);
	return payload_userpass_encode(user, pass, pt, pt_len, &c->err);
}

static int data_value(struct api_call *c, const struct multipart *mp, unsigned char **pt, size_t *pt_len)
{
	const struct multipart_part *d = multipart_find(mp, "data");

	if (!d)
		return api_fail(c, ERR_INVALID, "'data' is required for a secret of type data");
	if (d->data.len > limits.secret_bytes)
		return api_fail(c, ERR_TOO_LARGE, "'data' exceeds the secret limit of %zu bytes (got %zu)",
				limits.secret_bytes, d->data.len);
	*pt = malloc(d->data.len ? d->data.len : 1);
	if (!*pt)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	if (d->data.len)
		memcpy(*pt, d->data.p, d->data.len);
	*pt_len = d->data.len;
	return 0;
}

int secrets_form_value(struct api_call *c, const struct multipart *mp, enum secret_type type, unsigned char **pt,
		       size_t *pt_len, char **public_key)
{
	*pt = NULL;
	*pt_len = 0;
	*public_key = NULL;
	switch (type) {
	case SECRET_TYPE_KEY_PAIR:
		return key_pair_value(c, mp, pt, pt_len, public_key);
	case SECRET_TYPE_USERNAME_PASSWORD:
		return username_password_value(c, mp, pt, pt_len);
	case SECRET_TYPE_DATA:
		return data_value(c, mp, pt, pt_len);
	}
	return api_fail(c, ERR_INVALID, "Unsupported secret type");
}

static int parse_type(struct api_call *c, const struct multipart *mp, enum secret_type *t)
{
	struct str v;

	if (!multipart_text(mp, "type", &v))
		return api_fail(c, ERR_INVALID, "'type' is required (key_pair, username_password or data)");
	if (!secret_type_parse(v.p, v.len, t))
		return api_fail(c, ERR_INVALID,
				"Unsupported secret type: %.*s (expected key_pair, username_password or data)",
				(int)(v.len > 64 ? 64 : v.len), v.p);
	return 0;
}

static int parse_name(struct api_call *c, const struct multipart *mp, const struct org *o, char *out, size_t cap)
{
	struct secret existing;
	struct err ignored;
	char *name = secrets_text(c, mp, "name");

	if (!name)
		return api_fail(c, ERR_INVALID, "'name' is required");
	if (name_check(name, "secret", NAME_PLAIN, &c->err))
		return -ERR_INVALID;
	if (store_secret_find(c->db, o->id, name, &existing, &ignored) == 0)
		return api_fail(c, ERR_CONFLICT, "Secret already exists: %s", name);
	if (str_fmt(out, cap, "%s", name))
		return api_fail(c, ERR_INVALID, "secret name is longer than %zu characters", cap - 1);
	return 0;
}

int secrets_form_visibility(struct api_call *c, const struct multipart *mp, bool *is_public)
{
	char *v = secrets_text(c, mp, "visibility");

	if (!v)
		return 0;
	if (strcmp(v, "PUBLIC") != 0 && strcmp(v, "PRIVATE") != 0)
		return api_fail(c, ERR_INVALID, "Invalid visibility value: %.32s (expected PUBLIC or PRIVATE)", v);
	*is_public = strcmp(v, "PUBLIC") == 0;
	return 0;
}

int secrets_form_projects(struct api_call *c, const struct multipart *mp, const char *org_id,
			  struct secret_projects_req *l)
{
	static const struct {
		const char *part;
		bool by_id;
	} sources[] = {{"projectIds", true},
		       {"projectNames", false},
		       {"projects", false},
		       {"projectId", true},
		       {"project", false}};
	int rc;

	memset(l, 0, sizeof *l);
	for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
		struct str v, item;
		if (!multipart_text(mp, sources[i].part, &v) || !str_trim(v).len)
			continue;
		while (v.len) {
			const char *comma = memchr(v.p, ',', v.len);
			item = (struct str){v.p, comma ? (size_t)(comma - v.p) : v.len};
			if ((rc = secrets_projects_add(c, org_id, item, sources[i].by_id, l)))
				return rc;
			v.p += item.len + (comma ? 1 : 0);
			v.len -= item.len + (comma ? 1 : 0);
		}
		return 0;
	}
	return 0;
}

int secrets_form_known_parts(struct api_call *c, const struct multipart *mp, const char *const *known)
{
	for (size_t i = 0; i < mp->n_parts; i++) {
		const struct str *n = &mp->parts[i].name;
		char list[512] = "";
		size_t at = 0;
		bool ok = false;
		for (const char *const *k = known; *k && !ok; k++)
			ok = strlen(*k) == n->len && strncasecmp(*k, n->p, n->len) == 0; /* as secrets_text matches */
		if (ok)
			continue;
		for (const char *const *k = known; *k; k++)
			at += (size_t)snprintf(list + at, at < sizeof list ? sizeof list - at : 0, "%s%s",
					       k == known ? "" : ", ", *k);
		return api_fail(c, ERR_INVALID, "Unknown form field '%.*s': expected %s",
				(int)(n->len > 64 ? 64 : n->len), n->p, list);
	}
	return 0;
}

/* storePassword (checked against the policy) or, with generatePassword=true, a new one
 * written to generated.  *password is NULL for a server-key secret. */
static int parse_password(struct api_call *c, const struct multipart *mp, char **password, char *generated)
{
	*password = secrets_text(c, mp, "storePassword");
	if (*password)
		return storepass_check(*password, c->who.user.username, &c->err);
	if (multipart_bool(mp, "generatePassword")) {
		storepass_generate(generated);
		*password = generated;
	}
	return 0;
}

static int parse_create(struct api_call *c, const struct multipart *mp, const struct org *o, struct secret *s,
			struct secret_projects_req *projects, char **password, char *generated)
{
	char *store_type = secrets_text(c, mp, "storeType");
	int rc;

	if ((rc = parse_type(c, mp, &s->type)))
		return rc;
	if (store_type && strcasecmp(store_type, "concord") != 0)
		return api_fail(c, ERR_INVALID, "Secret store of type %.32s is not available!", store_type);
	if ((rc = parse_name(c, mp, o, s->name, sizeof s->name)) || (rc = parse_password(c, mp, password, generated)))
		return rc;
	s->is_public = true;
	if ((rc = secrets_form_visibility(c, mp, &s->is_public)) ||
	    (rc = secrets_form_projects(c, mp, o->id, projects)))
		return rc;
	s->n_projects = projects->n;
	uuid_v4(s->id);
	memcpy(s->org_id, o->id, sizeof s->org_id);
	if (str_fmt(s->org_name, sizeof s->org_name, "%s", o->name))
		return api_fail(c, ERR_INTERNAL, "organization name too long: %s", o->name);
	str_set_lit(s->store_type, "concord");
	memcpy(s->owner_id, c->who.user.id, sizeof s->owner_id);
	s->password_protected = *password != NULL;
	s->created_at = dt_now_ms();
	return 0;
}

int secrets_create(struct api_call *c)
{
	struct multipart mp = {0};
	struct org o;
	struct secret s = {0};
	struct secret_projects_req projects;
	char generated[STOREPASS_GEN_LEN + 1] = "", *password = NULL, *public_key = NULL;
	unsigned char *pt = NULL, *env = NULL;
	size_t pt_len = 0, env_len = 0;
	json_t *v;
	int rc;

	static const char *const known[] = {
	    "name",	  "type",	  "visibility", "storeType", "storePassword", "generatePassword",
	    "projectIds", "projectNames", "projects",	"projectId", "project",	      "data",
	    "username",	  "password",	  "public",	"private",   "keyType",	      NULL};

	if ((rc = secrets_org(c, &o)) || (rc = secrets_multipart(c, &mp)))
		return rc;
	rc = secrets_form_known_parts(c, &mp, known);
	if (rc == 0)
		rc = parse_create(c, &mp, &o, &s, &projects, &password, generated);
	if (rc == 0)
		rc = secrets_form_value(c, &mp, s.type, &pt, &pt_len, &public_key);
	if (rc == 0)
		rc = entity_policy_secret(c->db, &c->who, &s, projects.n ? projects.items[0].id : NULL, false,
					  &c->err);
	if (rc == 0)
		rc = secrets_seal(c, o.id, s.name, password, pt, pt_len, &env, &env_len);
	if (rc == 0)
		rc = store_secret_insert(c->db, &s, projects.items, projects.n, env, env_len, &c->err);
	if (rc == 0) {
		api_audit_note(c, "secretName", s.name);
		v = json_pack("{s:s,s:s,s:b}", "id", s.id, "result", "CREATED", "ok", 1);
		json_t *pk = public_key ? json_string(public_key) : NULL; /* NULL too when not UTF-8 */
		if (pk)
			json_object_set_new(v, "publicKey", pk);
		if (generated[0])
			json_object_set_new(v, "password", json_string(generated));
		rc = api_reply(c, v);
	}
	payload_free(pt, pt_len);
	free(env);
	free(public_key);
	if (password != generated)
		secrets_wipe_text(password);
	sodium_memzero(generated, sizeof generated);
	multipart_cleanup(&mp);
	return rc;
}
