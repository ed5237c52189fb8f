/* The provider's signing keys (JWKS), kept and fetched again on rotation
 * (oidc_discovery.h oidc_keys_verify). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "auth/jwt.h"
#include "auth/oidc.h"
#include "auth/oidc_discovery.h"
#include "auth/oidc_http.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/rs256.h"
#include "base/str.h"

#define KEYS_MAX 32

struct jwk {
	char kid[256];
	unsigned char *n, *e;
	size_t n_len, e_len;
};

static pthread_mutex_t keys_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jwk keys[KEYS_MAX];
static size_t n_keys;
static bool have_keys;
static int64_t fetched_ms;

static void keys_clear(struct jwk *k, size_t *n)
{
	for (size_t i = 0; i < *n; i++) {
		free(k[i].n);
		free(k[i].e);
	}
	memset(k, 0, sizeof *k * KEYS_MAX);
	*n = 0;
}

void oidc_keys_cleanup(void)
{
	pthread_mutex_lock(&keys_lock);
	keys_clear(keys, &n_keys);
	have_keys = false;
	pthread_mutex_unlock(&keys_lock);
}

/* One RSA signing key of a JWKS into k: false for another kind (EC, encryption) or a bad one. */
static bool read_key(json_t *v, struct jwk *k)
{
	const char *kty = json_string_value(json_object_get(v, "kty")), *use = json_string_value(json_object_get(v, "use"));
	const char *alg = json_string_value(json_object_get(v, "alg")), *kid = json_string_value(json_object_get(v, "kid"));
	const char *n = json_string_value(json_object_get(v, "n")), *e = json_string_value(json_object_get(v, "e"));

	memset(k, 0, sizeof *k);
	if (!kty || strcmp(kty, "RSA") != 0 || (use && strcmp(use, "sig") != 0) || (alg && strcmp(alg, "RS256") != 0) ||
	    !n || !e || str_fmt(k->kid, sizeof k->kid, "%s", kid ? kid : ""))
		return false;
	k->n = jwt_b64url_decode(n, strlen(n), &k->n_len);
	k->e = jwt_b64url_decode(e, strlen(e), &k->e_len);
	if (k->n && k->e && k->n_len && k->e_len)
		return true;
	free(k->n);
	free(k->e);
	return false;
}

/* Replaces the kept keys with the provider's.  Under keys_lock. */
static int fetch_keys(const struct oidc_discovery *d, struct err *e)
{
	struct jwk fresh[KEYS_MAX];
	size_t n = 0, i;
	json_t *v = NULL, *item;
	long status;
	int rc;

	fetched_ms = dt_now_ms();
	if ((rc = oidc_http("keys (jwks_uri)", d->jwks, NULL, NULL, oidc_settings.timeout_ms, &status, &v, e)))
		return rc;
	if (status != 200 || !json_is_array(json_object_get(v, "keys"))) {
		json_decref(v);
		return err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: its keys %s answered %ld%s", d->jwks, status,
			       status == 200 ? " without a 'keys' array" : "");
	}
	json_array_foreach(json_object_get(v, "keys"), i, item)
	{
		if (n < KEYS_MAX && read_key(item, &fresh[n]))
			n++;
	}
	json_decref(v);
	keys_clear(keys, &n_keys);
	memcpy(keys, fresh, n * sizeof *fresh);
	n_keys = n;
	have_keys = true;
	LOG_I("OIDC: read %zu signing keys from %s", n, d->jwks);
	return 0;
}

/* The key of kid (NULL: the only one); NULL when none. */
static const struct jwk *find_key(const char *kid)
{
	if (!kid)
		return n_keys == 1 ? &keys[0] : NULL;
	for (size_t i = 0; i < n_keys; i++)
		if (strcmp(keys[i].kid, kid) == 0)
			return &keys[i];
	return NULL;
}

int oidc_keys_verify(const struct oidc_discovery *d, const char *token, const struct jwt *t, const char *kid,
		     struct err *e)
{
	const struct jwk *k;
	int rc = 0;

	pthread_mutex_lock(&keys_lock);
	if (!have_keys && fetched_ms && dt_now_ms() - fetched_ms < OIDC_RETRY_MS)
		rc = err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: its keys (%s) could not be fetched a moment ago",
			     d->jwks);
	else if (!have_keys)
		rc = fetch_keys(d, e);
	k = rc ? NULL : find_key(kid);
	/* A key id not seen yet: the provider may have rotated its keys.  Asked again at most
	 * every --oidc-jwks-refetch, so that made-up key ids cannot make us hammer it. */
	if (rc == 0 && !k && dt_now_ms() - fetched_ms >= oidc_settings.jwks_refetch_s * 1000 &&
	    (rc = fetch_keys(d, e)) == 0)
		k = find_key(kid);
	if (rc == 0 && !k)
		rc = err_set(e, ERR_UNAUTH, "the token is signed with a key the OIDC provider does not publish (kid '%s')",
			     kid ? kid : "");
	if (rc == 0)
		rc = rs256_verify(k->n, k->n_len, k->e, k->e_len, token, t->signed_len, t->sig, t->sig_len, e);
	pthread_mutex_unlock(&keys_lock);
	if (rc == -ERR_INVALID)
		rc = err_set(e, ERR_UNAUTH, "the OIDC provider's key '%s' is not a usable RSA key", kid ? kid : "");
	return rc;
}
