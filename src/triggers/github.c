/* GitHub events (POST /events/github/webhook, api/github.c checks the signature): the event
 * Concord builds from a webhook payload (githubOrg, githubRepo, githubHost, branch, commitId,
 * sender, type, status, payload, files, repositoryInfo), matched against every `github`
 * trigger (version 2) with the defaults Concord adds (the trigger's own repository's GitHub
 * org, name and branch; type push; ignoreEmptyPush), each match starting one process; a
 * push first refreshes every repository that points at the pushed branch (fetch, triggers
 * read again).  docs/flows.md "GitHub triggers". */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/log.h"
#include "base/str.h"
#include "store/repositories.h"
#include "store/users.h"
#include "triggers/internal.h"

/* Concord's lists of the events it understands (Payload.java): repository-level events
 * name their repository, organization-level ones their org. */
static const char *const repo_events[] = {
    "check_run",     "check_suite",	     "code_scanning_alert",
    "commit_comment", "create",		     "delete",
    "dependabot_alert", "fork",		     "issue_comment",
    "issues",	     "label",		     "member",
    "pull_request",  "pull_request_review", "pull_request_review_comment",
    "push",	     "release",		     "repository",
    "secret_scanning_alert", "secret_scanning_alert_location", "star",
    "status",	     "team",		     "team_add",
    "watch",	     "workflow_dispatch",   "workflow_job",
    "workflow_run",  NULL};
static const char *const org_events[] = {"membership", "organization", "org_block", NULL};

static bool listed(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (strcmp(*list, name) == 0)
			return true;
	return false;
}

static const char *str_at(const json_t *o, const char *a, const char *b, const char *c)
{
	const json_t *v = json_object_get(o, a);

	if (b)
		v = json_object_get(v, b);
	if (c)
		v = json_object_get(v, c);
	return json_string_value(v);
}

/* "refs/heads/x" → "x", "refs/tags/v1" → "v1" (GithubUtils.getRefShortName). */
static const char *ref_short(const char *ref)
{
	if (!ref)
		return NULL;
	if (strncmp(ref, "refs/heads/", 11) == 0)
		return ref + 11;
	if (strncmp(ref, "refs/tags/", 10) == 0)
		return ref + 10;
	return ref;
}

/* The host of a git URL ("git://github.com/o/r.git" → "github.com"). */
static json_t *host_of(const char *url)
{
	const char *p = url ? strstr(url, "://") : NULL;
	size_t n;

	if (!p)
		return json_null();
	p += 3;
	if (strchr(p, '@') && strchr(p, '@') < strchr(p, '/'))
		p = strchr(p, '@') + 1;
	n = strcspn(p, ":/");
	return n ? json_stringn(p, n) : json_null();
}

/* files: {added, removed, modified: [...], any: every path of the three} of a push. */
static json_t *files_of(const char *event_name, const json_t *payload)
{
	static const char *const kinds[] = {"added", "removed", "modified"};
	json_t *files = json_object(), *any = json_array(), *commit, *path;
	size_t i, j;

	if (!files || !any) {
		json_decref(files);
		json_decref(any);
		return NULL;
	}
	for (size_t k = 0; k < 3; k++)
		if (strcmp(event_name, "push") == 0)
			json_object_set_new(files, kinds[k], json_array());
	if (strcmp(event_name, "push") == 0)
		json_array_foreach(json_object_get(payload, "commits"), i, commit) for (size_t k = 0; k < 3; k++)
		    json_array_foreach(json_object_get(commit, kinds[k]), j, path) if (json_is_string(path))
		{
			json_array_append(json_object_get(files, kinds[k]), path);
			json_array_append(any, path);
		}
	json_object_set_new(files, "any", any);
	return files;
}

/* Concord's event of a webhook payload; NULL for an event it does not handle (or out of
 * memory, which the caller cannot tell apart: both start nothing). */
static json_t *build_event(const char *name, json_t *payload, char *full, size_t cap)
{
	const char *full_name = NULL, *org = NULL, *branch = NULL, *commit = NULL, *slash;
	json_t *ev;

	full[0] = '\0';
	if (listed(repo_events, name)) {
		full_name = str_at(payload, "repository", "full_name", NULL);
		if (full_name && (!(slash = strchr(full_name, '/')) || slash == full_name || !slash[1]))
			return NULL;
	} else if (listed(org_events, name)) {
		org = str_at(payload, "organization", "login", NULL);
	} else {
		return NULL;
	}
	if (!(ev = json_object()))
		return NULL;
	if (full_name) {
		slash = strchr(full_name, '/');
		json_object_set_new(ev, "githubOrg", json_stringn(full_name, (size_t)(slash - full_name)));
		json_object_set_new(ev, "githubRepo", json_string(slash + 1));
		str_fmt_cut(full, cap, "%s", full_name);
	} else {
		json_object_set_new(ev, "githubOrg", org ? json_string(org) : json_null());
		json_object_set_new(ev, "githubRepo", json_null());
	}
	json_object_set_new(ev, "githubHost", host_of(str_at(payload, "repository", "git_url", NULL)));
	if (!strcmp(name, "push") || !strcmp(name, "create") || !strcmp(name, "delete"))
		branch = ref_short(str_at(payload, "ref", NULL, NULL));
	else if (!strncmp(name, "pull_request", 12))
		branch = str_at(payload, "pull_request", "base", "ref");
	if (branch)
		json_object_set_new(ev, "branch", json_string(branch));
	if (!strcmp(name, "pull_request"))
		commit = str_at(payload, "pull_request", "head", "sha");
	else if (!strcmp(name, "push"))
		commit = str_at(payload, "after", NULL, NULL);
	if (commit)
		json_object_set_new(ev, "commitId", json_string(commit));
	json_object_set_new(ev, "sender", json_string(str_at(payload, "sender", "login", NULL)));
	json_object_set_new(ev, "type", json_string(name));
	json_object_set_new(ev, "status", json_string(str_at(payload, "action", NULL, NULL)));
	json_object_set(ev, "payload", payload);
	json_object_set_new(ev, "files", files_of(name, payload));
	json_object_set_new(ev, "version", json_integer(2));
	return ev;
}

/* "owner/name" of a repository URL (https://host/o/r.git, git@host:o/r, a local path
 * …/o/r.git): its last two path segments, ".git" dropped.  False when there are not two. */
bool triggers_github_name(const char *url, char *out, size_t cap)
{
	size_t n = strlen(url), end, mid, start;

	while (n && url[n - 1] == '/')
		n--;
	if (n >= 4 && strncmp(url + n - 4, ".git", 4) == 0)
		n -= 4;
	end = n;
	while (n && url[n - 1] != '/' && url[n - 1] != ':')
		n--;
	if (!n || n == end)
		return false;
	mid = n - 1;
	start = mid;
	while (start && url[start - 1] != '/' && url[start - 1] != ':')
		start--;
	if (start == mid)
		return false;
	return str_fmt(out, cap, "%.*s/%.*s", (int)(mid - start), url + start, (int)(end - mid - 1), url + mid + 1) == 0;
}

static bool same_repo(const struct repository *r, const char *full)
{
	char name[512];

	return full[0] && triggers_github_name(r->url, name, sizeof name) && strcasecmp(name, full) == 0;
}

/* The branch a repository follows, for the default `branch` condition: its configured one,
 * else a default branch's usual names. */
static const char *branch_pattern(const struct repository *r)
{
	return r->branch[0] ? r->branch : "main|master";
}

/* repositoryInfo: the repositories of this server that point at the event's repository. */
static json_t *repository_info(const struct repository *v, size_t n, const char *full)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < n; i++)
		if (same_repo(&v[i], full))
			json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s, s:b}", "repositoryId", v[i].id,
							      "repository", v[i].name, "projectId", v[i].project_id,
							      "branch", v[i].branch[0] ? v[i].branch : "main",
							      "enabled", !v[i].disabled));
	return list;
}

/* The trigger's conditions with Concord's defaults (GithubTriggerDefinitionEnricher and the
 * documented ones): its own repository's GitHub org, name and branch, type push.  Values
 * from the name are escaped: a repository called "a.b" matches only itself. */
static json_t *conditions_of(const struct trigger *tr, const struct repository *own)
{
	json_t *c = tr->conditions ? json_deep_copy(tr->conditions) : json_object();
	char name[512], quoted[1100];
	const char *slash;

	if (!c)
		return NULL;
	if (!json_object_get(c, "type"))
		json_object_set_new(c, "type", json_string("push"));
	if (own && triggers_github_name(own->url, name, sizeof name) && (slash = strchr(name, '/'))) {
		char org[512];
		str_fmt_cut(org, sizeof org, "%.*s", (int)(slash - name), name);
		if (!json_object_get(c, "githubOrg") && triggers_regex_quote(org, quoted, sizeof quoted))
			json_object_set_new(c, "githubOrg", json_string(quoted));
		if (!json_object_get(c, "githubRepo") && triggers_regex_quote(slash + 1, quoted, sizeof quoted))
			json_object_set_new(c, "githubRepo", json_string(quoted));
	}
	if (own && !json_object_get(c, "branch"))
		json_object_set_new(c, "branch", json_string(branch_pattern(own)));
	return c;
}

static const struct repository *find_repo(const struct repository *v, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].id, id) == 0)
			return &v[i];
	return NULL;
}

/* useInitiator: the user whose name is the GitHub sender's, when there is one; else (and
 * without useInitiator) the trigger processes' own identity, as for cron. */
static void initiator_of(struct store_conn *c, const struct trigger *tr, const json_t *ev, struct user *u)
{
	const char *sender = json_string_value(json_object_get(ev, "sender"));
	struct err e;

	if (json_is_true(json_object_get(tr->cfg, "useInitiator")) && sender &&
	    store_user_find(c, sender, NULL, u, &e) == 0 && !u->disabled)
		return;
	if (store_user_get(c, CRON_USER_ID, u, &e)) {
		memset(u, 0, sizeof *u);
		str_fmt_cut(u->id, sizeof u->id, "%s", CRON_USER_ID);
		str_fmt_cut(u->username, sizeof u->username, "cron");
	}
}

static bool empty_push(const char *name, const json_t *payload)
{
	const char *before = str_at(payload, "before", NULL, NULL), *after = str_at(payload, "after", NULL, NULL);

	return strcmp(name, "push") == 0 && before && after && strcmp(before, after) == 0;
}

/* A push to a branch a repository follows: fetch it and read its triggers again. */
static void refresh_pushed(struct triggers *t, struct store_conn *c, const struct repository *v, size_t n,
			   const char *full, const json_t *ev)
{
	const char *branch = json_string_value(json_object_get(ev, "branch"));
	struct err e;

	for (size_t i = 0; branch && i < n; i++) {
		if (v[i].disabled || !same_repo(&v[i], full) ||
		    (v[i].branch[0] ? strcmp(v[i].branch, branch) != 0
				    : strcmp(branch, "main") != 0 && strcmp(branch, "master") != 0))
			continue;
		if (triggers_reread(t, c, &v[i], &e))
			LOG_W("github push to %s %s: repository %s (project %s/%s) not refreshed: %s", full, branch,
			      v[i].name, v[i].org_name, v[i].project_name, e.msg);
		else
			LOG_I("github push to %s %s: repository %s (project %s/%s) refreshed", full, branch, v[i].name,
			      v[i].org_name, v[i].project_name);
	}
}

int triggers_github(struct triggers *t, struct store_conn *c, const char *event_name, const char *delivery,
		    json_t *payload, json_t **ids, struct err *e)
{
	struct repository *repos = NULL;
	struct trigger *v = NULL;
	size_t n_repos = 0, n = 0;
	char full[512];
	json_t *ev;
	int rc;

	if (!(*ids = json_array()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (!(ev = build_event(event_name, payload, full, sizeof full)))
		return 0; /* an event Concord does not handle: nothing to start */
	if ((rc = store_repository_list(c, NULL, &repos, &n_repos, e)))
		goto out;
	if (strcmp(event_name, "push") == 0 && t->cfg.repos)
		refresh_pushed(t, c, repos, n_repos, full, ev);
	if ((rc = store_triggers_of_source(c, "github", &v, &n, e)))
		goto out;
	for (size_t i = 0; i < n; i++) {
		const json_t *version = json_object_get(v[i].cfg, "version");
		const struct repository *own = find_repo(repos, n_repos, v[i].repo_id);
		json_t *cond, *info = NULL, *x;
		struct user u;
		char id[UUID_STR_LEN];

		if (version && json_integer_value(version) != 2)
			continue; /* version 1 triggers are Concord's old format: documented as unsupported */
		x = json_object_get(v[i].cfg, "ignoreEmptyPush");
		if ((!x || json_is_true(x)) && empty_push(event_name, payload))
			continue;
		if (!(cond = conditions_of(&v[i], own)))
			continue;
		if (json_object_get(cond, "repositoryInfo") && full[0]) {
			info = repository_info(repos, n_repos, full);
			json_object_set_new(ev, "repositoryInfo", info);
		} else {
			json_object_del(ev, "repositoryInfo");
		}
		if (triggers_conditions_match(ev, cond)) {
			struct trigger_fire f = {.tr = &v[i], .event = ev, .external_event_id = delivery};
			const char *commit = json_string_value(json_object_get(ev, "commitId"));
			initiator_of(c, &v[i], ev, &u);
			f.initiator_id = u.id;
			f.initiator = u.username;
			if (json_is_true(json_object_get(v[i].cfg, "useEventCommitId")) && commit)
				f.commit_id = commit;
			f.exclusive_group = json_string_value(json_object_get(ev, "branch"));
			if (triggers_fire(t, c, &f, id, e))
				LOG_W("github trigger %s (repository %s, entry point %s) did not start a process: %s",
				      v[i].id, v[i].repo_id, v[i].entry_point, e->msg);
			else
				json_array_append_new(*ids, json_string(id));
		}
		json_decref(cond);
	}
	rc = 0;
out:
	json_decref(ev);
	store_trigger_free_list(v, n);
	free(repos);
	return rc;
}
