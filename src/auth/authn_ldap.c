#include "auth/authn_ldap.h"

#include <stdio.h>
#include <string.h>

#include "auth/ldap_realm.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "base/uuid.h"
#include "store/ldap_groups.h"

static int create_user(struct store_conn *c, const char *username, const struct ldap_identity *id, struct user *u,
		       struct err *e)
{
	int rc;

	memset(u, 0, sizeof *u);
	uuid_v4(u->id);
	if (str_fmt(u->username, sizeof u->username, "%s", username))
		return err_set(e, ERR_UNAUTH, "invalid username or password");
	str_fmt_cut(u->type, sizeof u->type, "LDAP");
	str_fmt_cut(u->display_name, sizeof u->display_name, "%s", id->display_name);
	str_fmt_cut(u->email, sizeof u->email, "%s", id->email);
	rc = store_user_insert_joining_default(c, u, NULL, e);
	/* Another request (or node) created the user at the same time: theirs stands. */
	if (rc == -ERR_CONFLICT)
		rc = store_user_find(c, username, NULL, u, e);
	if (rc == 0)
		LOG_I("LDAP: created user %s (id %s) on first login", u->username, u->id);
	return rc;
}

/* The directory's display name and email, when they changed. */
static int refresh_user(struct store_conn *c, struct user *u, const struct ldap_identity *id, struct err *e)
{
	if (strcmp(u->display_name, id->display_name) == 0 && strcmp(u->email, id->email) == 0)
		return 0;
	str_fmt_cut(u->display_name, sizeof u->display_name, "%s", id->display_name);
	str_fmt_cut(u->email, sizeof u->email, "%s", id->email);
	return store_user_update(c, u, NULL, e);
}

int authn_ldap(struct store_conn *c, const char *username, const char *password, struct user *u, struct err *e)
{
	struct ldap_identity id;
	struct err lookup;
	int rc;

	bool known = store_user_find(c, username, NULL, u, &lookup) == 0, with_groups;
	int64_t synced, now = dt_now_ms();

	if (!known && lookup.code != ERR_NOT_FOUND)
		return err_set(e, lookup.code, "%s", lookup.msg);
	/* Only LDAP records answer to the directory: a local user without a password (admin
	 * started without ACCORD_ADMIN_PASSWORD, the cron user) is never a directory entry's. */
	if (known && strcmp(u->type, "LDAP") != 0)
		return err_set(e, ERR_UNAUTH, "invalid username or password");
	with_groups = !known || store_user_ldap_synced_at(c, u->id, &synced, &lookup) != 0 ||
		      now - synced >= ldap_settings.groups_cache_s * 1000;
	if ((rc = ldap_realm_login(username, password, with_groups, &id, e)))
		return rc;
	rc = known ? refresh_user(c, u, &id, e) : create_user(c, username, &id, u, e);
	if (rc == 0 && with_groups)
		rc = store_user_ldap_groups_set(c, u->id, id.groups, id.n_groups, now, e);
	ldap_identity_cleanup(&id);
	return rc;
}
