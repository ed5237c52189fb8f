/* The `github` task (docs/flows.md "github"): Concord's GitHub actions over GitHub's REST
 * API (github_client.h).  Each action's parameters, requests and result fields are those
 * of Concord's GitHubTask; a result also carries ok: true.  A failure fails the step with
 * Concord's message ("Failed to create pull request: GitHub API error: 422 - …"). */
#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "flow/tasks/github_app.h"
#include "flow/tasks/github_client.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

struct gh_step {
	struct gh g;
	json_t *in;
	struct vm *vm;
	char repo[1100]; /* "/repos/<org>/<repo>", escaped */
	const char *org, *name;
	bool api_failed; /* a call failed: the action's prefix goes on the message */
};

static int oom(struct err *e)
{
	return err_set(e, ERR_INTERNAL, "out of memory");
}

static const char *opt(struct gh_step *s, const char *key)
{
	json_t *v = json_object_get(s->in, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int need(struct gh_step *s, const char *key, const char **out, struct err *e)
{
	if (!(*out = opt(s, key)))
		return err_set(e, ERR_INVALID, "Mandatory parameter '%s' is required", key);
	return 0;
}

/* A mandatory number (an integer or a string of digits). */
static int need_int(struct gh_step *s, const char *key, long long *out, struct err *e)
{
	json_t *v = json_object_get(s->in, key);
	int64_t n;
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v) && str_to_i64((struct str){json_string_value(v), json_string_length(v)}, 0, INT64_MAX, &n,
					    key, &(struct err){0}) == 0) {
		*out = n;
		return 0;
	}
	return err_set(e, ERR_INVALID, "Mandatory parameter '%s' must be a number", key);
}

/* path (printf-style) below /repos/<org>/<repo> into buf. */
static const char *at(struct gh_step *s, char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static const char *at(struct gh_step *s, char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(s->repo);
	str_fmt_cut(buf, cap, "%s", s->repo);
	va_start(ap, fmt);
	str_vfmt_cut(buf + n, cap > n ? cap - n : 0, fmt, ap);
	va_end(ap);
	return buf;
}

/* A name escaped for the path (a branch, tag, ref); NULL when out of memory. */
#define ESC(var, value)                                                                                               \
	char *var = gh_escape(value);                                                                                  \
	if (!var)                                                                                                      \
	return oom(e)

static json_t *ok(json_t *r)
{
	if (r)
		json_object_set_new(r, "ok", json_true());
	return r;
}

static int done(json_t **out, json_t *r, struct err *e)
{
	return (*out = ok(r)) ? 0 : oom(e);
}

static int call(struct gh_step *s, const char *method, const char *path, json_t *body, json_t **resp, struct err *e)
{
	int rc = gh_call(&s->g, method, path, body, resp, NULL, e);
	json_decref(body);
	s->api_failed |= rc < 0;
	return rc;
}

static int get_list(struct gh_step *s, const char *path, json_t **out, struct err *e)
{
	int rc = gh_list(&s->g, path, out, e);
	s->api_failed |= rc < 0;
	return rc;
}

/* A call whose answer is not needed. */
static int fire(struct gh_step *s, const char *method, const char *path, json_t *body, struct err *e)
{
	json_t *r = NULL;
	int rc = call(s, method, path, body, &r, e);
	json_decref(r);
	return rc;
}

static int a_create_pr(struct gh_step *s, json_t **out, struct err *e)
{
	const char *title, *body, *dst, *src;
	json_t *r = NULL, *labels = json_object_get(s->in, "prLabels");
	char p[1400];

	if (need(s, "prTitle", &title, e) < 0 || need(s, "prBody", &body, e) < 0 ||
	    need(s, "prDestinationBranch", &dst, e) < 0 || need(s, "prSourceBranch", &src, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Creating PR in %s/%s from %s to %s", s->org, s->name, src, dst);
	if (call(s, "POST", at(s, p, sizeof p, "/pulls"),
		 json_pack("{s:s, s:s, s:s, s:s}", "title", title, "body", body, "head", src, "base", dst), &r, e) < 0)
		return -1;
	json_t *id = json_incref(json_object_get(r, "number"));
	json_decref(r);
	if (!json_is_integer(id)) {
		json_decref(id);
		return err_set(e, ERR_INVALID, "GitHub's answer has no pull request number");
	}
	vm_log(s->vm, FLOW_INFO, "PR Created, id: '%lld'", (long long)json_integer_value(id));
	if (json_array_size(labels) &&
	    fire(s, "POST", at(s, p, sizeof p, "/issues/%lld/labels", (long long)json_integer_value(id)),
		 json_pack("{s:O}", "labels", labels), e) < 0) {
		json_decref(id);
		return -1;
	}
	return done(out, json_pack("{s:o}", "prId", id), e);
}

static int a_comment_pr(struct gh_step *s, json_t **out, struct err *e)
{
	const char *text;
	long long id;
	json_t *r = NULL;
	char p[1400];

	if (need(s, "prComment", &text, e) < 0 || need_int(s, "prId", &id, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Commenting PR #%lld in %s/%s", id, s->org, s->name);
	if (fire(s, "GET", at(s, p, sizeof p, "/pulls/%lld", id), NULL, e) < 0 ||
	    call(s, "POST", at(s, p, sizeof p, "/issues/%lld/comments", id), json_pack("{s:s}", "body", text), &r, e) <
		0)
		return -1;
	json_t *cid = json_incref(json_object_get(r, "id"));
	json_decref(r);
	return done(out, json_pack("{s:o}", "id", cid ? cid : json_null()), e);
}

static int a_pr_commits(struct gh_step *s, json_t **out, struct err *e)
{
	long long id;
	json_t *list;
	char p[1400];

	if (need_int(s, "prId", &id, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Getting PR %lld commits for %s/%s repo", id, s->org, s->name);
	if (get_list(s, at(s, p, sizeof p, "/pulls/%lld/commits", id), &list, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Commits count: %zu", json_array_size(list));
	return done(out, json_pack("{s:o}", "commits", list), e);
}

static int a_merge_pr(struct gh_step *s, json_t **out, struct err *e)
{
	const char *msg = opt(s, "commitMessage"), *method = opt(s, "mergeMethod");
	long long id;
	char p[1400];
	json_t *body;

	if (need_int(s, "prId", &id, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Merging PR #%lld in %s/%s", id, s->org, s->name);
	body = json_pack("{s:s}", "commit_message", msg ? msg : "GitHub PR Merge");
	if (body && method)
		json_object_set_new(body, "merge_method", json_string(method));
	if (call(s, "PUT", at(s, p, sizeof p, "/pulls/%lld/merge", id), body, &body, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Merged PR# %lld, sha: %s", id,
	       json_string_value(json_object_get(body, "sha")) ? json_string_value(json_object_get(body, "sha")) : "");
	json_decref(body);
	return done(out, json_object(), e);
}

static int a_close_pr(struct gh_step *s, json_t **out, struct err *e)
{
	long long id;
	char p[1400];

	if (need_int(s, "prId", &id, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Closing PR #%lld in %s/%s", id, s->org, s->name);
	if (fire(s, "PATCH", at(s, p, sizeof p, "/pulls/%lld", id), json_pack("{s:s}", "state", "closed"), e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Closed PR# %lld", id);
	return done(out, json_object(), e);
}

static int a_create_branch(struct gh_step *s, json_t **out, struct err *e)
{
	const char *name, *sha;
	json_t *r = NULL;
	long status = 0;
	char p[1400];

	if (need(s, "branchName", &name, e) < 0 || need(s, "sha", &sha, e) < 0)
		return -1;
	ESC(b, name);
	int rc = gh_call(&s->g, "GET", at(s, p, sizeof p, "/git/ref/heads/%s", b), NULL, &r, &status, e);
	free(b);
	json_decref(r);
	if (rc == 0)
		return done(out, json_pack("{s:b}", "alreadyExists", 1), e);
	if (status != 404)
		return -1;
	if (fire(s, "POST", at(s, p, sizeof p, "/git/refs"),
		 json_pack("{s:s+, s:s}", "ref", "refs/heads/", name, "sha", sha), e) < 0)
		return -1;
	return done(out, json_object(), e);
}

static int a_create_issue(struct gh_step *s, json_t **out, struct err *e)
{
	const char *title, *body = opt(s, "body"), *who = opt(s, "assignee");
	json_t *labels = json_object_get(s->in, "labels"), *req, *r = NULL;
	char p[1400];

	if (need(s, "title", &title, e) < 0)
		return -1;
	req = json_pack("{s:s, s:s*, s:s*, s:o}", "title", title, "body", body, "assignee", who, "labels",
			json_is_array(labels) ? json_incref(labels) : json_array());
	vm_log(s->vm, FLOW_INFO, "Creating issue in %s/%s", s->org, s->name);
	if (call(s, "POST", at(s, p, sizeof p, "/issues"), req, &r, e) < 0)
		return -1;
	return done(out, json_pack("{s:o}", "issue", r), e);
}

/* The SHA of the latest commit of `branch` (default master) among the repository's branches. */
static int latest_sha(struct gh_step *s, char *sha, size_t cap, struct err *e)
{
	const char *branch = opt(s, "branch") ? opt(s, "branch") : "master";
	json_t *list, *b;
	char p[1400];
	size_t i;

	vm_log(s->vm, FLOW_INFO, "Getting latest commit SHA for '%s/%s/%s'...", s->org, s->name, branch);
	if (get_list(s, at(s, p, sizeof p, "/branches"), &list, e) < 0) {
		err_prefix(e, "Error occurred while getting latest commit SHA");
		return -1;
	}
	json_array_foreach(list, i, b)
	{
		const char *name = json_string_value(json_object_get(b, "name"));
		const char *v = json_string_value(json_object_get(json_object_get(b, "commit"), "sha"));
		if (name && v && strcmp(name, branch) == 0) {
			str_fmt_cut(sha, cap, "%s", v);
			json_decref(list);
			vm_log(s->vm, FLOW_INFO, "Latest commit SHA: '%s'", sha);
			return 0;
		}
	}
	json_decref(list);
	return err_set(e, ERR_NOT_FOUND, "Error occurred while getting latest commit SHA: Branch '%s' not found", branch);
}

static int a_latest_sha(struct gh_step *s, json_t **out, struct err *e)
{
	char sha[100];
	if (latest_sha(s, sha, sizeof sha, e) < 0)
		return -1;
	return done(out, json_pack("{s:s}", "latestCommitSHA", sha), e);
}

static int a_create_tag(struct gh_step *s, json_t **out, struct err *e)
{
	const char *ver, *msg, *who, *mail, *sha = opt(s, "commitSHA");
	char p[1400], latest[100], date[40];

	if (need(s, "tagVersion", &ver, e) < 0 || need(s, "tagMessage", &msg, e) < 0 ||
	    need(s, "tagAuthorName", &who, e) < 0 || need(s, "tagAuthorEmail", &mail, e) < 0)
		return -1;
	if ((!sha || !*sha) && !opt(s, "branch"))
		return err_set(e, ERR_INVALID, "Invalid task input parameters: commitSHA or branch is required");
	if (!sha || !*sha) {
		if (latest_sha(s, latest, sizeof latest, e) < 0)
			return -1;
		sha = latest;
	}
	vm_log(s->vm, FLOW_INFO, "Creating tag '%s' for commit '%s' in %s/%s", ver, sha, s->org, s->name);
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (fire(s, "POST", at(s, p, sizeof p, "/git/tags"),
		 json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "tag", ver, "message", msg, "object", sha, "type",
			   "commit", "tagger", "name", who, "email", mail, "date", date),
		 e) < 0) {
		err_prefix(e, "Can't create a tag");
		return -1;
	}
	vm_log(s->vm, FLOW_INFO, "Successfully created TAG for the commit #%s", sha);
	if (fire(s, "POST", at(s, p, sizeof p, "/git/refs"), json_pack("{s:s+, s:s}", "ref", "refs/tags/", ver, "sha", sha),
		 e) < 0) {
		err_prefix(e, "Can't create a tag reference");
		return -1;
	}
	vm_log(s->vm, FLOW_INFO, "Successfully Created TAG Reference refs/tags/%s", ver);
	return done(out, json_object(), e);
}

/* DELETE git/refs/<kind>/<name> (deleteTag, deleteBranch). */
static int delete_ref(struct gh_step *s, const char *kind, const char *key, json_t **out, struct err *e)
{
	const char *name;
	char p[1400];
	int rc;

	if (need(s, key, &name, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Deleting %s '%s' in %s/%s", strcmp(kind, "tags") ? "branch" : "tag", name, s->org,
	       s->name);
	ESC(n, name);
	rc = fire(s, "DELETE", at(s, p, sizeof p, "/git/refs/%s/%s", kind, n), NULL, e);
	free(n);
	if (rc < 0) {
		err_prefix(e, "Cannot delete %s '%s'", strcmp(kind, "tags") ? "branch" : "tag", name);
		return -1;
	}
	return done(out, json_object(), e);
}

static int a_delete_tag(struct gh_step *s, json_t **out, struct err *e)
{
	return delete_ref(s, "tags", "tagName", out, e);
}

static int a_delete_branch(struct gh_step *s, json_t **out, struct err *e)
{
	return delete_ref(s, "heads", "branch", out, e);
}

static int a_merge(struct gh_step *s, json_t **out, struct err *e)
{
	const char *head, *base, *msg;
	char p[1400];

	if (need(s, "head", &head, e) < 0 || need(s, "base", &base, e) < 0 || need(s, "commitMessage", &msg, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Merging %s in %s/%s", head, s->org, s->name);
	if (fire(s, "POST", at(s, p, sizeof p, "/merges"),
		 json_pack("{s:s, s:s, s:s}", "base", base, "head", head, "commit_message", msg), e) < 0) {
		err_prefix(e, "Cannot merge 'base' and 'head'");
		return -1;
	}
	vm_log(s->vm, FLOW_INFO, "Merged '%s' with '%s'", head, base);
	return done(out, json_object(), e);
}

static int a_get_commit(struct gh_step *s, json_t **out, struct err *e)
{
	const char *sha;
	json_t *c = NULL, *r = NULL;
	char p[1400];

	if (need(s, "commitSHA", &sha, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Getting commit '%s' in %s/%s", sha, s->org, s->name);
	ESC(x, sha);
	int rc = call(s, "GET", at(s, p, sizeof p, "/commits/%s", x), NULL, &c, e);
	free(x);
	if (rc < 0 || call(s, "GET", s->repo, NULL, &r, e) < 0) {
		json_decref(c);
		err_prefix(e, "Failed to get commit data");
		return -1;
	}
	const char *dflt = json_string_value(json_object_get(r, "default_branch"));
	if (dflt && *dflt)
		json_object_set_new(c, "defaultBranch", json_string(dflt));
	json_decref(r);
	return done(out, json_pack("{s:{s:b, s:O}, s:o}", "result", "ok", 1, "data", c, "commit", c), e);
}

static int a_add_status(struct gh_step *s, json_t **out, struct err *e)
{
	static const char *const states[] = {"error", "failure", "pending", "success"};
	const char *sha, *state, *ctx = opt(s, "context");
	char p[1400], st[32];
	size_t i;

	if (need(s, "commitSHA", &sha, e) < 0 || need(s, "state", &state, e) < 0)
		return -1;
	str_fmt_cut(st, sizeof st, "%s", state);
	for (char *c = st; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	for (i = 0; i < 4 && strcmp(st, states[i]) != 0; i++)
		;
	if (i == 4)
		return err_set(e, ERR_INVALID, "Unknown state: %s. Expected one of [error, failure, pending, success]",
			       state);
	vm_log(s->vm, FLOW_INFO, "Creating a status check (%s) in %s/%s repository with sha '%s'", st, s->org, s->name,
	       sha);
	ESC(x, sha);
	int rc = fire(s, "POST", at(s, p, sizeof p, "/statuses/%s", x),
		      json_pack("{s:s, s:s, s:s*, s:s*}", "state", st, "context", ctx ? ctx : "default", "target_url",
				opt(s, "targetUrl"), "description", opt(s, "description")),
		      e);
	free(x);
	if (rc < 0) {
		err_prefix(e, "Cannot create a status check request");
		return -1;
	}
	vm_log(s->vm, FLOW_INFO, "Status check created");
	return done(out, json_object(), e);
}

static int a_get_statuses(struct gh_step *s, json_t **out, struct err *e)
{
	const char *sha;
	json_t *list;
	char p[1400];

	if (need(s, "commitSHA", &sha, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Getting status for commit %s in %s/%s", sha, s->org, s->name);
	ESC(x, sha);
	int rc = get_list(s, at(s, p, sizeof p, "/statuses/%s", x), &list, e);
	free(x);
	if (rc < 0) {
		err_prefix(e, "Cannot get status");
		return -1;
	}
	return done(out, json_pack("{s:o}", "commitStatuses", list), e);
}

static int a_fork(struct gh_step *s, json_t **out, struct err *e)
{
	const char *target = opt(s, "targetOrg");
	char p[1400];

	if (target && *target)
		vm_log(s->vm, FLOW_INFO, "Forking '%s/%s' into '%s' org...", s->org, s->name, target);
	else
		vm_log(s->vm, FLOW_INFO, "Forking '%s/%s' into your personal repository...", s->org, s->name);
	if (fire(s, "POST", at(s, p, sizeof p, "/forks"),
		 target && *target ? json_pack("{s:s}", "organization", target) : NULL, e) < 0) {
		err_prefix(e, "Error occurred during fork");
		return -1;
	}
	vm_log(s->vm, FLOW_INFO, "Fork action completed");
	return done(out, json_object(), e);
}

/* The names of a list's items (branches, tags) as result key. */
static int name_list(struct gh_step *s, const char *what, const char *key, json_t **out, struct err *e)
{
	json_t *list, *names = json_array(), *v;
	char p[1400];
	size_t i;

	if (!names)
		return oom(e);
	vm_log(s->vm, FLOW_INFO, "Getting %s list from '%s/%s'...", strcmp(what, "branches") ? "tag" : "branch",
	       s->org, s->name);
	if (get_list(s, at(s, p, sizeof p, "/%s", what), &list, e) < 0) {
		json_decref(names);
		err_prefix(e, "Error occurred while getting %s list", strcmp(what, "branches") ? "tag" : "branch");
		return -1;
	}
	json_array_foreach(list, i, v) json_array_append(names, json_object_get(v, "name"));
	json_decref(list);
	return done(out, json_pack("{s:o}", key, names), e);
}

static int a_branch_list(struct gh_step *s, json_t **out, struct err *e)
{
	return name_list(s, "branches", "branchList", out, e);
}

static int a_tag_list(struct gh_step *s, json_t **out, struct err *e)
{
	return name_list(s, "tags", "tagList", out, e);
}

static int a_get_pr(struct gh_step *s, json_t **out, struct err *e)
{
	long long n;
	json_t *r = NULL;
	char p[1400];

	if (need_int(s, "prNumber", &n, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Getting PR %lld info from '%s/%s'...", n, s->org, s->name);
	if (call(s, "GET", at(s, p, sizeof p, "/pulls/%lld", n), NULL, &r, e) < 0) {
		err_prefix(e, "Error occurred while getting PR");
		return -1;
	}
	return done(out, json_pack("{s:o}", "pr", r), e);
}

static int a_pr_list(struct gh_step *s, json_t **out, struct err *e)
{
	const char *state = opt(s, "state") ? opt(s, "state") : "open";
	json_t *list;
	char p[1400];

	if (strcasecmp(state, "all") != 0 && strcasecmp(state, "open") != 0 && strcasecmp(state, "closed") != 0)
		return err_set(e, ERR_INVALID, "Invalid PR state '%s'. Allowed values are only 'all', 'open', 'closed'.",
			       state);
	vm_log(s->vm, FLOW_INFO, "Getting '%s' PRs from '%s/%s'...", state, s->org, s->name);
	if (get_list(s, at(s, p, sizeof p, "/pulls?state=%s", state), &list, e) < 0) {
		err_prefix(e, "Error occurred while getting PR list");
		return -1;
	}
	return done(out, json_pack("{s:o}", "prList", list), e);
}

static int a_pr_files(struct gh_step *s, json_t **out, struct err *e)
{
	static const char *const kinds[] = {"added", "removed", "modified", "renamed", "copied", "changed"};
	static const char *const keys[] = {"prFilesAdded",  "prFilesRemoved", "prFilesModified",
					   "prFilesRenamed", "prFilesCopied",  "prFilesChanged"};
	json_t *list, *res, *any, *f;
	long long n;
	char p[1400];
	size_t i;

	if (need_int(s, "prNumber", &n, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Getting PR %lld files from '%s/%s'", n, s->org, s->name);
	if (get_list(s, at(s, p, sizeof p, "/pulls/%lld/files", n), &list, e) < 0) {
		err_prefix(e, "Error occurred while getting PR list");
		return -1;
	}
	json_array_foreach(list, i, f) json_object_del(f, "patch");
	if (!(res = json_pack("{s:o}", "prFiles", list)) || !(any = json_array()))
		return (json_decref(res), oom(e));
	for (size_t k = 0; k < 6; k++) {
		json_t *names = json_array();
		json_array_foreach(list, i, f)
		{
			const char *st = json_string_value(json_object_get(f, "status"));
			if (st && strcmp(st, kinds[k]) == 0)
				json_array_append(names, json_object_get(f, "filename"));
		}
		json_array_extend(any, names);
		json_object_set_new(res, keys[k], names);
	}
	json_object_set_new(res, "prFilesAny", any);
	return done(out, res, e);
}

/* GET the repository: 1 it exists (*r set), 0 it does not (404), < 0 failed. */
static int repo_get(struct gh_step *s, json_t **r, struct err *e)
{
	long status = 0;
	*r = NULL;
	if (gh_call(&s->g, "GET", s->repo, NULL, r, &status, e) == 0)
		return 1;
	if (status == 404) {
		*e = (struct err){0};
		return 0;
	}
	return -1;
}

static int a_create_repo(struct gh_step *s, json_t **out, struct err *e)
{
	json_t *r = NULL;
	char p[1200];
	int rc;

	vm_log(s->vm, FLOW_INFO, "Creating repository '%s' in '%s' organization", s->name, s->org);
	if ((rc = repo_get(s, &r, e)) == 0) {
		ESC(o, s->org);
		str_fmt_cut(p, sizeof p, "/orgs/%s/repos", o);
		free(o);
		rc = call(s, "POST", p, json_pack("{s:s}", "name", s->name), &r, e) < 0 ? -1 : 0;
		if (rc == 0)
			vm_log(s->vm, FLOW_INFO, "Repository %s created successfully in %s organization.", s->name, s->org);
	} else if (rc == 1) {
		vm_log(s->vm, FLOW_WARN, "Repository %s/%s already exists. Skipping creation ...", s->org, s->name);
	}
	if (rc < 0) {
		err_prefix(e, "Error occurred while creating repository");
		return -1;
	}
	json_t *res = json_pack("{s:O?, s:O?}", "cloneUrl", json_object_get(r, "clone_url"), "scmUrl",
				json_object_get(r, "url"));
	json_decref(r);
	return done(out, res, e);
}

static int a_delete_repo(struct gh_step *s, json_t **out, struct err *e)
{
	json_t *r = NULL;
	int rc;

	vm_log(s->vm, FLOW_INFO, "Deleting repository '%s' from '%s' organization", s->name, s->org);
	if ((rc = repo_get(s, &r, e)) == 1)
		rc = fire(s, "DELETE", s->repo, NULL, e) < 0 ? -1 : 1;
	json_decref(r);
	if (rc < 0) {
		err_prefix(e, "Error occurred while deleting repository");
		return -1;
	}
	if (rc == 0)
		vm_log(s->vm, FLOW_WARN,
		       "Repository %s/%s does not exist. Looks like it is already deleted. Skipping deletion ...", s->org,
		       s->name);
	else
		vm_log(s->vm, FLOW_INFO, "Repository %s deleted successfully from %s organization.", s->name, s->org);
	return done(out, json_object(), e);
}

/* A content item whose base64 content becomes text (GitHub wraps it in lines). */
static void decode_content(json_t *item)
{
	const char *enc = json_string_value(json_object_get(item, "encoding"));
	const char *text = json_string_value(json_object_get(item, "content"));
	struct err e;
	char *flat;
	size_t j = 0, len;
	unsigned char *raw;

	if (!enc || strcasecmp(enc, "base64") != 0 || !text || !(flat = malloc(strlen(text) + 1)))
		return;
	for (const char *c = text; *c; c++)
		if (!strchr("\r\n ", *c))
			flat[j++] = *c;
	if ((raw = b64_decode(flat, j, &len, &e)))
		json_object_set_new(item, "content", jsonx_string_lossy((const char *)raw));
	free(raw);
	free(flat);
}

static int a_get_content(struct gh_step *s, json_t **out, struct err *e)
{
	const char *path, *ref = opt(s, "ref");
	json_t *r = NULL, *list, *v;
	char p[4400];
	size_t i;

	if (need(s, "path", &path, e) < 0)
		return -1;
	vm_log(s->vm, FLOW_INFO, "Getting '%s' file content in %s/%s repo with ref %s", path, s->org, s->name,
	       ref ? ref : "null");
	ESC(x, path);
	ESC(rx, ref ? ref : "");
	/* the path keeps its slashes */
	for (char *c; (c = strstr(x, "%2F"));) {
		*c = '/';
		memmove(c + 1, c + 3, strlen(c + 3) + 1);
	}
	int rc = call(s, "GET", at(s, p, sizeof p, "/contents/%s%s%s", x, ref ? "?ref=" : "", ref ? rx : ""), NULL,
		      &r, e);
	free(x);
	free(rx);
	if (rc < 0) {
		err_prefix(e, "Cannot get content");
		return -1;
	}
	list = json_is_array(r) ? r : json_pack("[o]", r);
	json_array_foreach(list, i, v) decode_content(v);
	vm_log(s->vm, FLOW_INFO, "Contents size: %zu", json_array_size(list));
	return done(out, json_pack("{s:o}", "contents", list), e);
}

static int a_get_ref(struct gh_step *s, json_t **out, struct err *e)
{
	const char *ref;
	json_t *r = NULL, *fail = json_object_get(s->in, "failIfNotFound");
	long status = 0;
	char p[1400];

	if (need(s, "ref", &ref, e) < 0)
		return -1;
	ESC(x, ref);
	for (char *c; (c = strstr(x, "%2F"));) {
		*c = '/';
		memmove(c + 1, c + 3, strlen(c + 3) + 1);
	}
	int rc = gh_call(&s->g, "GET", at(s, p, sizeof p, "/git/ref/%s", x), NULL, &r, &status, e);
	free(x);
	if (rc < 0 && status == 404 && json_is_false(fail)) {
		*e = (struct err){0};
		return done(out, json_object(), e);
	}
	if (rc < 0) {
		err_prefix(e, "Error while getting ref '%s'", ref);
		return -1;
	}
	return done(out, json_pack("{s:o}", "ref", r), e);
}

static int a_dispatch(struct gh_step *s, json_t **out, struct err *e)
{
	const char *type;
	json_t *payload = json_object_get(s->in, "clientPayload");
	char p[1400];

	if (need(s, "eventType", &type, e) < 0)
		return -1;
	if (payload && !json_is_object(payload))
		return err_set(e, ERR_INVALID, "github: 'clientPayload' must be a map");
	if (fire(s, "POST", at(s, p, sizeof p, "/dispatches"),
		 json_pack("{s:s, s:O}", "event_type", type, "client_payload", payload ? payload : json_object()), e) <
	    0) {
		err_prefix(e, "Error while creating repository dispatch event");
		return -1;
	}
	return done(out, json_object(), e);
}

static int a_list_hooks(struct gh_step *s, json_t **out, struct err *e)
{
	json_t *list;
	char p[1400];
	if (get_list(s, at(s, p, sizeof p, "/hooks"), &list, e) < 0) {
		err_prefix(e, "Error while listing webhooks");
		return -1;
	}
	return done(out, json_pack("{s:o}", "webhooks", list), e);
}

static int a_app_token(struct gh_step *s, json_t **out, struct err *e)
{
	return done(out, json_pack("{s:s}", "token", s->g.token), e);
}

typedef int (*gh_action_fn)(struct gh_step *s, json_t **out, struct err *e);

static const struct {
	const char *name;
	gh_action_fn fn; /* NULL: Concord has it, Accord not yet */
	const char *fail; /* the prefix of an API failure's message, NULL: the action sets it */
} actions[] = {
    {"createPr", a_create_pr, "Failed to create pull request"},
    {"commentPR", a_comment_pr, "Cannot comment on the pull request"},
    {"mergePR", a_merge_pr, "Cannot merge the pull request"},
    {"closePR", a_close_pr, "Cannot close the pull request"},
    {"getPRCommitList", a_pr_commits, "Cannot get PR commits"},
    {"merge", a_merge, NULL},
    {"createIssue", a_create_issue, "Cannot create issue"},
    {"createBranch", a_create_branch, "Error while creating new branch"},
    {"createTag", a_create_tag, NULL},
    {"createHook", NULL, NULL},
    {"deleteTag", a_delete_tag, NULL},
    {"deleteBranch", a_delete_branch, NULL},
    {"getCommit", a_get_commit, NULL},
    {"addStatus", a_add_status, NULL},
    {"getStatuses", a_get_statuses, NULL},
    {"forkRepo", a_fork, NULL},
    {"getBranchList", a_branch_list, NULL},
    {"getPR", a_get_pr, NULL},
    {"getPRList", a_pr_list, NULL},
    {"getPRFiles", a_pr_files, NULL},
    {"getTagList", a_tag_list, NULL},
    {"getLatestSHA", a_latest_sha, NULL},
    {"createRepo", a_create_repo, NULL},
    {"deleteRepo", a_delete_repo, NULL},
    {"getContent", a_get_content, NULL},
    {"createAppToken", a_app_token, NULL},
    {"getShortSha", NULL, NULL},
    {"listCommits", NULL, NULL},
    {"getTag", NULL, NULL},
    {"getRef", a_get_ref, NULL},
    {"createRepositoryDispatch", a_dispatch, NULL},
    {"listWebhooks", a_list_hooks, NULL},
};
#define N_ACTIONS (sizeof actions / sizeof actions[0])

static int unknown(const char *action, struct err *e)
{
	char list[800] = "";
	for (size_t i = 0; i < N_ACTIONS; i++) {
		size_t n = strlen(list);
		str_fmt_cut(list + n, sizeof list - n, "%s", i ? ", " : "");
		n = strlen(list);
		for (const char *c = actions[i].name; *c && n + 1 < sizeof list; c++)
			list[n++] = (char)toupper((unsigned char)*c);
		list[n] = '\0';
	}
	return err_set(e, ERR_INVALID, "Unknown action: '%s'. Available actions: [%s]", action, list);
}

static int github_execute(struct task_ctx *c, json_t *in, json_t **out, struct err *e)
{
	struct gh_step s = {.in = in, .vm = c->vm};
	const char *action;
	size_t i;
	int rc = -1;

	if (need(&s, "action", &action, e) < 0)
		return -1;
	for (i = 0; i < N_ACTIONS && strcasecmp(action, actions[i].name) != 0; i++)
		;
	if (i == N_ACTIONS)
		return unknown(action, e);
	if (!actions[i].fn)
		return err_set(e, ERR_INVALID, "github: the action '%s' is not supported by Accord yet", actions[i].name);
	if (need(&s, "org", &s.org, e) < 0 || need(&s, "repo", &s.name, e) < 0)
		return -1;
	char *o = gh_escape(s.org), *r = gh_escape(s.name);
	if (o && r)
		str_fmt_cut(s.repo, sizeof s.repo, "/repos/%s/%s", o, r);
	free(o);
	free(r);
	if (!s.repo[0])
		return oom(e);
	json_t *url = json_object_get(in, "apiUrl");
	char *token = NULL;
	if (url && !json_is_null(url) && !json_is_string(url))
		return err_set(e, ERR_INVALID, "github: 'apiUrl' must be a URL");
	if (gh_auth_token(c, in, json_string_value(url), s.org, s.name, &token, e) < 0)
		return -1;
	rc = gh_init(&s.g, c, json_string_value(url), token, false, e);
	sodium_memzero(token, strlen(token));
	free(token);
	if (rc == 0) {
		vm_log(c->vm, FLOW_INFO, "Starting '%s' action on API URL: %s", actions[i].name, s.g.base);
		if ((rc = actions[i].fn(&s, out, e)) < 0 && actions[i].fail && s.api_failed)
			err_prefix(e, "%s", actions[i].fail);
	}
	gh_cleanup(&s.g);
	return rc;
}

static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_github = {"github", github_execute, no_methods, false};
