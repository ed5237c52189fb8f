#include "auth/ldap_realm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <sodium.h>

#include "base/ldap_api.h"
#include "base/ldap_filter.h"
#include "auth/ldap_pool.h"
#include "base/log.h"
#include "base/str.h"

#define FILTER_MAX 2048
#define MAX_GROUPS 256
#define MAX_GROUP_DEPTH 8
#define SYSTEM_CA_FILE "/etc/ssl/certs/ca-certificates.crt"

struct ldap_settings ldap_settings;

static char *system_password;

bool ldap_realm_enabled(void)
{
	return ldap_settings.url && ldap_settings.url[0];
}

static bool has_placeholder(const char *filter)
{
	return filter && strstr(filter, "{0}") != NULL;
}

static int probe(struct err *e);

int ldap_realm_init(struct err *e)
{
	const char *pw = getenv("ACCORD_LDAP_SYSTEM_PASSWORD");

	if (!ldap_realm_enabled())
		return 0;
	if (strncmp(ldap_settings.url, "ldap://", 7) != 0 && strncmp(ldap_settings.url, "ldaps://", 8) != 0)
		return err_set(e, ERR_INVALID, "--ldap-url must start with ldap:// or ldaps://, got '%s'",
			       ldap_settings.url);
	if (!ldap_settings.search_base || !ldap_settings.search_base[0])
		return err_set(e, ERR_INVALID, "--ldap-url needs --ldap-search-base (the DN under which users are)");
	if (!has_placeholder(ldap_settings.principal_filter))
		return err_set(e, ERR_INVALID, "--ldap-principal-search-filter must contain {0} (the username), got '%s'",
			       ldap_settings.principal_filter ? ldap_settings.principal_filter : "");
	if (!has_placeholder(ldap_settings.group_filter))
		return err_set(e, ERR_INVALID, "--ldap-group-search-filter must contain {0} (a member's DN), got '%s'",
			       ldap_settings.group_filter ? ldap_settings.group_filter : "");
	if (ldap_settings.ca_file && ldap_settings.ca_file[0] && access(ldap_settings.ca_file, R_OK) != 0)
		return err_set(e, ERR_INVALID, "--ldap-ca-file %s cannot be read", ldap_settings.ca_file);
	if (ldap_settings.starttls && strncmp(ldap_settings.url, "ldaps://", 8) == 0)
		return err_set(e, ERR_INVALID, "--ldap-starttls applies to ldap:// URLs; ldaps:// is TLS already");
	if (ldap_settings.system_user && ldap_settings.system_user[0] && (!pw || !pw[0]))
		return err_set(e, ERR_INVALID,
			       "--ldap-system-user needs its password in the environment variable "
			       "ACCORD_LDAP_SYSTEM_PASSWORD");
	/* libldap would otherwise read /etc/ldap/ldap.conf and ~/.ldaprc, which could turn
	 * certificate checks off behind the settings' back. */
	setenv("LDAPNOINIT", "1", 1);
	if (pw && !(system_password = strdup(pw)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	/* No child of the server (runner, fetch child, tool) inherits it. */
	unsetenv("ACCORD_LDAP_SYSTEM_PASSWORD");
	return probe(e);
}

static void free_groups(char **groups, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(groups[i]);
	free(groups);
}

void ldap_realm_cleanup(void)
{
	if (ldapi.unbind_ext_s)
		ldap_pool_clear();
	if (system_password) {
		sodium_memzero(system_password, strlen(system_password));
		free(system_password);
		system_password = NULL;
	}
}

/* pattern with each {0} replaced by value escaped. */
static int filter_of(const char *pattern, const char *value, char *out, size_t cap)
{
	char esc[FILTER_MAX];
	size_t o = 0;

	if (ldap_filter_escape(value, esc, sizeof esc))
		return -1;
	for (const char *p = pattern; *p;) {
		const char *piece = p;
		size_t len = 1;
		if (strncmp(p, "{0}", 3) == 0)
			piece = esc, len = strlen(esc), p += 3;
		else
			p++;
		if (o + len >= cap)
			return -1;
		memcpy(out + o, piece, len);
		o += len;
	}
	out[o] = '\0';
	return 0;
}

/* Codes that say the directory could not be asked, not that it said no. */
static bool is_down(int rc)
{
	return rc == LDAP_SERVER_DOWN || rc == LDAP_TIMEOUT || rc == LDAP_CONNECT_ERROR || rc == LDAP_UNAVAILABLE ||
	       rc == LDAP_BUSY || rc == LDAP_TIMELIMIT_EXCEEDED || rc == LDAP_LOCAL_ERROR || rc == LDAP_NO_MEMORY;
}

static int down(const char *what, int rc, struct err *e)
{
	LOG_W("LDAP: %s: %s", what, ldapi.err2string(rc));
	return err_set(e, ERR_UNAVAILABLE, "LDAP directory unavailable: %s: %s", what, ldapi.err2string(rc));
}

/* --ldap-ca-file, or the system's CA bundle (libldap's own default comes from ldap.conf,
 * which LDAPNOINIT keeps unread); NULL when neither exists. */
static const char *ca_file(void)
{
	if (ldap_settings.ca_file && ldap_settings.ca_file[0])
		return ldap_settings.ca_file;
	return access(SYSTEM_CA_FILE, R_OK) == 0 ? SYSTEM_CA_FILE : NULL;
}

static int set_options(LDAP *ld, struct err *e)
{
	int v3 = LDAP_VERSION3, demand = LDAP_OPT_X_TLS_DEMAND, zero = 0;
	const char *ca;
	struct timeval tv = {(time_t)(ldap_settings.timeout_ms / 1000), (suseconds_t)(ldap_settings.timeout_ms % 1000) * 1000};
	int rc;

	if ((rc = ldapi.set_option(ld, LDAP_OPT_PROTOCOL_VERSION, &v3)) ||
	    (rc = ldapi.set_option(ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF)) ||
	    (rc = ldapi.set_option(ld, LDAP_OPT_NETWORK_TIMEOUT, &tv)) ||
	    (rc = ldapi.set_option(ld, LDAP_OPT_TIMEOUT, &tv)) ||
	    (rc = ldapi.set_option(ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &demand)))
		return down("setting connection options", rc, e);
	if ((ca = ca_file()) && (rc = ldapi.set_option(ld, LDAP_OPT_X_TLS_CACERTFILE, ca)))
		return down("setting --ldap-ca-file", rc, e);
	if ((rc = ldapi.set_option(ld, LDAP_OPT_X_TLS_NEWCTX, &zero)))
		return down("creating the TLS context", rc, e);
	return 0;
}

static int simple_bind(LDAP *ld, const char *dn, const char *password)
{
	struct berval cred = {.bv_len = password ? strlen(password) : 0, .bv_val = (char *)(password ? password : "")};

	return ldapi.sasl_bind_s(ld, dn ? dn : "", LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
}

/* A connection bound as the service account (anonymous without one). */
static int bind_system(LDAP *ld, struct err *e)
{
	int rc = simple_bind(ld, ldap_settings.system_user, system_password);

	if (rc == LDAP_SUCCESS)
		return 0;
	if (is_down(rc))
		return down("connecting", rc, e);
	LOG_E("LDAP: the directory refused the service account --ldap-system-user: %s", ldapi.err2string(rc));
	return err_set(e, ERR_UNAVAILABLE, "LDAP directory unavailable: it refused the service account");
}

/* A connection (TLS set up as configured), not bound yet. */
static int open_conn(LDAP **out, struct err *e)
{
	LDAP *ld = NULL;
	int rc;

	*out = NULL;
	if (ldap_api_load(e))
		return -ERR_UNAVAILABLE;
	if ((rc = ldapi.initialize(&ld, ldap_settings.url)) != LDAP_SUCCESS)
		return down("--ldap-url", rc, e);
	if (set_options(ld, e))
		goto fail;
	if (ldap_settings.starttls && (rc = ldapi.start_tls_s(ld, NULL, NULL)) != LDAP_SUCCESS) {
		down("StartTLS", rc, e);
		goto fail;
	}
	*out = ld;
	return 0;
fail:
	ldapi.unbind_ext_s(ld, NULL, NULL);
	return -ERR_UNAVAILABLE;
}

static int connect_system(LDAP **out, struct err *e)
{
	int rc = open_conn(out, e);

	if (rc == 0 && (rc = bind_system(*out, e))) {
		ldapi.unbind_ext_s(*out, NULL, NULL);
		*out = NULL;
	}
	return rc;
}

/* A connection bound as the service account: an idle one of the pool, bound again (which
 * proves it alive), or a new one.  A pooled one whose bind fails is closed: the directory
 * behind it restarted, or refuses the account, which a new connection then says. */
static int take_system(LDAP **out, struct err *e)
{
	LDAP *ld;

	if (ldap_api_load(e))
		return -ERR_UNAVAILABLE;
	while ((ld = ldap_pool_take())) {
		if (simple_bind(ld, ldap_settings.system_user, system_password) == LDAP_SUCCESS) {
			*out = ld;
			return 0;
		}
		ldap_pool_drop(ld);
	}
	return connect_system(out, e);
}

static void first_value(LDAP *ld, LDAPMessage *entry, const char *attr, char *out, size_t cap)
{
	struct berval **vals = ldapi.get_values_len(ld, entry, attr);

	out[0] = '\0';
	if (vals && vals[0] && vals[0]->bv_len < cap && !memchr(vals[0]->bv_val, '\0', vals[0]->bv_len)) {
		memcpy(out, vals[0]->bv_val, vals[0]->bv_len);
		out[vals[0]->bv_len] = '\0';
	}
	if (vals)
		ldapi.value_free_len(vals);
}

static bool has_group(const struct ldap_identity *id, const char *dn, size_t len)
{
	for (size_t i = 0; i < id->n_groups; i++)
		if (strlen(id->groups[i]) == len && strncasecmp(id->groups[i], dn, len) == 0)
			return true;
	return false;
}

static int add_group(struct ldap_identity *id, const char *dn, size_t len)
{
	char **g;

	if (len == 0 || memchr(dn, '\0', len) || has_group(id, dn, len) || id->n_groups >= MAX_GROUPS)
		return 0;
	if (!(g = realloc(id->groups, (id->n_groups + 1) * sizeof *g)) || !(g[id->n_groups] = strndup(dn, len))) {
		if (g)
			id->groups = g;
		return -1;
	}
	id->groups = g;
	id->n_groups++;
	return 0;
}

static int add_values(LDAP *ld, LDAPMessage *entry, const char *attr, struct ldap_identity *id)
{
	struct berval **vals = ldapi.get_values_len(ld, entry, attr);
	int rc = 0;

	for (size_t i = 0; vals && vals[i] && rc == 0; i++)
		rc = add_group(id, vals[i]->bv_val, vals[i]->bv_len);
	if (vals)
		ldapi.value_free_len(vals);
	return rc;
}

/* The groups that list member (a DN) as theirs, added to id. */
static int groups_of(LDAP *ld, const char *member, struct ldap_identity *id, struct err *e)
{
	char filter[FILTER_MAX];
	char *attrs[] = {LDAP_NO_ATTRS, NULL};
	const char *base = ldap_settings.group_base && ldap_settings.group_base[0] ? ldap_settings.group_base
										     : ldap_settings.search_base;
	LDAPMessage *res = NULL;
	int rc;

	if (filter_of(ldap_settings.group_filter, member, filter, sizeof filter))
		return 0; /* a DN too long for a filter names no group we could find */
	rc = ldapi.search_ext_s(ld, base, LDAP_SCOPE_SUBTREE, filter, attrs, 0, NULL, NULL, NULL, MAX_GROUPS, &res);
	if (rc != LDAP_SUCCESS && rc != LDAP_SIZELIMIT_EXCEEDED && rc != LDAP_NO_SUCH_OBJECT) {
		ldapi.msgfree(res);
		return is_down(rc) ? down("searching groups", rc, e) : (LOG_W("LDAP: group search: %s", ldapi.err2string(rc)), 0);
	}
	for (LDAPMessage *m = ldapi.first_entry(ld, res); m; m = ldapi.next_entry(ld, m)) {
		char *dn = ldapi.get_dn(ld, m);
		int added = dn ? add_group(id, dn, strlen(dn)) : 0;
		ldapi.memfree(dn);
		if (added) {
			ldapi.msgfree(res);
			return err_set(e, ERR_INTERNAL, "out of memory");
		}
	}
	ldapi.msgfree(res);
	return 0;
}

/* Every group of the user: memberOf (read with the entry) and the groups found by the group
 * filter, then the groups of those groups, level by level. */
static int read_groups(LDAP *ld, struct ldap_identity *id, struct err *e)
{
	size_t from = 0, to;

	if (groups_of(ld, id->dn, id, e))
		return -1;
	for (int depth = 0; depth < MAX_GROUP_DEPTH && from < id->n_groups; depth++) {
		to = id->n_groups;
		for (size_t i = from; i < to; i++)
			if (groups_of(ld, id->groups[i], id, e))
				return -1;
		from = to;
	}
	return 0;
}

/* The one entry that matches the principal filter: its DN, display name, email and memberOf. */
static int find_user(LDAP *ld, const char *username, struct ldap_identity *id, struct err *e)
{
	char filter[FILTER_MAX];
	char *attrs[] = {ldap_settings.display_attr, ldap_settings.mail_attr, "memberOf", NULL};
	LDAPMessage *res = NULL, *m;
	char *dn = NULL;
	int rc;

	if (filter_of(ldap_settings.principal_filter, username, filter, sizeof filter))
		return err_set(e, ERR_UNAUTH, "invalid username or password");
	rc = ldapi.search_ext_s(ld, ldap_settings.search_base, LDAP_SCOPE_SUBTREE, filter, attrs, 0, NULL, NULL, NULL, 2,
				&res);
	if (rc != LDAP_SUCCESS && rc != LDAP_SIZELIMIT_EXCEEDED && rc != LDAP_NO_SUCH_OBJECT) {
		ldapi.msgfree(res);
		if (is_down(rc))
			return down("searching the user", rc, e);
		LOG_W("LDAP: user search under --ldap-search-base failed: %s", ldapi.err2string(rc));
		return err_set(e, ERR_UNAUTH, "invalid username or password");
	}
	if (ldapi.count_entries(ld, res) != 1 || !(m = ldapi.first_entry(ld, res)) || !(dn = ldapi.get_dn(ld, m)) ||
	    str_fmt(id->dn, sizeof id->dn, "%s", dn)) {
		ldapi.memfree(dn);
		ldapi.msgfree(res);
		return err_set(e, ERR_UNAUTH, "invalid username or password");
	}
	ldapi.memfree(dn);
	first_value(ld, m, ldap_settings.display_attr, id->display_name, sizeof id->display_name);
	first_value(ld, m, ldap_settings.mail_attr, id->email, sizeof id->email);
	rc = add_values(ld, m, "memberOf", id);
	ldapi.msgfree(res);
	return rc ? err_set(e, ERR_INTERNAL, "out of memory") : 0;
}

static bool username_ok(const char *username)
{
	size_t n = strlen(username);

	if (n == 0 || n > 128)
		return false;
	for (const unsigned char *p = (const unsigned char *)username; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

int ldap_realm_login(const char *username, const char *password, bool with_groups, struct ldap_identity *out,
		     struct err *e)
{
	LDAP *ld = NULL;
	int rc;

	memset(out, 0, sizeof *out);
	/* An empty password would make the bind an unauthenticated one, which succeeds. */
	if (!username_ok(username) || !password || !password[0])
		return err_set(e, ERR_UNAUTH, "invalid username or password");
	if ((rc = take_system(&ld, e)))
		return rc;
	if ((rc = find_user(ld, username, out, e)))
		goto out;
	rc = simple_bind(ld, out->dn, password);
	if (rc != LDAP_SUCCESS) {
		rc = is_down(rc) ? down("binding as the user", rc, e) : err_set(e, ERR_UNAUTH, "invalid username or password");
		goto out;
	}
	/* The groups are read as the service account: a user may not see the groups. */
	if (with_groups && ((rc = bind_system(ld, e)) || (rc = read_groups(ld, out, e))))
		goto out;
	if (!out->display_name[0])
		str_fmt_cut(out->display_name, sizeof out->display_name, "%s", username);
out:
	/* A connection that answered is kept for the next login, in whatever bind state. */
	if (rc == -ERR_UNAVAILABLE)
		ldap_pool_drop(ld);
	else
		ldap_pool_give(ld);
	if (rc)
		ldap_identity_cleanup(out);
	return rc;
}

void ldap_identity_cleanup(struct ldap_identity *id)
{
	free_groups(id->groups, id->n_groups);
	id->groups = NULL;
	id->n_groups = 0;
}


/* At start: a directory that answers must accept the service account and know the search
 * base (else the settings are wrong: ERR_INVALID naming the flag); one that cannot be
 * reached is only a warning, as its users then get 503 and local users keep working. */
static int probe(struct err *e)
{
	char *attrs[] = {LDAP_NO_ATTRS, NULL};
	LDAPMessage *res = NULL;
	struct err why;
	LDAP *ld;
	int rc;

	if (ldap_api_load(e))
		return -ERR_INVALID;
	if (open_conn(&ld, &why) || is_down(rc = simple_bind(ld, ldap_settings.system_user, system_password))) {
		if (ld)
			ldapi.unbind_ext_s(ld, NULL, NULL);
		LOG_W("LDAP: the directory %s cannot be reached at start; LDAP logins answer 503 until it can",
		      ldap_settings.url);
		return 0;
	}
	if (rc != LDAP_SUCCESS) {
		ldapi.unbind_ext_s(ld, NULL, NULL);
		return err_set(e, ERR_INVALID, "the LDAP directory %s refused --ldap-system-user '%s': %s", ldap_settings.url,
			       ldap_settings.system_user ? ldap_settings.system_user : "", ldapi.err2string(rc));
	}
	rc = ldapi.search_ext_s(ld, ldap_settings.search_base, LDAP_SCOPE_BASE, "(objectClass=*)", attrs, 0, NULL, NULL,
				NULL, 1, &res);
	ldapi.msgfree(res);
	ldapi.unbind_ext_s(ld, NULL, NULL);
	if (rc == LDAP_NO_SUCH_OBJECT || rc == LDAP_INVALID_DN_SYNTAX)
		return err_set(e, ERR_INVALID, "--ldap-search-base %s: the LDAP directory %s has no such entry (%s)",
			       ldap_settings.search_base, ldap_settings.url, ldapi.err2string(rc));
	if (rc != LDAP_SUCCESS)
		LOG_W("LDAP: reading --ldap-search-base at start: %s", ldapi.err2string(rc));
	return 0;
}
