/* What a valid policy document is (policy_validate, policy/policy.h): every rule Concord
 * documents, each of its shape.  Unknown keys are refused, so that a misspelt rule is
 * never silently a rule that does nothing. */
#include <regex.h>
#include <string.h>

#include "base/str.h"

#include "base/duration.h"
#include "policy/policy.h"

enum ftype { F_STR, F_NUM, F_BOOL, F_OBJ, F_ARR, F_ANY, F_REGEX, F_REGEXES, F_STRS, F_DURATION, F_SIZE, F_PARAMS };

struct field {
	const char *name;
	enum ftype type;
};

static const char *kind_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static int bad(struct err *e, const char *path, const char *key, const char *want, const json_t *v)
{
	return err_set(e, ERR_INVALID, "Invalid policy: %s%s%s: expected %s, got %s", path, key ? "." : "",
		       key ? key : "", want, kind_of(v));
}

static int regex_ok(const char *s, const char *path, const char *key, struct err *e)
{
	regex_t re;
	int rc = regcomp(&re, s, REG_EXTENDED | REG_NOSUB);

	if (rc == 0) {
		regfree(&re);
		return 0;
	}
	return err_set(e, ERR_INVALID, "Invalid policy: %s.%s: invalid regular expression '%.128s'", path, key, s);
}

static int strings(const json_t *v, bool regex, const char *path, const char *key, struct err *e)
{
	size_t i;
	json_t *s;

	if (!json_is_array(v))
		return bad(e, path, key, regex ? "an array of patterns" : "an array of strings", v);
	json_array_foreach(v, i, s)
	{
		if (!json_is_string(s))
			return bad(e, path, key, regex ? "an array of patterns" : "an array of strings", s);
		if (regex && regex_ok(json_string_value(s), path, key, e))
			return -1;
	}
	return 0;
}

static int params(const json_t *v, const char *path, const char *key, struct err *e)
{
	size_t i;
	json_t *p;

	if (!json_is_array(v))
		return bad(e, path, key, "an array of objects", v);
	json_array_foreach(v, i, p) if (!json_is_object(p)) return bad(e, path, key, "an array of objects", p);
	return 0;
}

static int field_ok(const json_t *v, enum ftype t, const char *path, const char *key, struct err *e)
{
	struct err ignored;
	int64_t secs;

	switch (t) {
	case F_STR:
		return json_is_string(v) ? 0 : bad(e, path, key, "a string", v);
	case F_NUM:
		return policy_number(v) >= 0 ? 0 : bad(e, path, key, "a number >= 0", v);
	case F_BOOL:
		return json_is_boolean(v) ? 0 : bad(e, path, key, "a boolean", v);
	case F_OBJ:
		return json_is_object(v) ? 0 : bad(e, path, key, "an object", v);
	case F_ARR:
		return json_is_array(v) ? 0 : bad(e, path, key, "an array", v);
	case F_REGEX:
		return json_is_string(v) ? regex_ok(json_string_value(v), path, key, e)
					 : bad(e, path, key, "a pattern (string)", v);
	case F_REGEXES:
	case F_STRS:
		return strings(v, t == F_REGEXES, path, key, e);
	case F_DURATION:
		return json_is_string(v) && duration_json((json_t *)v, key, &secs, &ignored) == 0
			   ? 0
			   : bad(e, path, key, "an ISO-8601 duration (\"PT1H\")", v);
	case F_SIZE:
		return policy_size_bytes(v) >= 0 ? 0 : bad(e, path, key, "a size (bytes, or a number with K, M, G or T)", v);
	case F_PARAMS:
		return params(v, path, key, e);
	default:
		return 0;
	}
}

static const char *const STATUSES[] = {"NEW",	    "PREPARING", "ENQUEUED", "WAITING", "STARTING",  "RUNNING",
				       "SUSPENDED", "RESUMING",	 "FINISHED", "FAILED",	"CANCELLED", "TIMED_OUT"};

/* An object with only the fields of fs (NULL name ends it); fs NULL with statuses: the
 * queue's process rules, {msg, <STATUS>: number}. */
static int fields(const json_t *v, const struct field *fs, bool statuses, const char *path, struct err *e)
{
	const char *k;
	json_t *x;

	if (!json_is_object(v))
		return bad(e, path, NULL, "an object", v);
	json_object_foreach((json_t *)v, k, x)
	{
		const struct field *f = fs;
		while (f && f->name && strcmp(f->name, k) != 0)
			f++;
		if (f && f->name) {
			if (field_ok(x, f->type, path, k, e))
				return -1;
			continue;
		}
		if (statuses) {
			size_t i = 0;
			while (i < sizeof STATUSES / sizeof STATUSES[0] && strcmp(STATUSES[i], k) != 0)
				i++;
			if (i < sizeof STATUSES / sizeof STATUSES[0]) {
				if (field_ok(x, F_NUM, path, k, e))
					return -1;
				continue;
			}
		}
		return err_set(e, ERR_INVALID, "Invalid policy: %s: unknown field '%.64s'%s", path, k,
			       statuses ? " (expected msg or a process status)" : "");
	}
	return 0;
}

static const struct field MSG_ONLY[] = {{"msg", F_STR}, {NULL, 0}};
static const struct field SIZE_RULE[] = {{"msg", F_STR}, {"maxSizeInBytes", F_NUM}, {NULL, 0}};
static const struct field WORKSPACE[] = {
    {"msg", F_STR}, {"maxSizeInBytes", F_NUM}, {"ignoredFiles", F_REGEXES}, {"maxFileCount", F_NUM}, {NULL, 0}};
static const struct field RUNTIME[] = {{"msg", F_STR}, {"runtimes", F_STRS}, {NULL, 0}};
static const struct field CRON[] = {{"msg", F_STR}, {"minInterval", F_NUM}, {NULL, 0}};
static const struct field CONCURRENT[] = {
    {"msg", F_STR}, {"maxPerOrg", F_NUM}, {"maxPerProject", F_NUM}, {"max", F_NUM}, {NULL, 0}};
static const struct field FORK[] = {{"msg", F_STR}, {"max", F_NUM}, {NULL, 0}};
static const struct field TIMEOUT[] = {{"msg", F_STR}, {"max", F_DURATION}, {NULL, 0}};
static const struct field JS_DATA[] = {{"msg", F_STR}, {"maxSizeInBytes", F_NUM}, {NULL, 0}};
static const struct field KV[] = {{"msg", F_STR}, {"maxEntries", F_NUM}, {NULL, 0}};
static const struct field JS_STORE[] = {{"msg", F_STR}, {"maxNumberPerOrg", F_NUM}, {NULL, 0}};
static const struct field TASK[] = {{"msg", F_STR},	 {"taskName", F_REGEX}, {"name", F_REGEX},
				    {"method", F_REGEX}, {"params", F_PARAMS},	{NULL, 0}};
static const struct field ENTITY[] = {
    {"msg", F_STR}, {"entity", F_REGEX}, {"action", F_REGEX}, {"conditions", F_OBJ}, {NULL, 0}};
static const struct field FILE_RULE[] = {
    {"msg", F_STR}, {"maxSize", F_SIZE}, {"type", F_STR}, {"names", F_REGEXES}, {NULL, 0}};
static const struct field ANSIBLE[] = {{"msg", F_STR}, {"action", F_REGEX}, {"params", F_PARAMS}, {NULL, 0}};
static const struct field CONTAINER[] = {{"msg", F_STR}, {"maxRam", F_SIZE}, {"maxCpu", F_NUM}, {NULL, 0}};
static const struct field PROTECTED_TASK[] = {{"names", F_STRS}, {NULL, 0}};
static const struct field STATE[] = {
    {"msg", F_STR}, {"maxSizeInBytes", F_NUM}, {"maxFilesCount", F_NUM}, {"patterns", F_REGEXES}, {NULL, 0}};
static const struct field DEPENDENCY[] = {
    {"msg", F_STR},	    {"scheme", F_STR},	  {"groupId", F_STR}, {"artifactId", F_STR},
    {"fromVersion", F_STR}, {"toVersion", F_STR}, {NULL, 0}};

/* allow/deny/warn lists of rules of one shape. */
static int actions(const json_t *v, const struct field *rule, const char *path, struct err *e)
{
	const char *k;
	json_t *list, *r;
	size_t i;
	char at[128];

	if (!json_is_object(v))
		return bad(e, path, NULL, "an object with allow, deny or warn", v);
	json_object_foreach((json_t *)v, k, list)
	{
		if (strcmp(k, "allow") && strcmp(k, "deny") && strcmp(k, "warn"))
			return err_set(e, ERR_INVALID,
				       "Invalid policy: %s: unknown field '%.64s' (expected allow, deny or warn)", path,
				       k);
		if (!json_is_array(list))
			return bad(e, path, k, "an array of rules", list);
		json_array_foreach(list, i, r)
		{
			str_fmt_cut(at, sizeof at, "%s.%s[%zu]", path, k, i);
			if (fields(r, rule, false, at, e))
				return -1;
		}
	}
	return 0;
}

static int queue_rule(const json_t *v, const char *path, struct err *e)
{
	static const char *const PROC[] = {"process", "processPerOrg", "processPerProject"};
	const char *k;
	json_t *x;
	char at[128];

	if (!json_is_object(v))
		return bad(e, path, NULL, "an object", v);
	json_object_foreach((json_t *)v, k, x)
	{
		const struct field *fs = !strcmp(k, "concurrent")	? CONCURRENT
					 : !strcmp(k, "forkDepth")	? FORK
					 : !strcmp(k, "processTimeout") ? TIMEOUT
									: NULL;
		bool proc = false;
		for (size_t i = 0; i < 3; i++)
			proc |= strcmp(k, PROC[i]) == 0;
		str_fmt_cut(at, sizeof at, "%s.%s", path, k);
		if (!fs && !proc)
			return err_set(e, ERR_INVALID,
				       "Invalid policy: %s: unknown rule '%.64s' (expected concurrent, forkDepth, "
				       "processTimeout, process, processPerOrg or processPerProject)",
				       path, k);
		if (fields(x, proc ? MSG_ONLY : fs, proc, at, e))
			return -1;
	}
	return 0;
}

static int json_store_rule(const json_t *v, const char *path, struct err *e)
{
	static const struct field PARTS[] = {{"data", F_OBJ}, {"store", F_OBJ}, {NULL, 0}};
	char at[128];

	if (fields(v, PARTS, false, path, e))
		return -1;
	str_fmt_cut(at, sizeof at, "%s.data", path);
	if (json_object_get(v, "data") && fields(json_object_get(v, "data"), JS_DATA, false, at, e))
		return -1;
	str_fmt_cut(at, sizeof at, "%s.store", path);
	return json_object_get(v, "store") ? fields(json_object_get(v, "store"), JS_STORE, false, at, e) : 0;
}

enum shape { S_FIELDS, S_ACTIONS, S_QUEUE, S_JSONSTORE, S_OBJECT, S_ARRAY };

static const struct rule_kind {
	const char *key;
	enum shape shape;
	const struct field *fields;
} KINDS[] = {
    {"attachments", S_FIELDS, SIZE_RULE},  {"rawPayload", S_FIELDS, SIZE_RULE},
    {"workspace", S_FIELDS, WORKSPACE},	   {"runtime", S_FIELDS, RUNTIME},
    {"cronTrigger", S_FIELDS, CRON},	   {"queue", S_QUEUE, NULL},
    {"jsonStore", S_JSONSTORE, NULL},	   {"processCfg", S_OBJECT, NULL},
    {"defaultProcessCfg", S_OBJECT, NULL}, {"task", S_ACTIONS, TASK},
    {"entity", S_ACTIONS, ENTITY},	   {"file", S_ACTIONS, FILE_RULE},
    {"ansible", S_ACTIONS, ANSIBLE},	   {"dependency", S_ACTIONS, DEPENDENCY},
    {"dependencyRewrite", S_ARRAY, NULL},  {"dependencyVersions", S_ARRAY, NULL},
    {"kv", S_FIELDS, KV},		   {"container", S_FIELDS, CONTAINER},
    {"protectedTask", S_FIELDS, PROTECTED_TASK}, {"state", S_ACTIONS, STATE},
};

int policy_validate(const json_t *rules, struct err *e)
{
	const char *k;
	json_t *v;
	char at[96];

	if (!json_is_object(rules))
		return bad(e, "rules", NULL, "an object", rules);
	json_object_foreach((json_t *)rules, k, v)
	{
		const struct rule_kind *r = KINDS;
		while (r < KINDS + sizeof KINDS / sizeof KINDS[0] && strcmp(r->key, k) != 0)
			r++;
		if (r == KINDS + sizeof KINDS / sizeof KINDS[0])
			return err_set(e, ERR_INVALID, "Invalid policy: rules: unknown rule '%.64s'", k);
		str_fmt_cut(at, sizeof at, "rules.%s", k);
		switch (r->shape) {
		case S_FIELDS:
			if (fields(v, r->fields, false, at, e))
				return -1;
			break;
		case S_ACTIONS:
			if (actions(v, r->fields, at, e))
				return -1;
			break;
		case S_QUEUE:
			if (queue_rule(v, at, e))
				return -1;
			break;
		case S_JSONSTORE:
			if (json_store_rule(v, at, e))
				return -1;
			break;
		case S_OBJECT:
			if (!json_is_object(v))
				return bad(e, at, NULL, "an object", v);
			break;
		case S_ARRAY:
			if (!json_is_array(v))
				return bad(e, at, NULL, "an array", v);
			break;
		}
	}
	return 0;
}
