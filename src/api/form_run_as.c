#include "api/form_run_as.h"

#include <stdio.h>
#include <string.h>

#include "auth/ldap_group_match.h"
#include "store/ldap_groups.h"

#define GROUPS_TEXT_MAX 2048

static void add_group(json_t *out, const json_t *g)
{
	size_t i;
	const json_t *v;

	if (json_is_string(g))
		json_array_append(out, (json_t *)g);
	else
		json_array_foreach(g, i, v) if (json_is_string(v)) json_array_append(out, (json_t *)v);
}

/* The groups of runAs.ldap in any of Concord's spellings (a new array; [] when none). */
static json_t *run_as_groups(const json_t *ldap)
{
	json_t *out = json_array();
	const json_t *item;
	size_t i;

	if (json_is_object(ldap))
		add_group(out, json_object_get(ldap, "group"));
	else
		json_array_foreach(ldap, i, item) if (json_is_object(item))
		    add_group(out, json_object_get(item, "group"));
	return out;
}

static bool names_user(const json_t *users, const char *username)
{
	const json_t *u;
	size_t i;

	if (json_is_string(users))
		return strcmp(json_string_value(users), username) == 0;
	json_array_foreach(users, i,
			   u) if (json_is_string(u) && strcmp(json_string_value(u), username) == 0) return true;
	return false;
}

static bool in_groups(const json_t *patterns, const json_t *groups)
{
	const json_t *p, *g;
	size_t i, j;

	json_array_foreach(patterns, i, p) json_array_foreach(
	    groups, j, g) if (ldap_group_matches(json_string_value(p), json_string_value(g))) return true;
	return false;
}

static int refuse_groups(struct api_call *c, const json_t *patterns)
{
	char text[GROUPS_TEXT_MAX];
	size_t i, o = 0;
	const json_t *p;

	text[0] = '\0';
	json_array_foreach(patterns, i, p)
	{
		int n = snprintf(text + o, sizeof text - o, "%s%s", i ? ", " : "", json_string_value(p));
		if (n < 0 || (size_t)n >= sizeof text - o)
			break;
		o += (size_t)n;
	}
	return api_fail(c, ERR_FORBIDDEN,
			"The current user (%s) doesn't have the necessary permissions to resume process. Expected LDAP "
			"group(s) '[%s]'",
			c->who.user.username, text);
}

static int check_groups(struct api_call *c, const json_t *ldap)
{
	json_t *patterns = run_as_groups(ldap), *groups = NULL;
	int rc;

	rc = store_user_ldap_groups_json(c->db, c->who.user.id, &groups, &c->err);
	if (rc == 0 && !in_groups(patterns, groups))
		rc = refuse_groups(c, patterns);
	json_decref(groups);
	json_decref(patterns);
	return rc;
}

int api_form_run_as_check(struct api_call *c, const struct process *p, const json_t *form, bool *restricted)
{
	const json_t *ra = json_object_get(json_object_get(form, "options"), "runAs");
	const json_t *users = json_object_get(ra, "username"), *ldap = json_object_get(ra, "ldap");

	*restricted = json_is_object(ra) && ((users && !json_is_null(users)) || (ldap && !json_is_null(ldap)));
	if (!*restricted || principal_is_admin(&c->who))
		return 0;
	if ((users && !json_is_null(users) && !names_user(users, c->who.user.username)) ||
	    !principal_acts_in(&c->who, p->project_id))
		return api_fail(c, ERR_FORBIDDEN,
				"The current user (%s) doesn't have the necessary permissions to access the form.",
				c->who.user.username);
	return ldap && !json_is_null(ldap) ? check_groups(c, ldap) : 0;
}
