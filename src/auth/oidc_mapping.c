/* The OIDC realm's team and role mappings (oidc_mapping.h). */
#include "auth/oidc_mapping.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/str.h"
#include "base/uuid.h"
#include "store/access.h"
#include "store/roles.h"
#include "store/teams.h"

#define MAPPINGS_MAX 64
#define SOURCES_MAX 16
#define CLAIM_MAX 128
#define PATTERN_MAX 1024

struct source {
	char claim[CLAIM_MAX];
	regex_t re;
};

struct mapping {
	char key[ROLE_NAME_MAX + 1]; /* a team id or a role name */
	unsigned builtin;	     /* a built-in role's bit (role mappings) */
	enum team_role role;	     /* the team role given (team mappings) */
	size_t n_src;
	struct source src[SOURCES_MAX];
};

static struct mapping teams[MAPPINGS_MAX], roles[MAPPINGS_MAX];
static size_t n_teams, n_roles;

/* Source text (for messages) of claim[0..claim_len) and pattern: compiled as ^(pattern)$
 * ignoring case. */
static int add_source(const char *setting, const char *key, const char *text, const char *claim, size_t claim_len,
		      const char *pattern, struct mapping *m, struct err *e)
{
	struct source *s = &m->src[m->n_src];
	char anchored[PATTERN_MAX + 8], why[128];
	int rc;

	if (m->n_src == SOURCES_MAX)
		return err_set(e, ERR_INVALID, "%s: '%s' has more than %d sources", setting, key, SOURCES_MAX);
	if (claim_len == 0 || str_fmt(s->claim, sizeof s->claim, "%.*s", (int)claim_len, claim))
		return err_set(e, ERR_INVALID, "%s: '%s': source '%.200s' is not CLAIM.PATTERN", setting, key, text);
	if (strlen(pattern) > PATTERN_MAX || str_fmt(anchored, sizeof anchored, "^(%s)$", pattern))
		return err_set(e, ERR_INVALID, "%s: '%s': the pattern of '%.200s' is longer than %d characters",
			       setting, key, text, PATTERN_MAX);
	if ((rc = regcomp(&s->re, anchored, REG_EXTENDED | REG_ICASE | REG_NOSUB)) != 0) {
		regerror(rc, NULL, why, sizeof why);
		return err_set(e, ERR_INVALID, "%s: '%s': the pattern '%.200s' is not a valid regular expression: %s",
			       setting, key, pattern, why);
	}
	m->n_src++;
	return 0;
}

/* "CLAIM.PATTERN", split at the first dot as Concord splits it. */
static int add_source_text(const char *setting, const char *key, const char *text, struct mapping *m,
			   struct err *e)
{
	const char *dot = strchr(text, '.');

	if (!dot)
		return err_set(e, ERR_INVALID, "%s: '%s': source '%.200s' is not CLAIM.PATTERN", setting, key, text);
	return add_source(setting, key, text, text, (size_t)(dot - text), dot + 1, m, e);
}

/* The key of an entry: a team id (teams) or a role name with its built-in bit. */
static int read_key(const char *setting, const char *key, bool team, struct mapping *m, struct err *e)
{
	const char *names[1] = {key};
	struct err none;

	if (str_fmt(m->key, sizeof m->key, "%s", key) || !key[0])
		return err_set(e, ERR_INVALID, "%s: '%.200s' is not a %s", setting, key, team ? "team id" : "role name");
	if (team && !uuid_valid(key, strlen(key)))
		return err_set(e, ERR_INVALID, "%s: '%.200s' is not a team id (a UUID)", setting, key);
	if (!team && user_roles_parse(names, 1, &m->builtin, &none) != 0)
		m->builtin = 0;
	return 0;
}

/* The team role of an entry ("role", MEMBER when absent; any case, as Concord takes it). */
static int read_team_role(const char *setting, const char *key, json_t *v, struct mapping *m, struct err *e)
{
	json_t *r = json_object_get(v, "role");
	char up[16];
	size_t i;

	m->role = TEAM_ROLE_MEMBER;
	if (!r)
		return 0;
	if (!json_is_string(r) || str_fmt(up, sizeof up, "%s", json_string_value(r)))
		return err_set(e, ERR_INVALID, "%s: '%s'.role must be OWNER, MAINTAINER or MEMBER", setting, key);
	for (i = 0; up[i]; i++)
		up[i] = (char)toupper((unsigned char)up[i]);
	if (team_role_parse(up, &m->role, e))
		return err_set(e, ERR_INVALID, "%s: '%s'.role must be OWNER, MAINTAINER or MEMBER, got '%s'", setting,
			       key, json_string_value(r));
	return 0;
}

/* {"KEY": {"source": ["CLAIM.PATTERN", …], "role": …}, …} */
static int read_json(const char *setting, const char *text, bool team, struct mapping *out, size_t *n, struct err *e)
{
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr), *v, *src, *item;
	const char *key;
	size_t i;
	int rc = 0;

	if (!json_is_object(doc)) {
		json_decref(doc);
		return err_set(e, ERR_INVALID, "%s: not a JSON object of %s: %s", setting,
			       team ? "team ids" : "role names", doc ? "another JSON value" : jerr.text);
	}
	json_object_foreach(doc, key, v)
	{
		struct mapping *m = &out[*n];

		if (*n == MAPPINGS_MAX) {
			rc = err_set(e, ERR_INVALID, "%s: more than %d entries", setting, MAPPINGS_MAX);
			break;
		}
		memset(m, 0, sizeof *m);
		src = json_object_get(v, "source");
		if (!json_is_array(src) || json_array_size(src) == 0) {
			rc = err_set(e, ERR_INVALID, "%s: '%.200s'.source must be a list of CLAIM.PATTERN", setting, key);
			break;
		}
		if ((rc = read_key(setting, key, team, m, e)) || (team && (rc = read_team_role(setting, key, v, m, e))))
			break;
		(*n)++; /* counted before its sources, so that cleanup frees those compiled */
		json_array_foreach(src, i, item)
		{
			if (!json_is_string(item)) {
				rc = err_set(e, ERR_INVALID, "%s: '%.200s'.source must be a list of strings", setting, key);
				break;
			}
			if ((rc = add_source_text(setting, key, json_string_value(item), m, e)))
				break;
		}
		if (rc)
			break;
	}
	json_decref(doc);
	return rc;
}

/* ROLE=PATTERN[,…]: PATTERN on the groups claim. */
static int read_short_roles(const char *text, const char *groups_claim, struct err *e)
{
	const char *setting = "--oidc-role-mapping";
	char key[ROLE_NAME_MAX + 1], pattern[PATTERN_MAX + 1], src[PATTERN_MAX + ROLE_NAME_MAX + 2];
	int rc;

	for (const char *p = text; *p;) {
		const char *comma = strchr(p, ','), *end = comma ? comma : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		struct mapping *m = &roles[n_roles];

		if (n_roles == MAPPINGS_MAX)
			return err_set(e, ERR_INVALID, "%s: more than %d entries", setting, MAPPINGS_MAX);
		if (!eq || eq == p || eq + 1 == end || str_fmt(key, sizeof key, "%.*s", (int)(eq - p), p) ||
		    str_fmt(pattern, sizeof pattern, "%.*s", (int)(end - eq - 1), eq + 1))
			return err_set(e, ERR_INVALID, "%s: '%.*s' is not ROLE=PATTERN", setting, (int)(end - p), p);
		str_fmt_cut(src, sizeof src, "%.*s", (int)(end - p), p);
		memset(m, 0, sizeof *m);
		if ((rc = read_key(setting, key, false, m, e)))
			return rc;
		n_roles++;
		if ((rc = add_source(setting, key, src, groups_claim, strlen(groups_claim), pattern, m, e)))
			return rc;
		p = comma ? comma + 1 : end;
	}
	return 0;
}

int oidc_mapping_init(const char *team_mapping, const char *role_mapping, const char *groups_claim, struct err *e)
{
	int rc = 0;

	oidc_mapping_cleanup();
	if (team_mapping && team_mapping[0])
		rc = read_json("--oidc-team-mapping", team_mapping, true, teams, &n_teams, e);
	if (rc == 0 && role_mapping && role_mapping[0]) {
		const char *p = role_mapping;
		while (isspace((unsigned char)*p))
			p++;
		rc = *p == '{' ? read_json("--oidc-role-mapping", p, false, roles, &n_roles, e)
			       : read_short_roles(p, groups_claim, e);
	}
	if (rc)
		oidc_mapping_cleanup();
	return rc;
}

static void free_all(struct mapping *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t s = 0; s < m[i].n_src; s++)
			regfree(&m[i].src[s].re);
}

void oidc_mapping_cleanup(void)
{
	free_all(teams, n_teams);
	free_all(roles, n_roles);
	n_teams = n_roles = 0;
}

static bool source_matches(const struct source *s, json_t *claims)
{
	json_t *v = json_object_get(claims, s->claim), *item;
	size_t i;

	if (!v || json_is_null(v))
		return regexec(&s->re, "", 0, NULL, 0) == 0;
	if (json_is_string(v))
		return regexec(&s->re, json_string_value(v), 0, NULL, 0) == 0;
	json_array_foreach(v, i, item)
	{
		if (json_is_string(item) && regexec(&s->re, json_string_value(item), 0, NULL, 0) == 0)
			return true;
	}
	return false;
}

static bool matches(const struct mapping *m, json_t *claims)
{
	for (size_t i = 0; i < m->n_src; i++)
		if (source_matches(&m->src[i], claims))
			return true;
	return false;
}

unsigned oidc_mapping_builtin_roles(unsigned had, json_t *claims)
{
	unsigned named = 0, given = 0;

	for (size_t i = 0; i < n_roles; i++) {
		named |= roles[i].builtin;
		if (roles[i].builtin && matches(&roles[i], claims))
			given |= roles[i].builtin;
	}
	return (had & ~named) | given;
}

static int apply_teams(struct store_conn *c, const struct user *u, json_t *claims, struct err *e)
{
	struct team t;
	enum team_role now;
	struct err why;
	int rc;

	for (size_t i = 0; i < n_teams; i++) {
		bool want = matches(&teams[i], claims);

		if (store_team_get(c, teams[i].key, &t, &why)) {
			if (why.code != ERR_NOT_FOUND)
				return err_set(e, why.code, "%s", why.msg);
			LOG_W("OIDC: --oidc-team-mapping names the team %s, which does not exist: skipped", teams[i].key);
			continue;
		}
		if ((rc = store_team_member_role(c, t.id, u->id, &now, e)))
			return rc;
		if (want && now != teams[i].role)
			rc = store_team_member_set(c, t.id, u->id, teams[i].role, e);
		else if (!want && now != TEAM_ROLE_NONE)
			rc = store_team_member_remove(c, t.id, u->id, e);
		if (rc)
			return rc;
	}
	return 0;
}

/* Whether ids[0..n) holds id. */
static bool has_id(char (*ids)[UUID_STR_LEN], size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ids[i], id) == 0)
			return true;
	return false;
}

static int apply_roles(struct store_conn *c, const struct user *u, json_t *claims, struct err *e)
{
	char(*ids)[UUID_STR_LEN] = NULL;
	struct role *held = NULL, r;
	size_t n_held = 0, n = 0;
	bool changed = false;
	struct err why;
	int rc;

	if ((rc = store_user_roles_list(c, u->id, &held, &n_held, e)))
		return rc;
	if (!(ids = calloc(n_held + n_roles + 1, sizeof *ids))) {
		free(held);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n_held; i++)
		memcpy(ids[n++], held[i].id, UUID_STR_LEN);
	for (size_t i = 0; rc == 0 && i < n_roles; i++) {
		bool want;
		if (roles[i].builtin)
			continue;
		if (store_role_find(c, roles[i].key, &r, &why)) {
			if (why.code != ERR_NOT_FOUND)
				rc = err_set(e, why.code, "%s", why.msg);
			else
				LOG_W("OIDC: --oidc-role-mapping names the role %s, which does not exist: skipped",
				      roles[i].key);
			continue;
		}
		want = matches(&roles[i], claims);
		if (want && !has_id(ids, n, r.id)) {
			memcpy(ids[n++], r.id, UUID_STR_LEN);
			changed = true;
		} else if (!want && has_id(ids, n, r.id)) {
			for (size_t k = 0; k < n; k++)
				if (strcmp(ids[k], r.id) == 0)
					memcpy(ids[k], ids[--n], UUID_STR_LEN);
			changed = true;
		}
	}
	if (rc == 0 && changed)
		rc = store_user_roles_set(c, u->id, ids, n, e);
	free(ids);
	free(held);
	return rc;
}

int oidc_mapping_apply(struct store_conn *c, const struct user *u, json_t *claims, struct err *e)
{
	int rc;

	if (n_teams == 0 && n_roles == 0)
		return 0;
	if ((rc = store_tx_begin(c, e)))
		return rc;
	if ((rc = apply_teams(c, u, claims, e)) == 0 && (rc = apply_roles(c, u, claims, e)) == 0)
		rc = store_tx_commit(c, e);
	if (rc)
		store_tx_rollback(c);
	return rc;
}
