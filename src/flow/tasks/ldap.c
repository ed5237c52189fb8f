#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/dns_srv.h"
#include "base/ldap_api.h"
#include "base/ldap_filter.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/tasks/defaults.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

/* Concord's `ldap` task (concord-plugins tasks/ldap, LdapTaskV2; docs/flows.md "ldap"): one
 * search of a directory per call — searchByDn, getUser, getGroup, isMemberOf — with the
 * step's input over the `ldapParams` variable.  The directory is ldapAdServer, or the
 * servers a DNS SRV record names (dnsSrvRr, tried in turn while they cannot be reached);
 * `certificate` replaces the system's CAs for ldaps://.  It runs in the runner, like http and smtp,
 * through libldap (loaded on first use, base/ldap_api.h), as a task_job so that other
 * parallel branches go on meanwhile.  Values put into filters are escaped (RFC 4515).
 * bindPassword is marked sensitive before anything is logged and appears in no message. */

#define LDAP_TASK_TIMEOUT_S 30
#define LDAP_TASK_MAX_ENTRIES 100
#define LDAP_TASK_MAX_DEPTH 8
#define LDAP_TASK_MAX_VISITS 256
#define FILTER_MAX 4096
#define SYSTEM_CA_FILE "/etc/ssl/certs/ca-certificates.crt"
#define CERTIFICATE_MAX (1u << 20)
#define TRIED_MAX 1024

enum ldap_action { SEARCH_BY_DN, GET_USER, GET_GROUP, IS_MEMBER_OF };

static const char *const action_names[] = {"searchByDn", "getUser", "getGroup", "isMemberOf"};

struct ldap_job {
	struct task_job base; /* must be first */
	enum ldap_action action;
	char *url, *bind_dn, *password, *search_base, *dn, *user, *group;
	char *ad_server;	       /* ldapAdServer, or NULL */
	char *srv_name, *srv_protocol; /* dnsSrvRr's name and protocol (ldap, ldaps), or NULL */
	unsigned srv_port;	       /* dnsSrvRr's port; 0: each record's own */
	char *dns_server;	       /* the DNS server to ask (--ldap-task-dns-server), or NULL */
	char *ca_pem;		       /* `certificate`: the CAs that alone are trusted, or NULL */
	size_t ca_len;
	char *ca_file; /* ca_pem written for libldap (under workdir/.tmp), or NULL */
	char *workdir;
	bool security_enabled;
	json_t *group_types; /* the job's own copy */
	LDAP *ld;
	size_t visits;
	json_t *out; /* {success, result} */
	int rc;
	struct err e;
};

static void job_free(struct task_job *base)
{
	struct ldap_job *j = (struct ldap_job *)base;

	if (j->ld)
		ldapi.unbind_ext_s(j->ld, NULL, NULL);
	if (j->password) {
		sodium_memzero(j->password, strlen(j->password));
		free(j->password);
	}
	free(j->url);
	free(j->ad_server);
	free(j->srv_name);
	free(j->srv_protocol);
	free(j->dns_server);
	free(j->ca_pem);
	if (j->ca_file)
		unlink(j->ca_file);
	free(j->ca_file);
	free(j->workdir);
	free(j->bind_dn);
	free(j->search_base);
	free(j->dn);
	free(j->user);
	free(j->group);
	json_decref(j->group_types);
	json_decref(j->out);
	free(j);
}

/* ---- on the job's thread: the job's own data only ---------------------------------- */

static int failed(struct ldap_job *j, const char *what, int rc)
{
	return j->rc = err_set(&j->e, ERR_UNAVAILABLE, "ldap: %s: %s", what, ldapi.err2string(rc));
}

/* Connects to j->url and binds; *unreachable: the server could not be reached (so that
 * the next one of a SRV record may be tried). */
static int connect_and_bind(struct ldap_job *j, bool *unreachable)
{
	int v3 = LDAP_VERSION3, demand = LDAP_OPT_X_TLS_DEMAND, zero = 0, rc;
	struct timeval tv = {LDAP_TASK_TIMEOUT_S, 0};
	struct berval cred = {.bv_len = j->password ? strlen(j->password) : 0,
			      .bv_val = j->password ? j->password : ""};
	const char *ca = j->ca_file ? j->ca_file : SYSTEM_CA_FILE;
	char what[600];

	*unreachable = false;
	if (j->ld) {
		ldapi.unbind_ext_s(j->ld, NULL, NULL);
		j->ld = NULL;
	}
	if ((rc = ldapi.initialize(&j->ld, j->url)) != LDAP_SUCCESS)
		return failed(j, j->srv_name ? "a server of dnsSrvRr" : "ldapAdServer", rc);
	if ((rc = ldapi.set_option(j->ld, LDAP_OPT_PROTOCOL_VERSION, &v3)) ||
	    (rc = ldapi.set_option(j->ld, LDAP_OPT_REFERRALS, LDAP_OPT_OFF)) ||
	    (rc = ldapi.set_option(j->ld, LDAP_OPT_NETWORK_TIMEOUT, &tv)) ||
	    (rc = ldapi.set_option(j->ld, LDAP_OPT_TIMEOUT, &tv)) ||
	    (rc = ldapi.set_option(j->ld, LDAP_OPT_X_TLS_REQUIRE_CERT, &demand)) ||
	    (access(ca, R_OK) == 0 && (rc = ldapi.set_option(j->ld, LDAP_OPT_X_TLS_CACERTFILE, ca))) ||
	    (rc = ldapi.set_option(j->ld, LDAP_OPT_X_TLS_NEWCTX, &zero)))
		return failed(j, "setting connection options", rc);
	rc = ldapi.sasl_bind_s(j->ld, j->bind_dn ? j->bind_dn : "", LDAP_SASL_SIMPLE, &cred, NULL, NULL, NULL);
	if (rc == LDAP_SUCCESS)
		return 0;
	if (rc == LDAP_SERVER_DOWN || rc == LDAP_CONNECT_ERROR || rc == LDAP_TIMEOUT) {
		*unreachable = true;
		str_fmt_cut(what, sizeof what, "cannot reach %s", j->url);
	} else
		str_fmt_cut(what, sizeof what, "%s refused the bind as '%s'", j->url, j->bind_dn ? j->bind_dn : "");
	return failed(j, what, rc);
}

/* `certificate` into a file of its own for libldap (which reads CAs from files only), in
 * the working directory's .tmp (the runner's own), removed by job_free. */
static int write_ca_file(struct ldap_job *j)
{
	char *dir = NULL, id[UUID_STR_LEN];
	int rc;

	uuid_v4(id); /* a name of its own: parallel steps each write theirs */
	if (asprintf(&dir, "%s/.tmp", j->workdir) < 0 || (mkdir(dir, 0700) != 0 && errno != EEXIST) ||
	    asprintf(&j->ca_file, "%s/ldap-ca-%s.pem", dir, id) < 0) {
		if (dir) /* asprintf leaves its pointer undefined on failure: only a made name is kept */
			j->rc = err_set(&j->e, ERR_INTERNAL, "ldap: cannot make %s: %s", dir, strerror(errno));
		else
			j->rc = oom_fail(&j->e);
		j->ca_file = NULL;
		free(dir);
		return j->rc;
	}
	free(dir);
	rc = path_write_file(j->ca_file, j->ca_pem, j->ca_len, 0600, &j->e);
	if (rc < 0) {
		free(j->ca_file); /* not created: nothing to remove */
		j->ca_file = NULL;
		err_prefix(&j->e, "ldap: cannot write the certificate");
		return j->rc = rc;
	}
	return 0;
}

/* The servers of the dnsSrvRr record, in order, until one answers: 1 when the name has no
 * SRV record (ldapAdServer is then used, if given). */
static int connect_srv(struct ldap_job *j)
{
	struct dns_srv recs[DNS_SRV_MAX];
	char tried[TRIED_MAX] = "";
	size_t n = 0;
	bool unreachable = true;

	if (dns_srv_lookup(j->srv_name, j->dns_server, recs, DNS_SRV_MAX, &n, &j->e) < 0) {
		if (j->e.code == ERR_NOT_FOUND && j->ad_server)
			return 1;
		err_prefix(&j->e, "ldap: dnsSrvRr");
		return j->rc = -1;
	}
	for (size_t i = 0; i < n && unreachable; i++) {
		char *url = NULL;
		if (asprintf(&url, "%s://%s:%u", j->srv_protocol, recs[i].target,
			     j->srv_port ? j->srv_port : recs[i].port) < 0)
			return j->rc = err_set(&j->e, ERR_INTERNAL, "out of memory");
		free(j->url);
		j->url = url;
		if (connect_and_bind(j, &unreachable) == 0)
			return j->rc = 0; /* the failures of those before it are forgotten */
		str_fmt_cut(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", i ? ", " : "", url);
	}
	if (unreachable) /* every one of them */
		err_set(&j->e, ERR_UNAVAILABLE, "ldap: cannot reach any server of the SRV record %s (tried %s)",
			j->srv_name, tried);
	return j->rc = -1;
}

static int connect_any(struct ldap_job *j)
{
	bool unreachable;
	int rc;

	if (j->ca_pem && write_ca_file(j))
		return -1;
	if (j->srv_name && (rc = connect_srv(j)) <= 0)
		return rc;
	free(j->url);
	if (!(j->url = strdup(j->ad_server)))
		return j->rc = err_set(&j->e, ERR_INTERNAL, "out of memory");
	return connect_and_bind(j, &unreachable);
}

/* A value as text: itself when it is UTF-8 without NUL, else Base64 (binary attributes). */
static json_t *value_json(const struct berval *v)
{
	json_t *s = memchr(v->bv_val, '\0', v->bv_len) ? NULL : json_stringn(v->bv_val, v->bv_len);
	char *b64;

	if (s)
		return s;
	if (!(b64 = b64_encode(v->bv_val, v->bv_len, B64_STD)))
		return NULL;
	s = json_string(b64);
	free(b64);
	return s;
}

/* {"dn", "attributes": {name: value | [values…]}} of an entry, as Concord's
 * searchResultToMap (one value as itself, several as a list), plus the entry's DN. */
static json_t *entry_json(LDAP *ld, LDAPMessage *m)
{
	json_t *attrs = json_object(), *o;
	BerElement *ber = NULL;
	char *dn = ldapi.get_dn(ld, m);

	for (char *a = ldapi.first_attribute(ld, m, &ber); a; a = ldapi.next_attribute(ld, m, ber)) {
		struct berval **vals = ldapi.get_values_len(ld, m, a);
		size_t n = 0;
		while (vals && vals[n])
			n++;
		if (n == 1) {
			json_object_set_new(attrs, a, value_json(vals[0]));
		} else if (n > 1) {
			json_t *list = json_array();
			for (size_t i = 0; i < n; i++)
				json_array_append_new(list, value_json(vals[i]));
			json_object_set_new(attrs, a, list);
		}
		if (vals)
			ldapi.value_free_len(vals);
		ldapi.memfree(a);
	}
	if (ber)
		ldapi.ber_free(ber, 0);
	o = json_pack("{s:s?, s:o}", "dn", dn, "attributes", attrs);
	ldapi.memfree(dn);
	return o;
}

/* A search: *res the entries (ldapi.msgfree), < 0 with j->e on an error; a base that does
 * not exist is no entry. */
static int search(struct ldap_job *j, const char *base, int scope, const char *filter, char **attrs, LDAPMessage **res)
{
	char what[600];
	int rc;

	*res = NULL;
	rc = ldapi.search_ext_s(j->ld, base, scope, filter, attrs, 0, NULL, NULL, NULL, LDAP_TASK_MAX_ENTRIES, res);
	if (rc == LDAP_SUCCESS || rc == LDAP_SIZELIMIT_EXCEEDED || rc == LDAP_NO_SUCH_OBJECT)
		return 0;
	ldapi.msgfree(*res);
	*res = NULL;
	str_fmt_cut(what, sizeof what, "searching '%s' under '%s'", filter, base);
	return failed(j, what, rc);
}

/* value escaped for a filter (RFC 4515) into esc. */
static int escaped(struct ldap_job *j, const char *value, char *esc, size_t cap)
{
	if (ldap_filter_escape(value, esc, cap))
		return j->rc = err_set(&j->e, ERR_INVALID, "ldap: the value '%.100s' is too long", value);
	return 0;
}

static int too_long(struct ldap_job *j)
{
	return j->rc = err_set(&j->e, ERR_INVALID, "ldap: the search filter is too long");
}

/* The first entry for the user: Concord's filter over the names Active Directory knows
 * (userPrincipalName, sAMAccountName, mailNickname, proxyAddresses, mail). */
static int find_user(struct ldap_job *j, json_t **out)
{
	char filter[FILTER_MAX], u[FILTER_MAX / 8];
	char *attrs[] = {"*", NULL};
	LDAPMessage *res = NULL, *m;

	*out = NULL;
	if (escaped(j, j->user, u, sizeof u))
		return -1;
	if (str_fmt(filter, sizeof filter,
		    "(|(userPrincipalName=%s)(sAMAccountName=%s)(mailNickname=%s)(proxyAddresses=smtp:%s)(mail=%s))", u,
		    u, u, u, u))
		return too_long(j);
	if (search(j, j->search_base, LDAP_SCOPE_SUBTREE, filter, attrs, &res))
		return -1;
	if ((m = ldapi.first_entry(j->ld, res)))
		*out = entry_json(j->ld, m);
	ldapi.msgfree(res);
	return 0;
}

static bool in_types(const json_t *types, const char *group_type)
{
	const json_t *t;
	size_t i;

	json_array_foreach(types, i,
			   t) if (json_is_string(t) && strcmp(json_string_value(t), group_type) == 0) return true;
	return false;
}

/* Whether entry e is the kind of group asked for: a DN under an "ou=security" for a
 * security group, or else a groupType among securityGroupTypes (Concord's getGroup). */
static bool group_kind_matches(const struct ldap_job *j, const json_t *e)
{
	const char *dn = json_string_value(json_object_get(e, "dn"));
	const json_t *gt = json_object_get(json_object_get(e, "attributes"), "groupType");
	char lower[1024];

	if (dn) {
		size_t n = strlen(dn) < sizeof lower - 1 ? strlen(dn) : sizeof lower - 1;
		for (size_t i = 0; i < n; i++)
			lower[i] = (char)((dn[i] >= 'A' && dn[i] <= 'Z') ? dn[i] + 32 : dn[i]);
		lower[n] = '\0';
		if ((strstr(lower, "ou=security") != NULL) == j->security_enabled)
			return true;
	}
	return json_is_string(gt) && in_types(j->group_types, json_string_value(gt)) == j->security_enabled;
}

static int find_group(struct ldap_job *j, json_t **out)
{
	char filter[FILTER_MAX], g[FILTER_MAX / 8];
	char *attrs[] = {"*", NULL};
	LDAPMessage *res = NULL;

	*out = NULL;
	if (escaped(j, j->group, g, sizeof g))
		return -1;
	if (str_fmt(filter, sizeof filter, "(name=%s)", g))
		return too_long(j);
	if (search(j, j->search_base, LDAP_SCOPE_SUBTREE, filter, attrs, &res))
		return -1;
	for (LDAPMessage *m = ldapi.first_entry(j->ld, res); m && !*out; m = ldapi.next_entry(j->ld, m)) {
		json_t *e = entry_json(j->ld, m);
		if (e && group_kind_matches(j, e))
			*out = e;
		else
			json_decref(e);
	}
	ldapi.msgfree(res);
	return 0;
}

/* The entry at dn itself (a base search), or *out NULL. */
static int read_entry(struct ldap_job *j, const char *dn, char **attrs, json_t **out)
{
	LDAPMessage *res = NULL, *m;

	*out = NULL;
	if (search(j, dn, LDAP_SCOPE_BASE, "(objectClass=*)", attrs, &res))
		return -1;
	if ((m = ldapi.first_entry(j->ld, res)))
		*out = entry_json(j->ld, m);
	ldapi.msgfree(res);
	return 0;
}

/* Whether user_dn is a member of group_dn, directly or through the groups among its
 * members, down LDAP_TASK_MAX_DEPTH levels and LDAP_TASK_MAX_VISITS entries. */
static int member_of(struct ldap_job *j, const char *user_dn, const char *group_dn, int depth, bool *yes)
{
	char *attrs[] = {"member", NULL};
	json_t *g = NULL, *members, *one = NULL, *v;
	size_t i;
	int rc;

	if (depth > LDAP_TASK_MAX_DEPTH || ++j->visits > LDAP_TASK_MAX_VISITS)
		return 0;
	if ((rc = read_entry(j, group_dn, attrs, &g)) || !g)
		return rc;
	members = json_object_get(json_object_get(g, "attributes"), "member");
	if (json_is_string(members))
		json_array_append(members = one = json_array(),
				  json_object_get(json_object_get(g, "attributes"), "member"));
	json_array_foreach(members, i, v)
	{
		if (!json_is_string(v))
			continue;
		if (strcasecmp(json_string_value(v), user_dn) == 0)
			*yes = true;
		else if ((rc = member_of(j, user_dn, json_string_value(v), depth + 1, yes)))
			break;
		if (*yes)
			break;
	}
	json_decref(one);
	json_decref(g);
	return rc;
}

static int is_member_of(struct ldap_job *j, bool *yes)
{
	json_t *u = NULL, *g = NULL;
	int rc;

	*yes = false;
	if (!(rc = find_user(j, &u)) && u && !(rc = find_group(j, &g)) && g)
		rc = member_of(j, json_string_value(json_object_get(u, "dn")),
			       json_string_value(json_object_get(g, "dn")), 0, yes);
	json_decref(u);
	json_decref(g);
	return rc;
}

static void job_run(struct task_job *base)
{
	struct ldap_job *j = (struct ldap_job *)base;
	char *all[] = {"*", NULL};
	json_t *found = NULL;
	bool yes = false;

	if (connect_any(j))
		return;
	switch (j->action) {
	case SEARCH_BY_DN:
		read_entry(j, j->dn, all, &found);
		break;
	case GET_USER:
		find_user(j, &found);
		break;
	case GET_GROUP:
		find_group(j, &found);
		break;
	case IS_MEMBER_OF:
		if (is_member_of(j, &yes) == 0)
			j->out = json_pack("{s:b, s:b, s:b}", "ok", 1, "success", 1, "result", yes);
		return;
	}
	if (j->rc == 0)
		j->out = json_pack("{s:b, s:b, s:o}", "ok", found != NULL, "success", found != NULL, "result",
				   found ? found : json_null());
	else
		json_decref(found);
}

static int job_finish(struct task_job *base, struct task_ctx *t, json_t **out, struct err *e)
{
	struct ldap_job *j = (struct ldap_job *)base;

	*out = NULL;
	if (j->srv_name && j->ld)
		vm_log(t->vm, FLOW_INFO, "ldap: used %s of the SRV record %s", j->url, j->srv_name);
	if (j->rc < 0) {
		*e = j->e;
		return -1;
	}
	if (!j->out)
		return oom_fail(e);
	*out = j->out;
	j->out = NULL;
	return 0;
}

/* ---- on the VM's thread: the parameters --------------------------------------------- */

/* The step's input over the `ldapParams` variable (a NEW object). */
static json_t *merged_params(struct task_ctx *t, json_t *in)
{
	json_t *p = json_object(), *d = json_object_get(in, "ldapParams");

	if (!json_is_object(d))
		d = scope_get(t->t, "ldapParams");
	if (json_is_object(d))
		json_object_update(p, d);
	json_object_update(p, in);
	json_object_del(p, "ldapParams");
	return p;
}

static int parse_action(json_t *p, enum ldap_action *out, struct err *e)
{
	const char *a;

	if (task_opt_str(p, "action", &a, e) < 0)
		return -1;
	if (!a)
		return err_set(e, ERR_INVALID,
			       "ldap: 'action' is required (searchByDn, getUser, getGroup, isMemberOf)");
	while (*a == ' ')
		a++;
	for (size_t i = 0; i < sizeof action_names / sizeof action_names[0]; i++)
		if (strncasecmp(a, action_names[i], strlen(action_names[i])) == 0 &&
		    a[strlen(action_names[i]) + strspn(a + strlen(action_names[i]), " ")] == '\0') {
			*out = (enum ldap_action)i;
			return 0;
		}
	return err_set(e, ERR_INVALID,
		       "Unknown action: '%.100s'. Available actions: [SEARCHBYDN, GETUSER, GETGROUP, ISMEMBEROF]", a);
}

/* A string parameter copied into *out: required ones must be there and not empty. */
static int str_param(json_t *p, const char *key, bool required, char **out, struct err *e)
{
	const char *v;

	if (task_opt_str(p, key, &v, e) < 0) {
		err_prefix(e, "ldap");
		return -1;
	}
	if (!v || !*v)
		return required ? err_set(e, ERR_INVALID, "ldap: '%s' is required", key) : 0;
	if (!(*out = strdup(v)))
		return oom_fail(e);
	return 0;
}

/* dnsSrvRr: {name, protocol (ldap or ldaps), port (optional: each record's own)}. */
static int parse_srv(json_t *srv, struct ldap_job *j, struct err *e)
{
	json_t *port = json_object_get(srv, "port");
	int64_t n = 0;
	const char *name = json_string_value(json_object_get(srv, "name")),
		   *proto = json_string_value(json_object_get(srv, "protocol"));

	if (!json_is_object(srv))
		return err_set(e, ERR_INVALID, "ldap: 'dnsSrvRr' must be a map of name, protocol and port");
	if (!name || !*name || strlen(name) >= DNS_NAME_MAX)
		return err_set(e, ERR_INVALID,
			       "ldap: 'dnsSrvRr.name' is required: a SRV record such as _ldap._tcp.example.com");
	if (!proto || (strcmp(proto, "ldap") != 0 && strcmp(proto, "ldaps") != 0))
		return err_set(e, ERR_INVALID, "ldap: 'dnsSrvRr.protocol' is required: ldap or ldaps");
	if (!(j->srv_name = strdup(name)) || !(j->srv_protocol = strdup(proto)))
		return oom_fail(e);
	if (json_is_integer(port))
		n = json_integer_value(port);
	else if (json_is_string(port) &&
		 str_to_i64((struct str){json_string_value(port), strlen(json_string_value(port))}, 1, 65535, &n,
			    "port", e) < 0)
		n = -1;
	else if (port && !json_is_null(port) && !json_is_string(port))
		n = -1;
	if (n < 0 || n > 65535 || (port && !json_is_null(port) && n == 0))
		return err_set(e, ERR_INVALID, "ldap: 'dnsSrvRr.port' must be a port number (1-65535)");
	j->srv_port = (unsigned)n;
	return 0;
}

/* `certificate`: {text: PEM, file: a file of the working directory}, either or both: the
 * CAs that alone are trusted for ldaps:// (Concord's plugin: instead of the JVM's). */
static int parse_certificate(struct task_ctx *t, json_t *cert, struct ldap_job *j, struct err *e)
{
	const char *text, *file;
	char *from_file = NULL;
	size_t flen = 0, tlen;

	if (!cert || json_is_null(cert) || (json_is_object(cert) && !json_object_size(cert)))
		return 0;
	if (!json_is_object(cert))
		return err_set(e, ERR_INVALID, "ldap: 'certificate' must be a map of text and/or file");
	if (task_opt_str(cert, "text", &text, e) < 0 || task_opt_str(cert, "file", &file, e) < 0) {
		err_prefix(e, "ldap: 'certificate'");
		return -1;
	}
	if (file && *file && !(from_file = path_read_beneath(t->h->workdir, file, CERTIFICATE_MAX, &flen, e))) {
		err_prefix(e, "ldap: 'certificate.file' '%.200s'", file);
		return -1;
	}
	tlen = text ? strlen(text) : 0;
	if (!(j->ca_pem = malloc(flen + tlen + 2))) {
		free(from_file);
		return oom_fail(e);
	}
	if (flen)
		memcpy(j->ca_pem, from_file, flen);
	j->ca_pem[flen] = '\n';
	memcpy(j->ca_pem + flen + 1, text ? text : "", tlen);
	j->ca_len = flen + 1 + tlen;
	j->ca_pem[j->ca_len] = '\0';
	free(from_file);
	if (!memmem(j->ca_pem, j->ca_len, "-----BEGIN CERTIFICATE-----", 27))
		return err_set(e, ERR_INVALID, "ldap: 'certificate' holds no PEM certificate");
	return 0;
}

static int parse_server(struct task_ctx *t, json_t *p, struct ldap_job *j, struct err *e)
{
	json_t *srv = json_object_get(p, "dnsSrvRr");
	const char *dns = json_string_value(json_object_get(task_defaults_get(t->h, "ldapTask"), "dnsServer"));

	if (str_param(p, "ldapAdServer", false, &j->ad_server, e) < 0)
		return -1;
	if (srv && !json_is_null(srv) && parse_srv(srv, j, e) < 0)
		return -1;
	if (!j->ad_server && !j->srv_name)
		return err_set(e, ERR_INVALID,
			       "ldap: Mandatory variable either 'dnsSrvRr' or 'ldapAdServer' is required");
	if (j->ad_server && strncmp(j->ad_server, "ldap://", 7) != 0 && strncmp(j->ad_server, "ldaps://", 8) != 0)
		return err_set(e, ERR_INVALID, "ldap: 'ldapAdServer' must start with ldap:// or ldaps://, got '%.200s'",
			       j->ad_server);
	if ((dns && *dns && !(j->dns_server = strdup(dns))) || !(j->workdir = strdup(t->h->workdir)))
		return oom_fail(e);
	if (!(j->url = strdup(j->srv_name ? j->srv_name : j->ad_server)))
		return oom_fail(e);
	if (parse_certificate(t, json_object_get(p, "certificate"), j, e) < 0 ||
	    str_param(p, "bindUserDn", false, &j->bind_dn, e) < 0 ||
	    str_param(p, "bindPassword", false, &j->password, e) < 0 ||
	    str_param(p, "searchBase", true, &j->search_base, e) < 0)
		return -1;
	/* A bind with a DN and no password is an unauthenticated one, which a directory accepts. */
	if (j->bind_dn && !j->password)
		return err_set(e, ERR_INVALID, "ldap: 'bindPassword' is required with 'bindUserDn'");
	return 0;
}

static int parse_action_params(json_t *p, struct ldap_job *j, struct err *e)
{
	json_t *types = json_object_get(p, "securityGroupTypes");

	if (j->action == SEARCH_BY_DN)
		return str_param(p, "dn", true, &j->dn, e);
	if (j->action != GET_GROUP && str_param(p, "user", true, &j->user, e) < 0)
		return -1;
	if (j->action == GET_USER)
		return 0;
	if (str_param(p, "group", true, &j->group, e) < 0)
		return -1;
	if (!json_object_get(p, "securityEnabled") || json_is_null(json_object_get(p, "securityEnabled")))
		return err_set(e, ERR_INVALID, "ldap: 'securityEnabled' is required (true or false)");
	if (task_opt_bool(p, "securityEnabled", false, &j->security_enabled, e) < 0)
		return -1;
	if (types && !json_is_null(types) && !json_is_array(types))
		return err_set(e, ERR_INVALID, "ldap: 'securityGroupTypes' must be a list");
	j->group_types = json_is_array(types) ? json_deep_copy(types) : json_array();
	return j->group_types ? 0 : oom_fail(e);
}

static int ldap_execute(struct task_ctx *t, json_t *in, json_t **out, struct err *e)
{
	struct ldap_job *j;
	json_t *p;
	const char *pw;
	int rc;

	*out = NULL;
	if (!json_is_object(in))
		return err_set(e, ERR_INVALID, "the ldap task needs an 'in' map");
	p = merged_params(t, in);
	if (t->h->ops->sensitive && task_opt_str(p, "bindPassword", &pw, e) == 0 && pw && *pw)
		t->h->ops->sensitive(t->h->ctx, pw, true);
	if (!(j = calloc(1, sizeof *j))) {
		json_decref(p);
		return oom_fail(e);
	}
	j->base = (struct task_job){job_run, job_finish, job_free};
	rc = parse_action(p, &j->action, e) < 0 || parse_server(t, p, j, e) < 0 || parse_action_params(p, j, e) < 0 ? -1
														    : 0;
	json_decref(p);
	/* libldap would otherwise read /etc/ldap/ldap.conf and ~/.ldaprc, which could turn
	 * certificate checks off behind the flow's back. */
	if (rc == 0 && !getenv("LDAPNOINIT"))
		setenv("LDAPNOINIT", "1", 1);
	if (rc == 0 && ldap_api_load(e) < 0) {
		err_prefix(e, "the ldap task needs libldap");
		rc = -1;
	}
	if (rc < 0) {
		job_free(&j->base);
		return -1;
	}
	vm_log(t->vm, FLOW_INFO, "ldap: starting '%s' on %s%s", action_names[j->action],
	       j->srv_name ? "the servers of the SRV record " : "", j->url);
	t->job = &j->base;
	return 0;
}

static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_ldap = {"ldap", ldap_execute, no_methods, false, false};
