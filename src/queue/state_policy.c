/* The state rules of a process's policy (state_policy.h). */
#include "queue/state_policy.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/dirwalk.h"
#include "base/str.h"
#include "policy/policy.h"
#include "queue/queue.h"
#include "store/policies.h"

#define STATE_DEPTH_MAX 64
#define STATE_WARNINGS_MAX 50

struct state_walk {
	state_policy_warn warn_fn;
	void *ctx;
	const char *policy;
	const json_t *deny, *warn; /* state.deny, state.warn */
	int64_t bytes, files;
	struct err *e;
};

static const char *msg_of(const json_t *rule)
{
	const char *m = json_string_value(json_object_get(rule, "msg"));
	return m ? m : "a warn rule";
}

/* "Potentially restricted state<what> (state policy: <msg>, policy '<name>')" */
static void warn_line(struct state_walk *w, const char *what, const json_t *rule)
{
	char line[4400];

	str_fmt_cut(line, sizeof line, "Potentially restricted state%s (state policy: %s, policy '%s')", what,
		    msg_of(rule), w->policy);
	w->warn_fn(w->ctx, line);
}

/* A rule's patterns match a file by its path in the working directory, or by its full
 * path (Concord matches the path in its temporary folder: ".*" + "/name" patterns). */
static bool named(const json_t *rule, const char *rel, const char *full)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(rule, "patterns"), i, p)
	{
		if (policy_match(json_string_value(p), rel) || policy_match(json_string_value(p), full))
			return true;
	}
	return false;
}

static int file_rules(struct state_walk *w, const char *rel, const char *full)
{
	size_t i;
	json_t *r;

	json_array_foreach(w->deny, i, r) if (named(r, rel, full)) return policy_refuse(
	    w->e, ERR_FORBIDDEN, w->policy, r, "State file '{0}' is forbidden by the state policy", rel, NULL);
	json_array_foreach(w->warn, i, r)
	{
		char what[4200];
		if (named(r, rel, full)) {
			str_fmt_cut(what, sizeof what, " file '%s'", rel);
			warn_line(w, what, r);
		}
	}
	return 0;
}

static int visit(void *ctx, const char *rel, const char *full, const struct stat *st)
{
	struct state_walk *w = ctx;

	if (!S_ISREG(st->st_mode))
		return 0;
	w->bytes += (int64_t)st->st_size;
	w->files++;
	return file_rules(w, rel, full);
}

/* Concord's stats rules: more files than maxFilesCount, more bytes than maxSizeInBytes.  A
 * deny rule's msg takes {0} (the actual number) and {1} (the limit). */
static int stats_rules(struct state_walk *w, const json_t *rules, bool deny)
{
	static const char *const WHAT[] = {"Max files count exceeded. Actual: {0} limit: {1}",
					   "Max state size exceeded. Actual: {0} limit: {1}"};
	size_t i;
	json_t *r;

	json_array_foreach((json_t *)rules, i, r)
	{
		int64_t max[2] = {policy_number(json_object_get(r, "maxFilesCount")),
				  policy_number(json_object_get(r, "maxSizeInBytes"))},
			actual[2] = {w->files, w->bytes};
		for (int k = 0; k < 2; k++) {
			char a[24], b[24], what[160];
			if (max[k] < 0 || actual[k] <= max[k])
				continue;
			str_fmt_cut(a, sizeof a, "%" PRId64, actual[k]);
			str_fmt_cut(b, sizeof b, "%" PRId64, max[k]);
			if (deny)
				return policy_refuse(w->e, ERR_TOO_LARGE, w->policy, r, WHAT[k], a, b);
			str_fmt_cut(what, sizeof what, ": 'Max %s exceeded. Actual: %s limit: %s'",
				    k ? "state size" : "files count", a, b);
			warn_line(w, what, r);
		}
	}
	return 0;
}

int state_policy_check(const json_t *state, const char *policy, const char *dir, state_policy_warn warn, void *ctx,
		       struct err *e)
{
	struct state_walk w = {.warn_fn = warn,
			       .ctx = ctx,
			       .policy = policy ? policy : "?",
			       .deny = json_object_get(state, "deny"),
			       .warn = json_object_get(state, "warn"),
			       .e = e};

	if (!state)
		return 0;
	if (dirwalk(dir, STATE_DEPTH_MAX, "the process's state", visit, &w, e) || stats_rules(&w, w.deny, true) ||
	    stats_rules(&w, w.warn, false))
		return -1;
	return 0;
}

struct saved {
	struct store_conn *c;
	const char *id;
	unsigned lines;
};

static void log_warning(void *ctx, const char *line)
{
	struct saved *s = ctx;

	if (s->lines++ < STATE_WARNINGS_MAX)
		queue_log_line(s->c, s->id, "WARN", "%s", line);
}

int state_policy_saved(struct store_conn *c, const char *id, const char *workdir, struct err *e)
{
	json_t *pol = NULL;
	struct saved s = {c, id, 0};
	int rc;

	if (store_process_policy_get(c, id, &pol, e))
		return -1;
	rc = state_policy_check(json_object_get(json_object_get(pol, "rules"), "state"),
				json_string_value(json_object_get(pol, "policy")), workdir, log_warning, &s, e);
	json_decref(pol);
	return rc;
}
