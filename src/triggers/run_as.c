/* Who a cron trigger's process runs as (docs/security.md "Trigger processes"): the cron user,
 * or with `runAs: {withSecret: <name>}` the owner of the API key held in that secret, as
 * Concord does.  The secret must be a single value (DATA) restricted to the trigger's own
 * project and sealed by the server key: a key given to one project's triggers serves no
 * other project. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/authn.h"
#include "base/datetime.h"
#include "crypto/seal.h"
#include "store/apikeys.h"
#include "store/projects.h"
#include "store/secrets.h"
#include "triggers/internal.h"

/* The secret of the trigger's runAs, checked for its project and type. */
static int find_secret(struct store_conn *c, const struct trigger *tr, const char *name, struct secret *s,
		       struct err *e)
{
	struct project p;
	bool ok;
	int rc;

	if ((rc = store_project_get(c, tr->project_id, &p, e)) || (rc = store_secret_find(c, p.org_id, name, s, e)) ||
	    (rc = store_secret_project_allowed(c, s, tr->project_id, &ok, e)))
		return rc;
	if (!s->n_projects || !ok)
		return err_set(e, ERR_FORBIDDEN,
			       "runAs: secret '%s' must be restricted to the trigger's project '%s' to name its "
			       "user",
			       name, p.name);
	if (s->type != SECRET_TYPE_DATA)
		return err_set(e, ERR_INVALID,
			       "runAs: secret '%s' is %s, expected a single value (DATA) holding an API key", name,
			       secret_type_name(s->type));
	if (s->password_protected)
		return err_set(e, ERR_INVALID,
			       "runAs: secret '%s' is protected by a store password: the server cannot open it", name);
	return 0;
}

/* The user whose unexpired API key is the text pt (wiped by the caller). */
static int key_owner(struct store_conn *c, const char *name, const char *pt, struct user *u, struct err *e)
{
	uint8_t hash[APIKEY_HASH_LEN];
	struct apikey k;
	struct err ignored;

	if (authn_apikey_hash(pt, hash, &ignored) || store_apikey_find_user(c, hash, dt_now_ms(), &k, u, &ignored))
		return err_set(e, ERR_INVALID, "runAs: secret '%s' does not hold a valid API key", name);
	sodium_memzero(hash, sizeof hash);
	/* A process runs with its initiator's full rights: a key limited to some scopes must not
	 * become a way around them (docs/security.md "Scoped API keys"). */
	if (k.scopes[0])
		return err_set(e, ERR_INVALID,
			       "runAs: secret '%s' holds an API key with scopes: runAs needs a key without", name);
	if (u->disabled)
		return err_set(e, ERR_FORBIDDEN, "runAs: user '%s' (%s) is disabled", u->username, u->id);
	return 0;
}

int triggers_run_as(struct triggers *t, struct store_conn *c, const struct trigger *tr, struct user *u, struct err *e)
{
	const char *name = json_string_value(json_object_get(json_object_get(tr->cfg, "runAs"), "withSecret"));
	struct secret s;
	unsigned char *env = NULL, *pt = NULL;
	size_t env_len = 0, pt_len = 0;
	int rc;

	if (!name)
		return store_user_get(c, CRON_USER_ID, u, e);
	if (!t->cfg.master_key)
		return err_set(e, ERR_UNAVAILABLE, "runAs: secrets are not available on this server");
	if ((rc = find_secret(c, tr, name, &s, e)) || (rc = store_secret_envelope_of(c, &s, &env, &env_len, e)))
		goto out;
	if ((rc = seal_decrypt(t->cfg.master_key, NULL, &(struct seal_binding){s.org_id, s.name}, env, env_len, &pt,
			       &pt_len, e))) {
		err_prefix(e, "runAs: secret '%s'", name);
		goto out;
	}
	rc = memchr(pt, 0, pt_len) ? err_set(e, ERR_INVALID, "runAs: secret '%s' does not hold an API key", name)
				   : key_owner(c, name, (const char *)pt, u, e);
out:
	if (pt)
		seal_plain_free(pt, pt_len);
	free(env);
	return rc;
}
