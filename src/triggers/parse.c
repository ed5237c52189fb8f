/* The `triggers:` sections of a loaded definition → trigger rows (docs/flows.md "Triggers").
 * Read from the YAML nodes (m->docs) so that every error names file:line:col. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/datetime.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/yaml.h"
#include "triggers/cron.h"
#include "triggers/internal.h"

#define EVENT_SOURCE_MAX 128

static const char *const cron_keys[] = {"spec",		  "timezone",  "entryPoint", "arguments",
					"activeProfiles", "exclusive", "runAs",	     NULL};
static const char *const manual_keys[] = {"name", "entryPoint", "arguments", "activeProfiles", NULL};
static const char *const generic_keys[] = {"version",	     "entryPoint", "conditions",   "arguments",
					   "activeProfiles", "exclusive",  "useInitiator", NULL};

/* Trigger kinds Concord knows that this server stores but does not fire itself. */
static const char *const stored_only[] = {"github", "oneops", NULL};

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

bool triggers_is_generic(const char *event_source)
{
	return strcmp(event_source, "cron") != 0 && strcmp(event_source, "manual") != 0 &&
	       !in_list(stored_only, event_source);
}

__attribute__((format(printf, 3, 4))) static int perr(struct err *e, const struct ynode *n, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	str_vfmt_cut(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return err_set(e, ERR_INVALID, "triggers: %s:%d:%d: %s", n->file ? n->file : "concord.yml", n->line, n->col,
		       msg);
}

static bool valid_source(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > EVENT_SOURCE_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '_' || *s == '.'))
			return false;
	return true;
}

static int want_string(const struct ynode *v, const char *kind, const char *key, struct err *e)
{
	if (v->kind != YN_SCALAR || !v->s[0])
		return perr(e, v, "%s trigger: '%s' must be a non-empty string, got %s", kind, key, ynode_type_name(v));
	if (strlen(v->s) != v->len) /* "\0" in a quoted scalar: C would read a shorter name */
		return perr(e, v, "%s trigger: '%s' must not contain a NUL character (\\0)", kind, key);
	return 0;
}

/* The keys of a trigger's map: only those of the kind, and the required ones present. */
static int check_keys(const struct ynode *map, const char *kind, const char *const *allowed, const char *required,
		      const struct ynode *name_node, struct err *e)
{
	for (size_t i = 0; i < map->n; i++)
		if (!in_list(allowed, map->kids[2 * i]->s))
			return perr(e, map->kids[2 * i], "%s trigger: unknown key '%s'", kind, map->kids[2 * i]->s);
	if (required && !ynode_get(map, required))
		return perr(e, name_node, "%s trigger: '%s' is required", kind, required);
	return 0;
}

static int check_entry_point(const struct model *m, const struct ynode *map, const char *kind, struct err *e)
{
	const struct ynode *v = ynode_get(map, "entryPoint");

	if (!v)
		return 0;
	if (want_string(v, kind, "entryPoint", e))
		return -1;
	if (!model_flow(m, v->s))
		return perr(e, v, "%s trigger: entryPoint '%s' is not a flow of the definition", kind, v->s);
	return 0;
}

/* arguments (map), activeProfiles (list of strings), exclusive (a group name or {group, mode}). */
static int check_common(const struct ynode *map, const char *kind, struct err *e)
{
	const struct ynode *v;

	if ((v = ynode_get(map, "arguments")) && v->kind != YN_MAP)
		return perr(e, v, "%s trigger: 'arguments' must be a map, got %s", kind, ynode_type_name(v));
	if ((v = ynode_get(map, "activeProfiles"))) {
		if (v->kind != YN_SEQ)
			return perr(e, v, "%s trigger: 'activeProfiles' must be a list, got %s", kind,
				    ynode_type_name(v));
		for (size_t i = 0; i < v->n; i++)
			if (want_string(v->kids[i], kind, "activeProfiles", e))
				return -1;
	}
	if ((v = ynode_get(map, "exclusive"))) {
		const struct ynode *g = v->kind == YN_MAP ? ynode_get(v, "group") : v, *mode;
		if (v->kind != YN_MAP && v->kind != YN_SCALAR)
			return perr(e, v, "%s trigger: 'exclusive' must be a group name or a map, got %s", kind,
				    ynode_type_name(v));
		if (!g || want_string(g, kind, "exclusive.group", e))
			return g ? -1 : perr(e, v, "%s trigger: 'exclusive.group' is required", kind);
		mode = v->kind == YN_MAP ? ynode_get(v, "mode") : NULL;
		if (mode && (mode->kind != YN_SCALAR ||
			     (strcmp(mode->s, "cancel") && strcmp(mode->s, "cancelOld") && strcmp(mode->s, "wait"))))
			return perr(e, mode, "%s trigger: 'exclusive.mode' must be one of cancel, cancelOld, wait",
				    kind);
	}
	return 0;
}

/* runAs {withSecret: <name>}: the process runs as the owner of the API key in that secret
 * (run_as.c reads it when the trigger fires). */
static int check_run_as(const struct ynode *v, struct err *e)
{
	const struct ynode *name;

	if (!v)
		return 0;
	if (v->kind != YN_MAP)
		return perr(e, v, "cron trigger: 'runAs' must be a map with 'withSecret', got %s", ynode_type_name(v));
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->kids[2 * i]->s, "withSecret") != 0)
			return perr(e, v->kids[2 * i], "cron trigger: unknown key 'runAs.%s' (withSecret)",
				    v->kids[2 * i]->s);
	if (!(name = ynode_get(v, "withSecret")))
		return perr(e, v, "cron trigger: 'runAs.withSecret' is required");
	return want_string(name, "cron", "runAs.withSecret", e);
}

static int check_cron(const struct ynode *map, struct err *e)
{
	const struct ynode *spec = ynode_get(map, "spec"), *zone = ynode_get(map, "timezone");
	struct cron_spec cs;
	struct tz *z;
	struct err ce;

	if (want_string(spec, "cron", "spec", e))
		return -1;
	if (cron_parse(spec->s, &cs, &ce))
		return perr(e, spec, "%s", ce.msg);
	if (check_run_as(ynode_get(map, "runAs"), e))
		return -1;
	if (zone) {
		if (want_string(zone, "cron", "timezone", e))
			return -1;
		if (!(z = tz_load(zone->s, &ce)))
			return perr(e, zone, "%s", ce.msg);
		tz_free(z);
	}
	return 0;
}

static int check_generic(const char *kind, const struct ynode *map, struct err *e)
{
	const struct ynode *v = ynode_get(map, "version"), *cond = ynode_get(map, "conditions");
	json_t *j;
	struct err ce;
	int rc = 0;

	if (v && (v->kind != YN_SCALAR || strcmp(v->s, "2") != 0))
		return perr(e, v, "%s trigger: version '%s' is not supported: generic triggers are version 2", kind,
			    v->kind == YN_SCALAR ? v->s : ynode_type_name(v));
	if ((v = ynode_get(map, "useInitiator"))) {
		bool is_bool = (j = ynode_to_json(v)) && json_is_boolean(j);
		json_decref(j);
		if (!is_bool)
			return perr(e, v, "%s trigger: 'useInitiator' must be a boolean", kind);
	}
	if (!cond)
		return 0;
	if (cond->kind != YN_MAP)
		return perr(e, cond, "%s trigger: 'conditions' must be a map, got %s", kind, ynode_type_name(cond));
	j = ynode_to_json(cond);
	if (!j || triggers_conditions_check(j, &ce))
		rc = perr(e, cond, "%s trigger: conditions: %s", kind, j ? ce.msg : "out of memory");
	json_decref(j);
	return rc;
}

static int check_item(const struct model *m, const struct ynode *item, const char **kind_out,
		      const struct ynode **map_out, struct err *e)
{
	const struct ynode *key, *map;
	const char *kind;

	if (item->kind != YN_MAP || item->n != 1)
		return perr(e, item,
			    "each trigger must be a map with one key (its kind: cron, manual, github or an "
			    "event source), got %s",
			    item->kind == YN_MAP ? "a map with several keys" : ynode_type_name(item));
	key = item->kids[0];
	map = item->kids[1];
	kind = key->s;
	if (!valid_source(kind))
		return perr(e, key,
			    "'%.64s' is not a valid trigger kind or event source (1 to %d letters, digits, '-', "
			    "'_', '.')",
			    kind, EVENT_SOURCE_MAX);
	if (map->kind != YN_MAP)
		return perr(e, map, "%s trigger: must be a map, got %s", kind, ynode_type_name(map));
	*kind_out = kind;
	*map_out = map;
	if (in_list(stored_only, kind))
		return 0;
	if (strcmp(kind, "cron") == 0) {
		if (check_keys(map, kind, cron_keys, "spec", key, e) ||
		    check_keys(map, kind, cron_keys, "entryPoint", key, e))
			return -1;
		if (check_cron(map, e))
			return -1;
	} else if (strcmp(kind, "manual") == 0) {
		const struct ynode *name = ynode_get(map, "name");
		if (check_keys(map, kind, manual_keys, "entryPoint", key, e) ||
		    (name && want_string(name, kind, "name", e)))
			return -1;
	} else if (check_keys(map, kind, generic_keys, "entryPoint", key, e) || check_generic(kind, map, e)) {
		return -1;
	}
	return check_entry_point(m, map, kind, e) || check_common(map, kind, e) ? -1 : 0;
}

/* SHA-256 (hex) of the canonical JSON of the trigger: its kind and configuration. */
static void fingerprint(const char *kind, json_t *cfg, char out[65])
{
	json_t *whole = json_pack("{s:s, s:O}", "eventSource", kind, "cfg", cfg);
	char *text = whole ? json_dumps(whole, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
	unsigned char digest[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(digest, (const unsigned char *)(text ? text : ""), text ? strlen(text) : 0);
	sodium_bin2hex(out, 65, digest, sizeof digest);
	free(text);
	json_decref(whole);
}

static json_t *copy_field(json_t *cfg, const char *key)
{
	json_t *v = json_object_get(cfg, key);
	return v ? json_deep_copy(v) : NULL;
}

static int fill_row(const char *kind, const struct ynode *map, const struct repository *r, int64_t now_ms,
		    struct trigger *t, struct err *e)
{
	json_t *ep;

	memset(t, 0, sizeof *t);
	uuid_v4(t->id);
	if (str_fmt(t->project_id, sizeof t->project_id, "%s", r->project_id) ||
	    str_fmt(t->repo_id, sizeof t->repo_id, "%s", r->id) ||
	    str_fmt(t->event_source, sizeof t->event_source, "%s", kind))
		return err_set(e, ERR_INTERNAL, "%s trigger: an id or its kind is too long", kind);
	if (!(t->cfg = ynode_to_json(map)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	ep = json_object_get(t->cfg, "entryPoint");
	if (str_fmt(t->entry_point, sizeof t->entry_point, "%s", json_is_string(ep) ? json_string_value(ep) : ""))
		return perr(e, map, "%s trigger: entryPoint is longer than %zu characters", kind,
			    sizeof t->entry_point - 1);
	t->arguments = copy_field(t->cfg, "arguments");
	t->active_profiles = copy_field(t->cfg, "activeProfiles");
	if (strcmp(kind, "cron") == 0) {
		/* As Concord lists them: a cron trigger's conditions are its spec and zone. */
		t->conditions = json_object();
		json_object_set(t->conditions, "spec", json_object_get(t->cfg, "spec"));
		if (json_object_get(t->cfg, "timezone"))
			json_object_set(t->conditions, "timezone", json_object_get(t->cfg, "timezone"));
		struct err ce;
		if (triggers_cron_next(t->cfg, now_ms, &t->next_fire_at, &ce))
			return perr(e, map, "%s", ce.msg);
	} else {
		t->conditions = copy_field(t->cfg, "conditions");
	}
	fingerprint(kind, t->cfg, t->fingerprint);
	return 0;
}

static int grow(struct trigger **v, size_t *cap, size_t need, struct err *e)
{
	struct trigger *g;

	if (need <= *cap)
		return 0;
	*cap = *cap ? *cap * 2 : 8;
	if (*cap < need)
		*cap = need;
	if (!(g = realloc(*v, *cap * sizeof *g)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	*v = g;
	return 0;
}

int triggers_parse(const struct model *m, const struct repository *r, int64_t now_ms, struct trigger **out, size_t *n,
		   struct err *e)
{
	struct trigger *v = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	/* m NULL: a repository without a definition file has no triggers. */
	for (size_t d = 0; m && d < m->n_docs && rc == 0; d++) {
		const struct ynode *root = m->docs[d].root, *list;
		if (!root || root->kind != YN_MAP || !(list = ynode_get(root, "triggers")))
			continue;
		if (list->kind != YN_SEQ) {
			rc = perr(e, list, "'triggers' must be a list, got %s", ynode_type_name(list));
			break;
		}
		for (size_t i = 0; i < list->n && rc == 0; i++) {
			const char *kind = NULL;
			const struct ynode *map = NULL;
			if ((rc = check_item(m, list->kids[i], &kind, &map, e)) || (rc = grow(&v, &cap, len + 1, e)))
				break;
			rc = fill_row(kind, map, r, now_ms, &v[len], e);
			len++;
		}
	}
	if (rc) {
		store_trigger_free_list(v, len);
		return rc;
	}
	*out = v;
	*n = len;
	return 0;
}

int triggers_cron_next(const json_t *cfg, int64_t after_ms, int64_t *next_ms, struct err *e)
{
	const char *spec = json_string_value(json_object_get(cfg, "spec"));
	const char *zone = json_string_value(json_object_get(cfg, "timezone"));
	struct cron_spec cs;
	struct tz *z;
	int64_t next;

	*next_ms = 0;
	if (!spec)
		return err_set(e, ERR_INVALID, "cron trigger without a spec");
	if (cron_parse(spec, &cs, e) || !(z = tz_load(zone, e)))
		return -ERR_INVALID;
	next = cron_next(&cs, z, after_ms / 1000);
	tz_free(z);
	*next_ms = next * 1000;
	return 0;
}

int triggers_check(const struct model *m, const struct repository *r, struct err *e)
{
	struct trigger *v = NULL;
	size_t n = 0;
	int rc = triggers_parse(m, r, dt_now_ms(), &v, &n, e);

	store_trigger_free_list(v, n);
	return rc;
}
