/* The policy of a new process at its start (start_policy.h). */
#include "queue/start_policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "base/dirwalk.h"
#include "base/duration.h"
#include "base/str.h"
#include "flow/start_def.h"
#include "flow/value.h"
#include "policy/policy.h"
#include "queue/queue.h"
#include "queue/start_staged.h"
#include "queue/state_policy.h"

#define WALK_DEPTH_MAX 64

int start_policy_load(struct store_conn *c, const struct staged_start *s, struct start_policy *p, struct err *e)
{
	struct policy_place at = {s->org->id, s->project ? s->project->id : NULL,
				  s->initiator_id && *s->initiator_id ? s->initiator_id : NULL};

	memset(p, 0, sizeof *p);
	return store_policy_effective(c, &at, &p->rules, p->name, e);
}

void start_policy_cleanup(struct start_policy *p)
{
	json_decref(p->rules);
	json_decref(p->warnings);
	p->rules = NULL;
	p->warnings = NULL;
}

/* A warn list's match, kept for the process's log. */
static void warning(struct start_policy *p, const char *text)
{
	if (!p->warnings)
		p->warnings = json_array();
	if (json_array_size(p->warnings) >= START_POLICY_WARNINGS_MAX)
		p->warnings_cut++;
	else
		json_array_append_new(p->warnings, json_string(text));
}

void start_policy_warn_log(struct store_conn *c, const struct start_policy *p, const char *instance_id)
{
	size_t i;
	json_t *w;

	json_array_foreach(p->warnings, i, w) queue_log_line(c, instance_id, "WARN", "%s", json_string_value(w));
	if (p->warnings_cut)
		queue_log_line(c, instance_id, "WARN", "… and %zu more potentially restricted files", p->warnings_cut);
}

static const json_t *rule(const struct start_policy *p, const char *a, const char *b)
{
	const json_t *v = json_object_get(p->rules, a);
	return b ? json_object_get(v, b) : v;
}

static int process_cfg(const struct start_policy *p, json_t *cfg, bool *timeout_override, struct err *e)
{
	json_t *dflt = json_object_get(p->rules, "defaultProcessCfg"), *over = json_object_get(p->rules, "processCfg");

	if (json_is_object(dflt) && json_object_size(dflt)) {
		json_t *below = json_deep_copy(dflt), *inherited = json_object_get(cfg, START_DEF_ORG_PROJECT_CFG);
		if (!below || (inherited && value_merge(below, inherited, e))) {
			json_decref(below);
			return below ? -1 : err_set(e, ERR_INTERNAL, "out of memory");
		}
		json_object_set_new(cfg, START_DEF_ORG_PROJECT_CFG, below);
	}
	if (json_is_object(over) && value_merge(cfg, over, e))
		return -1;
	*timeout_override = json_object_get(over, "processTimeout") != NULL;
	return 0;
}

struct walk {
	struct start_policy *p;
	const json_t *ignored; /* workspace.ignoredFiles */
	int64_t bytes, files;
	struct err *e;
	char allowed[4096]; /* the folder an allow rule named, whose entries are not checked */
};

static bool ignored(const struct walk *w, const char *path)
{
	size_t i;
	json_t *pat;

	json_array_foreach((json_t *)w->ignored, i, pat) if (policy_match(json_string_value(pat), path)) return true;
	return false;
}

struct file_seen {
	const char *name;
	bool dir;
	int64_t size;
};

/* Concord's FileRule: type "file" (the default) or "dir", in any case; a file of maxSize
 * or more. */
static bool file_rule_matches(const json_t *r, void *ctx)
{
	const struct file_seen *f = ctx;
	const char *type = json_string_value(json_object_get(r, "type"));
	const json_t *names = json_object_get(r, "names"), *pat;
	int64_t max = policy_size_bytes(json_object_get(r, "maxSize"));
	bool named = !json_array_size(names);
	size_t i;

	if (strcasecmp(type ? type : "file", f->dir ? "dir" : "file") != 0)
		return false;
	json_array_foreach((json_t *)names, i, pat) named |= policy_match(json_string_value(pat), f->name);
	return named && (max < 0 || (!f->dir && f->size >= max));
}

/* The file rules on one entry; *allowed_dir: a folder an allow rule names, whose files the
 * rules then skip (Concord's FilePolicy). */
static int file_check(struct walk *w, const char *name, bool dir, int64_t size, const char *rel, bool *allowed_dir)
{
	struct file_seen f = {name, dir, size};
	const char *msg;
	const json_t *r;
	char text[1024];

	*allowed_dir = false;
	switch (policy_decide(rule(w->p, "file", NULL), file_rule_matches, &f, &r)) {
	case POLICY_DENY:
		return policy_refuse(w->e, ERR_INVALID, w->p->name, r, "Forbidden file: {0}", rel, NULL);
	case POLICY_WARN:
		msg = json_string_value(json_object_get(r, "msg"));
		str_fmt_cut(text, sizeof text, "Potentially restricted file '%s' (file policy: %s, policy '%s')", rel,
			    msg ? msg : "a warn rule", w->p->name);
		warning(w->p, text);
		return 0;
	default:
		*allowed_dir = dir && r != NULL;
		return 0;
	}
}

/* Sums the workspace's files; the file rules apply to each entry but those below a folder
 * an allow rule names (w->allowed). */
static int visit(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	struct walk *w = ctx;
	size_t n = strlen(w->allowed);
	const char *name = strrchr(rel, '/');
	bool allowed = false;

	if (!n || strncmp(rel, w->allowed, n) != 0 || rel[n] != '/') {
		w->allowed[0] = '\0';
		if (file_check(w, name ? name + 1 : rel, S_ISDIR(st->st_mode), (int64_t)st->st_size, rel, &allowed))
			return -1;
		if (allowed)
			str_fmt_cut(w->allowed, sizeof w->allowed, "%s", rel);
	}
	if (!S_ISDIR(st->st_mode) && !ignored(w, full)) {
		w->bytes += (int64_t)st->st_size;
		w->files++;
	}
	return 0;
}

static int workspace(struct start_policy *p, const char *dir, struct err *e)
{
	const json_t *ws = rule(p, "workspace", NULL);
	struct walk w = {p, json_object_get(ws, "ignoredFiles"), 0, 0, e, ""};
	int64_t max = policy_number(json_object_get(ws, "maxSizeInBytes")),
		max_files = policy_number(json_object_get(ws, "maxFileCount"));
	char a[24], b[24];

	if (!ws && !rule(p, "file", NULL))
		return 0;
	if (dirwalk(dir, WALK_DEPTH_MAX, "workspace", visit, &w, e))
		return -1;
	if (max >= 0 && w.bytes > max) {
		str_fmt_cut(a, sizeof a, "%" PRId64, w.bytes);
		str_fmt_cut(b, sizeof b, "%" PRId64, max);
		return policy_refuse(e, ERR_TOO_LARGE, p->name, ws,
				     "Workspace too big: {0} byte(s), the limit is {1} byte(s)", a, b);
	}
	if (max_files >= 0 && w.files > max_files) {
		str_fmt_cut(a, sizeof a, "%" PRId64, w.files);
		str_fmt_cut(b, sizeof b, "%" PRId64, max_files);
		return policy_refuse(e, ERR_TOO_LARGE, p->name, ws,
				     "Too many files in the workspace: {0}, the limit is {1}", a, b);
	}
	return 0;
}

static void state_warning(void *p, const char *line)
{
	warning(p, line);
}

/* The state rules on the process's first state, its staged working directory (as Concord
 * checks the state it stores at start): 400, 413 for sizes. */
static int state(struct start_policy *p, const char *dir, struct err *e)
{
	if (state_policy_check(rule(p, "state", NULL), p->name, dir, state_warning, p, e) == 0)
		return 0;
	if (e->code == ERR_FORBIDDEN)
		e->code = ERR_INVALID;
	return -1;
}

static int runtime(const struct start_policy *p, struct err *e)
{
	const json_t *r = rule(p, "runtime", NULL), *v;
	size_t i;

	if (!r || !json_object_get(r, "runtimes"))
		return 0;
	json_array_foreach(json_object_get(r, "runtimes"), i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), "concord-v2") == 0)
			return 0;
	}
	return policy_refuse(e, ERR_INVALID, p->name, r, "{0} runtime is not allowed", "concord-v2", NULL);
}

static int fork_depth(struct store_conn *c, const struct start_policy *p, const struct staged_start *s, struct err *e)
{
	const json_t *r = rule(p, "queue", "forkDepth");
	int64_t max = policy_number(json_object_get(r, "max")), depth;
	char a[24], b[24];

	if (max < 0 || !s->parent_instance_id || !*s->parent_instance_id)
		return 0;
	if (store_policy_fork_depth(c, s->parent_instance_id, &depth, e))
		return -1;
	if (depth < max)
		return 0;
	str_fmt_cut(a, sizeof a, "%" PRId64, depth);
	str_fmt_cut(b, sizeof b, "%" PRId64, max);
	return policy_refuse(e, ERR_INVALID, p->name, r,
			     "Maximum fork depth exceeded: {0} ancestor(s), the limit is {1}", a, b);
}

/* queue.process (all), processPerOrg, processPerProject: {STATUS: max}. */
static int per_status(struct store_conn *c, const struct start_policy *p, const struct staged_start *s, struct err *e)
{
	static const char *const KEYS[] = {"process", "processPerOrg", "processPerProject"};

	for (size_t i = 0; i < 3; i++) {
		const json_t *r = rule(p, "queue", KEYS[i]), *v;
		const char *status;
		if (!r || (i == 2 && !s->project))
			continue;
		json_object_foreach((json_t *)r, status, v)
		{
			int64_t max = policy_number(v), n;
			char b[24];
			if (strcmp(status, "msg") == 0 || max < 0)
				continue;
			if (store_policy_count_processes(c, i == 1 ? s->org->id : NULL, i == 2 ? s->project->id : NULL,
							 status, &n, e))
				return -1;
			if (n < max)
				continue;
			str_fmt_cut(b, sizeof b, "%" PRId64, max);
			return policy_refuse(e, ERR_INVALID, p->name, r,
					     i == 0   ? "Too many processes {0}: the limit is {1}"
					     : i == 1 ? "Too many processes {0} in the organization: the limit is {1}"
						      : "Too many processes {0} in the project: the limit is {1}",
					     status, b);
		}
	}
	return 0;
}

int start_policy_before(struct store_conn *c, struct start_policy *p, const struct staged_start *s, json_t *cfg,
			bool *timeout_override, struct err *e)
{
	*timeout_override = false;
	if (!p->rules)
		return 0;
	return process_cfg(p, cfg, timeout_override, e) || workspace(p, s->dir, e) || state(p, s->dir, e) ||
		       runtime(p, e) || fork_depth(c, p, s, e)
		   ? -1
		   : 0;
}

int start_policy_timeout(const struct start_policy *p, int64_t timeout_s, struct err *e)
{
	const json_t *r = rule(p, "queue", "processTimeout");
	int64_t max;
	struct err ignored;
	char a[24];

	if (!r || timeout_s <= 0 || duration_json(json_object_get(r, "max"), "max", &max, &ignored))
		return 0;
	if (timeout_s < max)
		return 0;
	str_fmt_cut(a, sizeof a, "%" PRId64 "s", timeout_s);
	return policy_refuse(e, ERR_INVALID, p->name, r, "processTimeout {0} is not below the limit {1}", a,
			     json_string_value(json_object_get(r, "max")));
}

/* One of the process's container options (Concord's ContainerPolicy): cpu a number, ram a
 * size; *n -1 when absent. */
static int container_option(const json_t *opts, const char *key, int64_t *n, struct err *e)
{
	const json_t *v = json_object_get(opts, key);

	*n = -1;
	if (!v || json_is_null(v))
		return 0;
	*n = strcmp(key, "cpu") == 0 ? (json_is_number(v) ? (int64_t)json_number_value(v) : -1) : policy_size_bytes(v);
	if (*n < 0)
		return err_set(e, ERR_INVALID, "configuration.container.%s: expected %s", key,
			       strcmp(key, "cpu") == 0 ? "a number" : "a size such as \"512m\"");
	return 0;
}

int start_policy_container(const struct start_policy *p, const json_t *cfg, struct err *e)
{
	const json_t *r = rule(p, "container", NULL), *opts = json_object_get(cfg, "container");
	int64_t max_cpu = policy_number(json_object_get(r, "maxCpu")), max_ram = policy_size_bytes(json_object_get(r, "maxRam"));
	int64_t cpu, ram;
	char what[96];

	if (!r)
		return 0;
	if (container_option(opts, "cpu", &cpu, e) || container_option(opts, "ram", &ram, e))
		return -1;
	if (max_cpu >= 0 && cpu > max_cpu)
		str_fmt_cut(what, sizeof what, "Max CPU exceeded: %" PRId64, cpu);
	else if (max_ram >= 0 && ram > max_ram && json_is_string(json_object_get(opts, "ram")))
		str_fmt_cut(what, sizeof what, "Max RAM exceeded: %.32s", json_string_value(json_object_get(opts, "ram")));
	else if (max_ram >= 0 && ram > max_ram)
		str_fmt_cut(what, sizeof what, "Max RAM exceeded: %" PRId64, ram);
	else
		return 0;
	return policy_refuse(e, ERR_INVALID, p->name, r, "Container policy violation: {0}", what, NULL);
}

/* What the runner and the supervisor need (task, ansible, attachments, container, state,
 * and the ansible task's processCfg.arguments.ansibleVerboseLimits). */
static char *runtime_rules(const struct start_policy *p)
{
	static const char *const KEYS[] = {"task", "ansible", "attachments", "container", "state"};
	json_t *keep = json_object();
	const json_t *verbose = rule(p, "processCfg", "arguments");
	char *text = NULL;

	for (size_t i = 0; keep && i < sizeof KEYS / sizeof KEYS[0]; i++)
		if (json_object_get(p->rules, KEYS[i]))
			json_object_set(keep, KEYS[i], json_object_get(p->rules, KEYS[i]));
	if (keep && (verbose = json_object_get(verbose, "ansibleVerboseLimits")))
		json_object_set_new(keep, "processCfg",
				    json_pack("{s:{s:O}}", "arguments", "ansibleVerboseLimits", verbose));
	if (keep && json_object_size(keep))
		text = json_dumps(keep, JSON_COMPACT);
	json_decref(keep);
	return text;
}

int start_policy_count(struct store_conn *c, const struct start_policy *p, const struct staged_start *s, struct err *e)
{
	const json_t *q = rule(p, "queue", NULL);

	if (!json_object_get(q, "process") && !json_object_get(q, "processPerOrg") &&
	    !json_object_get(q, "processPerProject"))
		return 0;
	return store_policy_count_turn(c, e) || per_status(c, p, s, e) ? -1 : 0;
}

int start_policy_record(struct store_conn *c, const struct start_policy *p, const char *instance_id, struct err *e)
{
	const json_t *conc = rule(p, "queue", "concurrent");
	int64_t per_org = policy_number(json_object_get(conc, "maxPerOrg")),
		per_project = policy_number(json_object_get(conc, "maxPerProject"));
	char *rules;
	int rc;

	if (!p->rules)
		return 0;
	if (per_project < 0)
		per_project = policy_number(json_object_get(conc, "max")); /* Concord's alias */
	rules = runtime_rules(p);
	if (per_org < 0 && per_project < 0 && !rules)
		return 0;
	rc = store_process_policy_put(c, instance_id, p->name, per_org, per_project, rules, e);
	free(rules);
	return rc;
}
