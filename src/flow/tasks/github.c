/* The `github` task (docs/flows.md "github"): Concord's GitHub actions over GitHub's REST
 * API (github_client.h).  Each action's parameters, requests and result fields are those
 * of Concord's GitHubTask; a result also carries ok: true.  A failure fails the step with
 * Concord's message ("Failed to create pull request: GitHub API error: 422 - …"). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "flow/el/el.h"
#include "flow/tasks/defaults.h"
#include "flow/tasks/github_app.h"
#include "flow/tasks/github_client.h"
#include "flow/tasks/github_step.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

static int a_create_branch(struct gh_step *s, json_t **out, struct err *e)
{
	const char *name, *sha;
	json_t *r = NULL;
	long status = 0;
	char p[1400];

	if (ghs_need(s, "branchName", &name, e) < 0 || ghs_need(s, "sha", &sha, e) < 0)
		return -1;
	GHS_ESC(b, name);
	int rc = gh_call(&s->g, "GET", ghs_at(s, p, sizeof p, "/git/ref/heads/%s", b), NULL, &r, &status, e);
	free(b);
	json_decref(r);
	if (rc == 0)
		return ghs_done(out, json_pack("{s:b}", "alreadyExists", 1), e);
	if (status != 404)
		return -1;
	if (ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/git/refs"),
		 json_pack("{s:s+, s:s}", "ref", "refs/heads/", name, "sha", sha), e) < 0)
		return -1;
	return ghs_done(out, json_object(), e);
}

/* The SHA of the latest commit of `branch` (default master) among the repository's branches. */
static int latest_sha(struct gh_step *s, char *sha, size_t cap, struct err *e)
{
	const char *branch = ghs_opt(s, "branch") ? ghs_opt(s, "branch") : "master";
	json_t *list, *b;
	char p[1400];
	size_t i;

	ghs_log(s, FLOW_INFO, "Getting latest commit SHA for '%s/%s/%s'...", s->org, s->name, branch);
	if (ghs_list(s, ghs_at(s, p, sizeof p, "/branches"), &list, e) < 0) {
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
			ghs_log(s, FLOW_INFO, "Latest commit SHA: '%s'", sha);
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
	return ghs_done(out, json_pack("{s:s}", "latestCommitSHA", sha), e);
}

static int a_create_tag(struct gh_step *s, json_t **out, struct err *e)
{
	const char *ver, *msg, *who, *mail, *sha = ghs_opt(s, "commitSHA");
	char p[1400], latest[100], date[40];

	if (ghs_need(s, "tagVersion", &ver, e) < 0 || ghs_need(s, "tagMessage", &msg, e) < 0 ||
	    ghs_need(s, "tagAuthorName", &who, e) < 0 || ghs_need(s, "tagAuthorEmail", &mail, e) < 0)
		return -1;
	if ((!sha || !*sha) && !ghs_opt(s, "branch"))
		return err_set(e, ERR_INVALID, "Invalid task input parameters: commitSHA or branch is required");
	if (!sha || !*sha) {
		if (latest_sha(s, latest, sizeof latest, e) < 0)
			return -1;
		sha = latest;
	}
	ghs_log(s, FLOW_INFO, "Creating tag '%s' for commit '%s' in %s/%s", ver, sha, s->org, s->name);
	time_t now = time(NULL);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/git/tags"),
		 json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}}", "tag", ver, "message", msg, "object", sha, "type",
			   "commit", "tagger", "name", who, "email", mail, "date", date),
		 e) < 0) {
		err_prefix(e, "Can't create a tag");
		return -1;
	}
	ghs_log(s, FLOW_INFO, "Successfully created TAG for the commit #%s", sha);
	if (ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/git/refs"), json_pack("{s:s+, s:s}", "ref", "refs/tags/", ver, "sha", sha),
		 e) < 0) {
		err_prefix(e, "Can't create a tag reference");
		return -1;
	}
	ghs_log(s, FLOW_INFO, "Successfully Created TAG Reference refs/tags/%s", ver);
	return ghs_done(out, json_object(), e);
}

/* DELETE git/refs/<kind>/<name> (deleteTag, deleteBranch). */
static int delete_ref(struct gh_step *s, const char *kind, const char *key, json_t **out, struct err *e)
{
	const char *name;
	char p[1400];
	int rc;

	if (ghs_need(s, key, &name, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Deleting %s '%s' in %s/%s", strcmp(kind, "tags") ? "branch" : "tag", name, s->org,
	       s->name);
	GHS_ESC(n, name);
	rc = ghs_fire(s, "DELETE", ghs_at(s, p, sizeof p, "/git/refs/%s/%s", kind, n), NULL, e);
	free(n);
	if (rc < 0) {
		err_prefix(e, "Cannot delete %s '%s'", strcmp(kind, "tags") ? "branch" : "tag", name);
		return -1;
	}
	return ghs_done(out, json_object(), e);
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

	if (ghs_need(s, "head", &head, e) < 0 || ghs_need(s, "base", &base, e) < 0 || ghs_need(s, "commitMessage", &msg, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Merging %s in %s/%s", head, s->org, s->name);
	if (ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/merges"),
		 json_pack("{s:s, s:s, s:s}", "base", base, "head", head, "commit_message", msg), e) < 0) {
		err_prefix(e, "Cannot merge 'base' and 'head'");
		return -1;
	}
	ghs_log(s, FLOW_INFO, "Merged '%s' with '%s'", head, base);
	return ghs_done(out, json_object(), e);
}

static int a_get_commit(struct gh_step *s, json_t **out, struct err *e)
{
	const char *sha;
	json_t *c = NULL, *r = NULL;
	char p[1400];

	if (ghs_need(s, "commitSHA", &sha, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Getting commit '%s' in %s/%s", sha, s->org, s->name);
	GHS_ESC(x, sha);
	int rc = ghs_call(s, "GET", ghs_at(s, p, sizeof p, "/commits/%s", x), NULL, &c, e);
	free(x);
	if (rc < 0 || ghs_call(s, "GET", s->repo, NULL, &r, e) < 0) {
		json_decref(c);
		err_prefix(e, "Failed to get commit data");
		return -1;
	}
	const char *dflt = json_string_value(json_object_get(r, "default_branch"));
	if (dflt && *dflt)
		json_object_set_new(c, "defaultBranch", json_string(dflt));
	json_decref(r);
	return ghs_done(out, json_pack("{s:{s:b, s:O}, s:o}", "result", "ok", 1, "data", c, "commit", c), e);
}

static int a_add_status(struct gh_step *s, json_t **out, struct err *e)
{
	static const char *const states[] = {"error", "failure", "pending", "success"};
	const char *sha, *state, *ctx = ghs_opt(s, "context");
	char p[1400], st[32];
	size_t i;

	if (ghs_need(s, "commitSHA", &sha, e) < 0 || ghs_need(s, "state", &state, e) < 0)
		return -1;
	str_fmt_cut(st, sizeof st, "%s", state);
	for (char *c = st; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	for (i = 0; i < 4 && strcmp(st, states[i]) != 0; i++)
		;
	if (i == 4)
		return err_set(e, ERR_INVALID, "Unknown state: %s. Expected one of [error, failure, pending, success]",
			       state);
	ghs_log(s, FLOW_INFO, "Creating a status check (%s) in %s/%s repository with sha '%s'", st, s->org, s->name,
	       sha);
	GHS_ESC(x, sha);
	int rc = ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/statuses/%s", x),
		      json_pack("{s:s, s:s, s:s*, s:s*}", "state", st, "context", ctx ? ctx : "default", "target_url",
				ghs_opt(s, "targetUrl"), "description", ghs_opt(s, "description")),
		      e);
	free(x);
	if (rc < 0) {
		err_prefix(e, "Cannot create a status check request");
		return -1;
	}
	ghs_log(s, FLOW_INFO, "Status check created");
	return ghs_done(out, json_object(), e);
}

static int a_get_statuses(struct gh_step *s, json_t **out, struct err *e)
{
	const char *sha;
	json_t *list;
	char p[1400];

	if (ghs_need(s, "commitSHA", &sha, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Getting status for commit %s in %s/%s", sha, s->org, s->name);
	GHS_ESC(x, sha);
	int rc = ghs_list(s, ghs_at(s, p, sizeof p, "/statuses/%s", x), &list, e);
	free(x);
	if (rc < 0) {
		err_prefix(e, "Cannot get status");
		return -1;
	}
	return ghs_done(out, json_pack("{s:o}", "commitStatuses", list), e);
}

static int a_fork(struct gh_step *s, json_t **out, struct err *e)
{
	const char *target = ghs_opt(s, "targetOrg");
	char p[1400];

	if (target && *target)
		ghs_log(s, FLOW_INFO, "Forking '%s/%s' into '%s' org...", s->org, s->name, target);
	else
		ghs_log(s, FLOW_INFO, "Forking '%s/%s' into your personal repository...", s->org, s->name);
	if (ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/forks"),
		 target && *target ? json_pack("{s:s}", "organization", target) : NULL, e) < 0) {
		err_prefix(e, "Error occurred during fork");
		return -1;
	}
	ghs_log(s, FLOW_INFO, "Fork action completed");
	return ghs_done(out, json_object(), e);
}

/* The names of a list's items (branches, tags) as result key. */
static int name_list(struct gh_step *s, const char *what, const char *key, json_t **out, struct err *e)
{
	json_t *list, *names = json_array(), *v;
	char p[1400];
	size_t i;

	if (!names)
		return ghs_oom(e);
	ghs_log(s, FLOW_INFO, "Getting %s list from '%s/%s'...", strcmp(what, "branches") ? "tag" : "branch",
	       s->org, s->name);
	if (ghs_list(s, ghs_at(s, p, sizeof p, "/%s", what), &list, e) < 0) {
		json_decref(names);
		err_prefix(e, "Error occurred while getting %s list", strcmp(what, "branches") ? "tag" : "branch");
		return -1;
	}
	json_array_foreach(list, i, v) json_array_append(names, json_object_get(v, "name"));
	json_decref(list);
	return ghs_done(out, json_pack("{s:o}", key, names), e);
}

static int a_branch_list(struct gh_step *s, json_t **out, struct err *e)
{
	return name_list(s, "branches", "branchList", out, e);
}

static int a_tag_list(struct gh_step *s, json_t **out, struct err *e)
{
	return name_list(s, "tags", "tagList", out, e);
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

	ghs_log(s, FLOW_INFO, "Creating repository '%s' in '%s' organization", s->name, s->org);
	if ((rc = repo_get(s, &r, e)) == 0) {
		GHS_ESC(o, s->org);
		str_fmt_cut(p, sizeof p, "/orgs/%s/repos", o);
		free(o);
		rc = ghs_call(s, "POST", p, json_pack("{s:s}", "name", s->name), &r, e) < 0 ? -1 : 0;
		if (rc == 0)
			ghs_log(s, FLOW_INFO, "Repository %s created successfully in %s organization.", s->name, s->org);
	} else if (rc == 1) {
		ghs_log(s, FLOW_WARN, "Repository %s/%s already exists. Skipping creation ...", s->org, s->name);
	}
	if (rc < 0) {
		err_prefix(e, "Error occurred while creating repository");
		return -1;
	}
	json_t *res = json_pack("{s:O?, s:O?}", "cloneUrl", json_object_get(r, "clone_url"), "scmUrl",
				json_object_get(r, "url"));
	json_decref(r);
	return ghs_done(out, res, e);
}

static int a_delete_repo(struct gh_step *s, json_t **out, struct err *e)
{
	json_t *r = NULL;
	int rc;

	ghs_log(s, FLOW_INFO, "Deleting repository '%s' from '%s' organization", s->name, s->org);
	if ((rc = repo_get(s, &r, e)) == 1)
		rc = ghs_fire(s, "DELETE", s->repo, NULL, e) < 0 ? -1 : 1;
	json_decref(r);
	if (rc < 0) {
		err_prefix(e, "Error occurred while deleting repository");
		return -1;
	}
	if (rc == 0)
		ghs_log(s, FLOW_WARN,
		       "Repository %s/%s does not exist. Looks like it is already deleted. Skipping deletion ...", s->org,
		       s->name);
	else
		ghs_log(s, FLOW_INFO, "Repository %s deleted successfully from %s organization.", s->name, s->org);
	return ghs_done(out, json_object(), e);
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
	const char *path, *ref = ghs_opt(s, "ref");
	json_t *r = NULL, *list, *v;
	char p[4400];
	size_t i;

	if (ghs_need(s, "path", &path, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Getting '%s' file content in %s/%s repo with ref %s", path, s->org, s->name,
	       ref ? ref : "null");
	GHS_ESC(x, path);
	GHS_ESC(rx, ref ? ref : "");
	/* the path keeps its slashes */
	for (char *c; (c = strstr(x, "%2F"));) {
		*c = '/';
		memmove(c + 1, c + 3, strlen(c + 3) + 1);
	}
	int rc = ghs_call(s, "GET", ghs_at(s, p, sizeof p, "/contents/%s%s%s", x, ref ? "?ref=" : "", ref ? rx : ""), NULL,
		      &r, e);
	free(x);
	free(rx);
	if (rc < 0) {
		err_prefix(e, "Cannot get content");
		return -1;
	}
	list = json_is_array(r) ? r : json_pack("[o]", r);
	json_array_foreach(list, i, v) decode_content(v);
	ghs_log(s, FLOW_INFO, "Contents size: %zu", json_array_size(list));
	return ghs_done(out, json_pack("{s:o}", "contents", list), e);
}

static int a_get_ref(struct gh_step *s, json_t **out, struct err *e)
{
	const char *ref;
	json_t *r = NULL, *fail = json_object_get(s->in, "failIfNotFound");
	long status = 0;
	char p[1400];

	if (ghs_need(s, "ref", &ref, e) < 0)
		return -1;
	GHS_ESC(x, ref);
	for (char *c; (c = strstr(x, "%2F"));) {
		*c = '/';
		memmove(c + 1, c + 3, strlen(c + 3) + 1);
	}
	int rc = gh_call(&s->g, "GET", ghs_at(s, p, sizeof p, "/git/ref/%s", x), NULL, &r, &status, e);
	free(x);
	if (rc < 0 && status == 404 && json_is_false(fail)) {
		*e = (struct err){0};
		return ghs_done(out, json_object(), e);
	}
	if (rc < 0) {
		err_prefix(e, "Error while getting ref '%s'", ref);
		return -1;
	}
	return ghs_done(out, json_pack("{s:o}", "ref", r), e);
}

static int a_dispatch(struct gh_step *s, json_t **out, struct err *e)
{
	const char *type;
	json_t *payload = json_object_get(s->in, "clientPayload");
	char p[1400];

	if (ghs_need(s, "eventType", &type, e) < 0)
		return -1;
	if (payload && !json_is_object(payload))
		return err_set(e, ERR_INVALID, "github: 'clientPayload' must be a map");
	if (ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/dispatches"),
		 json_pack("{s:s, s:O}", "event_type", type, "client_payload", payload ? payload : json_object()), e) <
	    0) {
		err_prefix(e, "Error while creating repository dispatch event");
		return -1;
	}
	return ghs_done(out, json_object(), e);
}

static int a_list_hooks(struct gh_step *s, json_t **out, struct err *e)
{
	json_t *list;
	char p[1400];
	if (ghs_list(s, ghs_at(s, p, sizeof p, "/hooks"), &list, e) < 0) {
		err_prefix(e, "Error while listing webhooks");
		return -1;
	}
	return ghs_done(out, json_pack("{s:o}", "webhooks", list), e);
}

/* GET commits/<ref>: 1 found (*c set), 0 not found (404 or 422), < 0 failed. */
static int commit_get(struct gh_step *s, const char *ref, json_t **c, struct err *e)
{
	long status = 0;
	char p[1400];
	GHS_ESC(x, ref);
	int rc = gh_call(&s->g, "GET", ghs_at(s, p, sizeof p, "/commits/%s", x), NULL, c, &status, e);
	free(x);
	if (rc == 0)
		return 1;
	if (status == 404 || status == 422) {
		*e = (struct err){0};
		return 0;
	}
	s->api_failed = true;
	return -1;
}

static int a_short_sha(struct gh_step *s, json_t **out, struct err *e)
{
	const char *sha;
	json_t *c = NULL, *v = json_object_get(s->in, "minLength");
	long long min = json_is_integer(v) && json_integer_value(v) > 0 ? json_integer_value(v) : 7;
	char prefix[64];
	int rc;

	if (ghs_need(s, "sha", &sha, e) < 0)
		return -1;
	if ((rc = commit_get(s, sha, &c, e)) <= 0)
		return rc < 0 ? -1 : err_set(e, ERR_NOT_FOUND, "Commit not found in '%s/%s'", s->org, s->name);
	json_decref(c);
	for (size_t len = (size_t)min; len <= 40 && len <= strlen(sha); len++) {
		str_fmt_cut(prefix, sizeof prefix, "%.*s", (int)len, sha);
		c = NULL;
		if ((rc = commit_get(s, prefix, &c, e)) < 0)
			return -1;
		bool same = rc == 1 && json_is_string(json_object_get(c, "sha")) &&
			    strcmp(json_string_value(json_object_get(c, "sha")), sha) == 0;
		json_decref(c);
		if (same) {
			ghs_log(s, FLOW_INFO, "Short SHA for '%s' commit is '%s' in '%s/%s'", sha, prefix, s->org,
			       s->name);
			return ghs_done(out, json_pack("{s:s}", "shortSha", prefix), e);
		}
	}
	return err_set(e, ERR_INVALID, "Could not derive unique short SHA for '%s' commit", sha);
}

static int a_get_tag(struct gh_step *s, json_t **out, struct err *e)
{
	const char *sha = ghs_opt(s, "tagSha"), *name = ghs_opt(s, "tagName");
	json_t *ref = NULL, *tag = NULL;
	char p[1400], target[100];

	if (!sha && !name)
		return err_set(e, ERR_INVALID, "Either 'tagSha' or 'tagName' must be provided");
	if (!sha) {
		ghs_log(s, FLOW_INFO, "Getting tag by name '%s' from %s/%s", name, s->org, s->name);
		GHS_ESC(x, name);
		int rc = ghs_call(s, "GET", ghs_at(s, p, sizeof p, "/git/ref/tags/%s", x), NULL, &ref, e);
		free(x);
		if (rc < 0)
			return -1;
		json_t *obj = json_object_get(ref, "object");
		const char *type = json_string_value(json_object_get(obj, "type"));
		if (!type || strcmp(type, "tag") != 0 || !json_is_string(json_object_get(obj, "sha"))) {
			err_set(e, ERR_INVALID, "Failed to get tag: Not an annotated tag: %s, sha: null",
				type ? type : "null");
			json_decref(ref);
			return -1;
		}
		str_fmt_cut(target, sizeof target, "%s", json_string_value(json_object_get(obj, "sha")));
		json_decref(ref);
		sha = target;
	}
	ghs_log(s, FLOW_INFO, "Getting tag by SHA '%s' from %s/%s", sha, s->org, s->name);
	GHS_ESC(y, sha);
	int rc = ghs_call(s, "GET", ghs_at(s, p, sizeof p, "/git/tags/%s", y), NULL, &tag, e);
	free(y);
	return rc < 0 ? -1 : ghs_done(out, json_pack("{s:o}", "tag", tag), e);
}

/* The hook's config: `config` as given, or content_type, secret and insecure_ssl. */
static json_t *hook_config(struct gh_step *s, const char *url)
{
	json_t *cfg = json_object_get(s->in, "config");
	const char *secret = ghs_opt(s, "secret");

	if (json_is_object(cfg) && json_object_size(cfg))
		cfg = json_deep_copy(cfg);
	else
		cfg = json_pack("{s:s, s:s*, s:s}", "content_type", ghs_opt(s, "contentType") ? ghs_opt(s, "contentType") : "form",
				"secret", secret, "insecure_ssl", ghs_opt(s, "insecureSsl") ? ghs_opt(s, "insecureSsl") : "0");
	if (cfg)
		json_object_set_new(cfg, "url", json_string(url));
	return cfg; /* its secret was masked before the step's job started */
}

/* replace: true removes the repository's hooks that call the same URL first. */
static int hooks_drop(struct gh_step *s, const char *url, struct err *e)
{
	json_t *hooks, *h;
	char p[1400];
	size_t i;

	if (ghs_list(s, ghs_at(s, p, sizeof p, "/hooks"), &hooks, e) < 0)
		return -1;
	json_array_foreach(hooks, i, h)
	{
		const char *u = json_string_value(json_object_get(json_object_get(h, "config"), "url"));
		json_t *id = json_object_get(h, "id");
		if (!u || strcasecmp(u, url) != 0 || !json_is_integer(id))
			continue;
		if (ghs_fire(s, "DELETE", ghs_at(s, p, sizeof p, "/hooks/%lld", (long long)json_integer_value(id)), NULL, e) <
		    0) {
			json_decref(hooks);
			return -1;
		}
	}
	json_decref(hooks);
	return 0;
}

static int a_create_hook(struct gh_step *s, json_t **out, struct err *e)
{
	const char *raw;
	json_t *events = json_object_get(s->in, "events"), *replace = json_object_get(s->in, "replace"), *r = NULL;
	char url[2048], p[1400];

	if (ghs_need(s, "url", &raw, e) < 0)
		return -1;
	if (!json_is_array(events))
		return err_set(e, ERR_INVALID, "Mandatory parameter 'events' is required (a list)");
	while (*raw == ' ' || *raw == '\t')
		raw++;
	str_fmt_cut(url, sizeof url, "%s", raw);
	for (size_t n = strlen(url); n && strchr(" \t\r\n", url[n - 1]); n--)
		url[n - 1] = '\0';
	if ((json_is_true(replace) || (json_is_string(replace) && strcmp(json_string_value(replace), "true") == 0)) &&
	    hooks_drop(s, url, e) < 0)
		return -1;
	json_t *cfg = hook_config(s, url);
	if (!cfg)
		return ghs_oom(e);
	if (ghs_call(s, "POST", ghs_at(s, p, sizeof p, "/hooks"),
		 json_pack("{s:s, s:b, s:O, s:o}", "name", "web", "active", 1, "events", events, "config", cfg), &r, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Hook created id: %lld", (long long)json_integer_value(json_object_get(r, "id")));
	return ghs_done(out, json_pack("{s:o}", "hook", r), e);
}

/* listCommits: the commits of `sha` (a branch or commit) newest first, from toSha down to
 * fromSha (not included), at most searchDepth looked at, those whose message matches
 * `filter` (all without one), with each match's group 1 in filterMatches. */
struct commit_walk {
	const char *from, *to, *filter;
	long long depth, counted;
	bool started, stop;
	json_t *commits, *matches;
	struct err *e;
	int rc;
};

static bool commit_page(void *ctx, json_t *items)
{
	struct commit_walk *w = ctx;
	json_t *c;
	size_t i;

	json_array_foreach(items, i, c)
	{
		const char *sha = json_string_value(json_object_get(c, "sha"));
		const char *msg = json_string_value(json_object_get(json_object_get(c, "commit"), "message"));
		if (sha && strcmp(sha, w->to) == 0)
			w->started = true;
		if ((sha && strcmp(sha, w->from) == 0) || w->counted >= w->depth) {
			w->stop = true;
			break;
		}
		if (w->started && !w->filter) {
			json_array_append(w->commits, c);
		} else if (w->started && msg) {
			bool hit;
			char *group = NULL;
			if ((w->rc = el_regex_match(w->filter, msg, &hit, &group, w->e)) < 0)
				return false;
			if (hit)
				json_array_append(w->commits, c);
			if (hit && group) {
				struct str t = str_trim((struct str){group, strlen(group)});
				json_array_append_new(w->matches, json_stringn(t.p, t.len));
			}
			free(group);
		}
		w->counted++;
	}
	return !w->stop;
}

static int a_list_commits(struct gh_step *s, json_t **out, struct err *e)
{
	struct commit_walk w = {.filter = ghs_opt(s, "filter"), .e = e};
	json_t *v;
	const char *sha, *since = ghs_opt(s, "since");
	long long size = 100;
	char p[1400];

	if (ghs_need(s, "sha", &sha, e) < 0 || ghs_need(s, "fromSha", &w.from, e) < 0 ||
	    ghs_need(s, "toSha", &w.to, e) < 0)
		return -1;
	w.depth = json_is_integer(v = json_object_get(s->in, "searchDepth")) ? json_integer_value(v) : 1000;
	if (json_is_integer(v = json_object_get(s->in, "pageSize")))
		size = json_integer_value(v) < 1 ? 1 : json_integer_value(v) > 100 ? 100 : json_integer_value(v);
	if (strcmp(w.from, w.to) == 0)
		return ghs_done(out, json_pack("{s:[], s:[], s:b}", "commits", "filterMatches", "searchDepthReached", 0), e);
	GHS_ESC(x, sha);
	GHS_ESC(y, since ? since : "");
	ghs_at(s, p, sizeof p, "/commits?sha=%s%s%s", x, since ? "&since=" : "", since ? y : "");
	free(x);
	free(y);
	if (!(w.commits = json_array()) || !(w.matches = json_array())) {
		json_decref(w.commits);
		return ghs_oom(e);
	}
	if (gh_pages(&s->g, p, (int)size, commit_page, &w, e) < 0 || w.rc < 0) {
		s->api_failed = w.rc == 0;
		json_decref(w.commits);
		json_decref(w.matches);
		return -1;
	}
	ghs_log(s, FLOW_INFO, "Loaded %zu commits in '%s/%s' since '%s': ('%s', '%s']", json_array_size(w.commits), s->org,
		s->name, since ? since : "null", w.from, w.to);
	return ghs_done(out,
			json_pack("{s:o, s:o, s:b}", "commits", w.commits, "filterMatches", w.matches,
				  "searchDepthReached", w.counted >= w.depth),
			e);
}

static int a_app_token(struct gh_step *s, json_t **out, struct err *e)
{
	return ghs_done(out, json_pack("{s:s}", "token", s->g.token), e);
}

typedef int (*gh_action_fn)(struct gh_step *s, json_t **out, struct err *e);

static const struct {
	const char *name;
	gh_action_fn fn; /* NULL: Concord has it, Accord not yet */
	const char *fail; /* the prefix of an API failure's message, NULL: the action sets it */
	bool changes;	  /* changes something on GitHub: skipped in dry-run mode */
} actions[] = {
    {"createPr", ghs_create_pr, "Failed to create pull request", true},
    {"commentPR", ghs_comment_pr, "Cannot comment on the pull request", true},
    {"mergePR", ghs_merge_pr, "Cannot merge the pull request", true},
    {"closePR", ghs_close_pr, "Cannot close the pull request", true},
    {"getPRCommitList", ghs_pr_commits, "Cannot get PR commits", false},
    {"merge", a_merge, NULL, true},
    {"createIssue", ghs_create_issue, "Cannot create issue", true},
    {"createBranch", a_create_branch, "Error while creating new branch", true},
    {"createTag", a_create_tag, NULL, true},
    {"createHook", a_create_hook, "Cannot create hook", true},
    {"deleteTag", a_delete_tag, NULL, true},
    {"deleteBranch", a_delete_branch, NULL, true},
    {"getCommit", a_get_commit, NULL, false},
    {"addStatus", a_add_status, NULL, true},
    {"getStatuses", a_get_statuses, NULL, false},
    {"forkRepo", a_fork, NULL, true},
    {"getBranchList", a_branch_list, NULL, false},
    {"getPR", ghs_get_pr, NULL, false},
    {"getPRList", ghs_pr_list, NULL, false},
    {"getPRFiles", ghs_pr_files, NULL, false},
    {"getTagList", a_tag_list, NULL, false},
    {"getLatestSHA", a_latest_sha, NULL, false},
    {"createRepo", a_create_repo, NULL, true},
    {"deleteRepo", a_delete_repo, NULL, true},
    {"getContent", a_get_content, NULL, false},
    {"createAppToken", a_app_token, NULL, false},
    {"getShortSha", a_short_sha, NULL, false},
    {"listCommits", a_list_commits, "Failed to list commits", false},
    {"getTag", a_get_tag, "Failed to get tag", false},
    {"getRef", a_get_ref, NULL, false},
    {"createRepositoryDispatch", a_dispatch, NULL, true},
    {"listWebhooks", a_list_hooks, NULL, false},
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

/* The step's job: the action runs on a thread of its own (task.h), its log lines and
 * outcome are handed over in finish. */
struct gh_job {
	struct task_job base; /* must be first */
	struct gh_step s;
	size_t action;
	json_t *out;
	int rc;
	struct err e;
};

static void job_warn(void *ctx, const char *msg)
{
	ghs_log(ctx, FLOW_WARN, "%s", msg);
}

static void job_run(struct task_job *base)
{
	struct gh_job *j = (struct gh_job *)base;
	j->rc = actions[j->action].fn(&j->s, &j->out, &j->e);
	if (j->rc < 0 && actions[j->action].fail && j->s.api_failed)
		err_prefix(&j->e, "%s", actions[j->action].fail);
}

static int job_finish(struct task_job *base, struct task_ctx *c, json_t **out, struct err *e)
{
	struct gh_job *j = (struct gh_job *)base;
	json_t *line;
	size_t i;

	json_array_foreach(j->s.logs, i, line)
		vm_log(c->vm, (enum flow_level)json_integer_value(json_array_get(line, 0)), "%s",
		       json_string_value(json_array_get(line, 1)));
	if (j->rc < 0) {
		*e = j->e;
		return -1;
	}
	*out = j->out;
	j->out = NULL;
	return 0;
}

static void job_free(struct task_job *base)
{
	struct gh_job *j = (struct gh_job *)base;
	gh_cleanup(&j->s.g);
	json_decref(j->s.in);
	json_decref(j->s.logs);
	json_decref(j->out);
	free(j);
}

/* Concord's dry-run answers: nothing asked of GitHub, a fake id where one is expected. */
static int dry_run(struct task_ctx *c, size_t i, struct gh_step *s, json_t **out, struct err *e)
{
	vm_log(c->vm, FLOW_INFO, "Dry-run mode enabled: Skipping '%s' in %s/%s", actions[i].name, s->org, s->name);
	*out = strcmp(actions[i].name, "createPr") == 0	   ? json_pack("{s:b, s:i}", "ok", 1, "prId", 0)
	       : strcmp(actions[i].name, "commentPR") == 0 ? json_pack("{s:b, s:i}", "ok", 1, "id", 0)
							   : json_pack("{s:b}", "ok", 1);
	return *out ? 0 : ghs_oom(e);
}

/* Secrets the action sends that are not credentials (a hook's secret), masked from now on. */
static void mask_params(struct task_ctx *c, json_t *in)
{
	const char *v[] = {json_string_value(json_object_get(in, "secret")),
			   json_string_value(json_object_get(json_object_get(in, "config"), "secret"))};
	for (size_t k = 0; k < 2; k++)
		if (v[k] && *v[k] && c->h->ops->sensitive)
			c->h->ops->sensitive(c->h->ctx, v[k], true);
}

/* The action's step: its own copy of the input, its repository path. */
static int step_init(struct gh_step *s, json_t *in, struct err *e)
{
	char *o, *r;
	if (!(s->in = json_deep_copy(in)) || !(s->logs = json_array()))
		return ghs_oom(e);
	if (ghs_need(s, "org", &s->org, e) < 0 || ghs_need(s, "repo", &s->name, e) < 0)
		return -1;
	o = gh_escape(s->org);
	r = gh_escape(s->name);
	if (o && r)
		str_fmt_cut(s->repo, sizeof s->repo, "/repos/%s/%s", o, r);
	free(o);
	free(r);
	return s->repo[0] ? 0 : ghs_oom(e);
}

static int github_execute(struct task_ctx *c, json_t *in, json_t **out, struct err *e)
{
	struct gh_job *j = calloc(1, sizeof *j);
	const char *action = json_string_value(json_object_get(in, "action"));
	json_t *url = json_object_get(in, "apiUrl");
	char *token = NULL;
	size_t i = 0;
	int rc = -1;

	if (!j)
		return ghs_oom(e);
	j->base = (struct task_job){job_run, job_finish, job_free};
	if (!action) {
		err_set(e, ERR_INVALID, "Mandatory parameter 'action' is required");
		goto fail;
	}
	for (i = 0; i < N_ACTIONS && strcasecmp(action, actions[i].name) != 0; i++)
		;
	if (i == N_ACTIONS || !actions[i].fn) {
		if (i == N_ACTIONS)
			unknown(action, e);
		else
			err_set(e, ERR_INVALID, "github: the action '%s' is not supported by Accord yet", actions[i].name);
		goto fail;
	}
	if (step_init(&j->s, in, e) < 0)
		goto fail;
	if (c->h->dry_run && actions[i].changes) {
		rc = dry_run(c, i, &j->s, out, e);
		goto fail;
	}
	if (!url || json_is_null(url)) /* the server's --github-api-url */
		url = json_object_get(task_defaults_get(c->h, "githubParams"), "apiUrl");
	if (url && !json_is_null(url) && !json_is_string(url)) {
		err_set(e, ERR_INVALID, "github: 'apiUrl' must be a URL");
		goto fail;
	}
	mask_params(c, in);
	if (gh_auth_token(c, in, json_string_value(url), j->s.org, j->s.name, &token, e) < 0)
		goto fail;
	rc = gh_init(&j->s.g, c, json_string_value(url), token, false, e);
	sodium_memzero(token, strlen(token));
	free(token);
	if (rc < 0)
		goto fail;
	vm_log(c->vm, FLOW_INFO, "Starting '%s' action on API URL: %s", actions[i].name, j->s.g.base);
	j->s.g.warn = job_warn;
	j->s.g.warn_ctx = &j->s;
	j->action = i;
	c->job = &j->base;
	return 0;
fail:
	job_free(&j->base);
	return rc;
}

static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_github = {"github", github_execute, no_methods, false, false};
