/* A provider's token verified: signature, issuer, audience, times, nonce (oidc.h oidc_verify). */
#include <string.h>

#include <sodium.h>

#include "auth/jwt.h"
#include "auth/oidc.h"
#include "auth/oidc_discovery.h"
#include "base/datetime.h"

static int bad(struct err *e, const char *why)
{
	return err_set(e, ERR_UNAUTH, "invalid OIDC token: %s", why);
}

static bool aud_has(json_t *aud, const char *id)
{
	json_t *item;
	size_t i;

	if (json_is_string(aud))
		return strcmp(json_string_value(aud), id) == 0;
	json_array_foreach(aud, i, item)
	{
		if (json_is_string(item) && strcmp(json_string_value(item), id) == 0)
			return true;
	}
	return false;
}

/* A NumericDate claim in seconds; false when absent or not a number. */
static bool seconds(json_t *claims, const char *key, int64_t *out)
{
	json_t *v = json_object_get(claims, key);

	if (!json_is_number(v))
		return false;
	*out = (int64_t)json_number_value(v);
	return true;
}

static int check_times(json_t *claims, struct err *e)
{
	int64_t now = dt_now_ms() / 1000, leeway = oidc_settings.leeway_s, exp, iat, nbf;

	if (!seconds(claims, "exp", &exp))
		return bad(e, "no 'exp'");
	if (exp + leeway <= now)
		return bad(e, "it has expired");
	if (!seconds(claims, "iat", &iat))
		return bad(e, "no 'iat'");
	if (iat - leeway > now)
		return bad(e, "it was issued in the future ('iat')");
	if (seconds(claims, "nbf", &nbf) && nbf - leeway > now)
		return bad(e, "it is not valid yet ('nbf')");
	return 0;
}

static int check_claims(const struct oidc_discovery *d, json_t *claims, const char *nonce, struct err *e)
{
	const char *iss = json_string_value(json_object_get(claims, "iss"));
	const char *azp = json_string_value(json_object_get(claims, "azp"));
	const char *got = json_string_value(json_object_get(claims, "nonce"));
	json_t *aud = json_object_get(claims, "aud");

	if (!iss || strcmp(iss, d->issuer) != 0)
		return bad(e, "its issuer ('iss') is not the provider's");
	if (!aud_has(aud, oidc_settings.client_id))
		return bad(e, "its audience ('aud') is not this server's client id");
	if (json_is_array(aud) && json_array_size(aud) > 1 && (!azp || strcmp(azp, oidc_settings.client_id) != 0))
		return bad(e, "it has several audiences and its 'azp' is not this server's client id");
	if (check_times(claims, e))
		return -ERR_UNAUTH;
	if (nonce && (!got || strlen(got) != strlen(nonce) || sodium_memcmp(got, nonce, strlen(nonce)) != 0))
		return bad(e, "its 'nonce' is not the one of this login");
	return 0;
}

int oidc_verify(const char *token, const char *nonce, json_t **claims, struct err *e)
{
	struct oidc_discovery d;
	struct jwt t;
	const char *alg, *kid;
	int rc;

	*claims = NULL;
	if ((rc = jwt_parse(token, &t, e)))
		return rc;
	alg = json_string_value(json_object_get(t.header, "alg"));
	kid = json_string_value(json_object_get(t.header, "kid"));
	/* Only RS256: never "none", never an HMAC keyed with something public. */
	if (!alg || strcmp(alg, "RS256") != 0)
		rc = bad(e, "its algorithm is not RS256");
	else if ((rc = oidc_discovery_get(&d, e)) == 0 && (rc = oidc_keys_verify(&d, token, &t, kid, e)) == 0 &&
		 (rc = check_claims(&d, t.claims, nonce, e)) == 0)
		*claims = json_incref(t.claims);
	jwt_cleanup(&t);
	return rc;
}
