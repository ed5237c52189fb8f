/* Conditions of generic triggers, matched as Concord's event matcher does (docs/api.md
 * "Events"): a string condition is a regular expression the whole value must match
 * (POSIX extended syntax here), other scalars compare equal, maps match key by key
 * (recursively; a key missing from the event is null), a list against a list matches when
 * every condition item matches some item of the event's list, and a list against a scalar
 * when one of its items matches. */
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "triggers/internal.h"

#define PATTERN_MAX 1024
#define DEPTH_MAX 32

/* Compiles "^(pattern)$": Java's String.matches is a whole-string match. */
static int compile(const char *pattern, regex_t *re, struct err *e)
{
	char anchored[PATTERN_MAX + 8], msg[256];
	int rc;

	if (strlen(pattern) > PATTERN_MAX)
		return err_set(e, ERR_INVALID, "the regular expression '%.32s…' is longer than %d characters", pattern,
			       PATTERN_MAX);
	if (str_fmt(anchored, sizeof anchored, "^(%s)$", pattern))
		return err_set(e, ERR_INTERNAL, "the regular expression '%.32s…' is too long", pattern);
	if ((rc = regcomp(re, anchored, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, re, msg, sizeof msg);
		return err_set(e, ERR_INVALID, "'%.128s' is not a valid regular expression: %s", pattern, msg);
	}
	return 0;
}

static bool string_matches(const char *value, const char *pattern)
{
	regex_t re;
	struct err ignored;
	bool ok;

	if (compile(pattern, &re, &ignored))
		return false;
	ok = regexec(&re, value, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

static bool match(const json_t *data, const json_t *cond, int depth);

static bool match_any(const json_t *data, const json_t *conds, int depth)
{
	size_t i;
	json_t *c;

	json_array_foreach(conds, i, c) if (match(data, c, depth + 1)) return true;
	return false;
}

static bool match_object(const json_t *data, const json_t *cond, int depth)
{
	const char *key;
	json_t *c;

	json_object_foreach((json_t *)cond, key, c) if (!match(json_object_get(data, key), c, depth + 1)) return false;
	return true;
}

static bool match_array(const json_t *data, const json_t *cond, int depth)
{
	size_t i, j;
	json_t *c, *d;

	if (json_array_size(cond) > json_array_size(data))
		return false;
	json_array_foreach(cond, i, c)
	{
		bool found = false;
		json_array_foreach(data, j, d) if (!found && match(d, c, depth + 1)) found = true;
		if (!found)
			return false;
	}
	return true;
}

static bool match(const json_t *data, const json_t *cond, int depth)
{
	bool data_null = !data || json_is_null(data), cond_null = !cond || json_is_null(cond);

	if (depth > DEPTH_MAX)
		return false;
	if (data_null || cond_null)
		return data_null && cond_null;
	if (json_is_object(cond) && json_is_object(data))
		return match_object(data, cond, depth);
	if (json_is_string(cond) && json_is_string(data))
		return string_matches(json_string_value(data), json_string_value(cond));
	if (json_is_array(cond) && json_is_array(data))
		return match_array(data, cond, depth);
	if (json_is_array(cond))
		return match_any(data, cond, depth);
	return json_equal((json_t *)data, (json_t *)cond) != 0;
}

bool triggers_conditions_match(const json_t *event, const json_t *conditions)
{
	if (!conditions || json_is_null(conditions) ||
	    (json_is_object(conditions) && json_object_size(conditions) == 0))
		return true;
	return match(event, conditions, 0);
}

static int check(const json_t *v, int depth, struct err *e)
{
	const char *key;
	size_t i;
	json_t *c;
	regex_t re;

	if (depth > DEPTH_MAX)
		return err_set(e, ERR_INVALID, "nested deeper than %d levels", DEPTH_MAX);
	if (json_is_string(v)) {
		if (compile(json_string_value(v), &re, e))
			return -ERR_INVALID;
		regfree(&re);
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, c) if (check(c, depth + 1, e)) return -ERR_INVALID;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c) if (check(c, depth + 1, e)) return -ERR_INVALID;
	}
	return 0;
}

int triggers_conditions_check(const json_t *conditions, struct err *e)
{
	return check(conditions, 0, e);
}

bool triggers_regex_quote(const char *s, char *out, size_t cap)
{
	size_t n = 0;

	for (; *s; s++) {
		if (strchr("\\^$.|?*+()[]{}", *s)) {
			if (n + 1 >= cap)
				return false;
			out[n++] = '\\';
		}
		if (n + 1 >= cap)
			return false;
		out[n++] = *s;
	}
	out[n] = '\0';
	return true;
}
