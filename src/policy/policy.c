/* Merging, numbers, patterns, messages and the action-rule verdicts of policies
 * (policy/policy.h). */
#include "policy/policy.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

void policy_rules_merge(json_t *into, const json_t *over)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)over, k, v)
	{
		json_t *cur = json_object_get(into, k);
		if (json_is_object(cur) && json_is_object(v))
			policy_rules_merge(cur, v);
		else
			json_object_set_new(into, k, json_deep_copy(v));
	}
}

int64_t policy_number(const json_t *v)
{
	const char *s;
	int64_t n = 0;

	if (json_is_integer(v))
		return json_integer_value(v) >= 0 ? json_integer_value(v) : -1;
	if (!json_is_string(v) || !*(s = json_string_value(v)) || strlen(s) > 18)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		n = n * 10 + (*s - '0');
	}
	return n;
}

int64_t policy_size_bytes(const json_t *v)
{
	const char *s = json_string_value(v);
	int64_t n = policy_number(v), unit = 1;
	size_t l;

	if (n >= 0 || !s || (l = strlen(s)) < 2 || l > 16)
		return n;
	switch (s[l - 1] | 0x20) {
	case 't':
		unit *= 1024;
		/* fall through */
	case 'g':
		unit *= 1024;
		/* fall through */
	case 'm':
		unit *= 1024;
		/* fall through */
	case 'k':
		unit *= 1024;
		break;
	default:
		return -1;
	}
	n = 0;
	for (size_t i = 0; i + 1 < l; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		n = n * 10 + (s[i] - '0');
	}
	return n * unit;
}

bool policy_match(const char *pattern, const char *s)
{
	regex_t re;
	regmatch_t m;
	bool ok;

	if (!pattern || !s)
		return false;
	if (regcomp(&re, pattern, REG_EXTENDED))
		return strcmp(pattern, s) == 0;
	ok = regexec(&re, s, 1, &m, 0) == 0 && m.rm_so == 0 && (size_t)m.rm_eo == strlen(s);
	regfree(&re);
	return ok;
}

int policy_refuse(struct err *e, enum err_code code, const char *policy, const json_t *rule, const char *dflt,
		  const char *a0, const char *a1)
{
	const char *msg = json_string_value(json_object_get(rule, "msg"));
	char text[768];
	size_t n = 0;

	if (!msg)
		msg = dflt;
	for (const char *p = msg; *p && n + 1 < sizeof text; p++) {
		const char *arg = NULL;
		if (p[0] == '{' && (p[1] == '0' || p[1] == '1') && p[2] == '}')
			arg = p[1] == '0' ? a0 : a1;
		if (arg) {
			size_t l = strlen(arg);
			if (l > sizeof text - 1 - n)
				l = sizeof text - 1 - n;
			memcpy(text + n, arg, l);
			n += l;
			p += 2;
		} else {
			text[n++] = *p;
		}
	}
	text[n] = '\0';
	return err_set(e, code, "%s (policy '%s')", text, policy);
}

static const json_t *first_match(const json_t *list, policy_rule_match match, void *ctx)
{
	size_t i;
	json_t *r;

	json_array_foreach(list, i, r) if (json_is_object(r) && match(r, ctx)) return r;
	return NULL;
}

enum policy_verdict policy_decide(const json_t *group, policy_rule_match match, void *ctx, const json_t **rule)
{
	*rule = NULL;
	if (!json_is_object(group))
		return POLICY_PASS;
	if ((*rule = first_match(json_object_get(group, "allow"), match, ctx)))
		return POLICY_PASS;
	if ((*rule = first_match(json_object_get(group, "deny"), match, ctx)))
		return POLICY_DENY;
	if ((*rule = first_match(json_object_get(group, "warn"), match, ctx)))
		return POLICY_WARN;
	return POLICY_PASS;
}

/* A rule's value against an actual one: equal JSON, or a string pattern matching the text
 * of a string; null matches a missing value. */
static bool value_matches(const json_t *want, const json_t *have)
{
	if (json_is_null(want))
		return !have || json_is_null(have);
	if (!have)
		return false;
	if (json_is_string(want) && json_is_string(have))
		return policy_match(json_string_value(want), json_string_value(have));
	return json_equal((json_t *)want, (json_t *)have);
}

struct task_call {
	const char *task, *method;
	const json_t *in, *args;
};

static bool param_matches(const json_t *p, const struct task_call *tc)
{
	const char *name = json_string_value(json_object_get(p, "name"));
	const json_t *have = NULL, *want;
	size_t i;

	if (tc->in && name)
		have = json_object_get(tc->in, name);
	else if (tc->args && json_is_integer(json_object_get(p, "index")))
		have = json_array_get(tc->args, (size_t)json_integer_value(json_object_get(p, "index")));
	json_array_foreach(json_object_get(p, "values"), i, want) if (value_matches(want, have)) return true;
	return false;
}

static bool task_rule_matches(const json_t *rule, void *ctx)
{
	const struct task_call *tc = ctx;
	const char *name = json_string_value(json_object_get(rule, "taskName"));
	const char *method = json_string_value(json_object_get(rule, "method"));
	const json_t *p;
	size_t i;

	if (!name)
		name = json_string_value(json_object_get(rule, "name"));
	if ((name && !policy_match(name, tc->task)) || (method && !policy_match(method, tc->method)))
		return false;
	json_array_foreach(json_object_get(rule, "params"), i, p) if (!param_matches(p, tc)) return false;
	return true;
}

enum policy_verdict policy_task_check(const json_t *rules, const char *task, const char *method, const json_t *in,
				      const json_t *args, const json_t **rule)
{
	struct task_call tc = {task, method ? method : "execute", json_is_object(in) ? in : NULL, args};

	return policy_decide(json_object_get(rules, "task"), task_rule_matches, &tc, rule);
}

static bool cond_matches(const json_t *want, const json_t *have);

static bool any_matches(const json_t *wants, const json_t *have)
{
	size_t i, j;
	json_t *w, *h;

	json_array_foreach((json_t *)wants, i, w)
	{
		if (!json_is_array(have) && cond_matches(w, have))
			return true;
		json_array_foreach((json_t *)have, j, h) if (cond_matches(w, h)) return true;
	}
	return false;
}

static bool cond_matches(const json_t *want, const json_t *have)
{
	const char *k;
	json_t *v;
	char text[64];

	if (json_is_object(want)) {
		if (!json_is_object(have))
			return false;
		json_object_foreach((json_t *)want, k, v) if (!cond_matches(v, json_object_get(have, k))) return false;
		return true;
	}
	if (json_is_array(want))
		return any_matches(want, have);
	if (json_is_string(want) && json_is_string(have))
		return policy_match(json_string_value(want), json_string_value(have));
	if (json_is_string(want) && (json_is_number(have) || json_is_boolean(have))) {
		if (json_is_boolean(have))
			str_fmt_cut(text, sizeof text, "%s", json_is_true(have) ? "true" : "false");
		else if (json_is_integer(have))
			str_fmt_cut(text, sizeof text, "%lld", (long long)json_integer_value(have));
		else
			str_fmt_cut(text, sizeof text, "%g", json_real_value(have));
		return policy_match(json_string_value(want), text);
	}
	return have && json_equal((json_t *)want, (json_t *)have);
}

struct entity_call {
	const char *entity, *action;
	const json_t *subject;
};

static bool entity_rule_matches(const json_t *rule, void *ctx)
{
	const struct entity_call *ec = ctx;
	const char *entity = json_string_value(json_object_get(rule, "entity"));
	const char *action = json_string_value(json_object_get(rule, "action"));
	const json_t *cond = json_object_get(rule, "conditions");

	if ((entity && !policy_match(entity, ec->entity)) || (action && !policy_match(action, ec->action)))
		return false;
	return !cond || cond_matches(cond, ec->subject);
}

enum policy_verdict policy_entity_check(const json_t *rules, const char *entity, const char *action,
					const json_t *subject, const json_t **rule)
{
	struct entity_call ec = {entity, action, subject};

	return policy_decide(json_object_get(rules, "entity"), entity_rule_matches, &ec, rule);
}
