/* The `github` task's actions on pull requests and issues (github_step.h), with Concord's
 * parameters, requests and result fields. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flow/tasks/github_step.h"
#include "flow/vm_internal.h"

int ghs_create_pr(struct gh_step *s, json_t **out, struct err *e)
{
	const char *title, *body, *dst, *src;
	json_t *r = NULL, *labels = json_object_get(s->in, "prLabels");
	char p[1400];

	if (ghs_need(s, "prTitle", &title, e) < 0 || ghs_need(s, "prBody", &body, e) < 0 ||
	    ghs_need(s, "prDestinationBranch", &dst, e) < 0 || ghs_need(s, "prSourceBranch", &src, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Creating PR in %s/%s from %s to %s", s->org, s->name, src, dst);
	if (ghs_call(s, "POST", ghs_at(s, p, sizeof p, "/pulls"),
		 json_pack("{s:s, s:s, s:s, s:s}", "title", title, "body", body, "head", src, "base", dst), &r, e) < 0)
		return -1;
	json_t *id = json_incref(json_object_get(r, "number"));
	json_decref(r);
	if (!json_is_integer(id)) {
		json_decref(id);
		return err_set(e, ERR_INVALID, "GitHub's answer has no pull request number");
	}
	ghs_log(s, FLOW_INFO, "PR Created, id: '%lld'", (long long)json_integer_value(id));
	if (json_array_size(labels) &&
	    ghs_fire(s, "POST", ghs_at(s, p, sizeof p, "/issues/%lld/labels", (long long)json_integer_value(id)),
		 json_pack("{s:O}", "labels", labels), e) < 0) {
		json_decref(id);
		return -1;
	}
	return ghs_done(out, json_pack("{s:o}", "prId", id), e);
}

int ghs_comment_pr(struct gh_step *s, json_t **out, struct err *e)
{
	const char *text;
	long long id;
	json_t *r = NULL;
	char p[1400];

	if (ghs_need(s, "prComment", &text, e) < 0 || ghs_need_int(s, "prId", &id, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Commenting PR #%lld in %s/%s", id, s->org, s->name);
	if (ghs_fire(s, "GET", ghs_at(s, p, sizeof p, "/pulls/%lld", id), NULL, e) < 0 ||
	    ghs_call(s, "POST", ghs_at(s, p, sizeof p, "/issues/%lld/comments", id), json_pack("{s:s}", "body", text), &r, e) <
		0)
		return -1;
	json_t *cid = json_incref(json_object_get(r, "id"));
	json_decref(r);
	return ghs_done(out, json_pack("{s:o}", "id", cid ? cid : json_null()), e);
}

int ghs_pr_commits(struct gh_step *s, json_t **out, struct err *e)
{
	long long id;
	json_t *list;
	char p[1400];

	if (ghs_need_int(s, "prId", &id, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Getting PR %lld commits for %s/%s repo", id, s->org, s->name);
	if (ghs_list(s, ghs_at(s, p, sizeof p, "/pulls/%lld/commits", id), &list, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Commits count: %zu", json_array_size(list));
	return ghs_done(out, json_pack("{s:o}", "commits", list), e);
}

int ghs_merge_pr(struct gh_step *s, json_t **out, struct err *e)
{
	const char *msg = ghs_opt(s, "commitMessage"), *method = ghs_opt(s, "mergeMethod");
	long long id;
	char p[1400];
	json_t *body;

	if (ghs_need_int(s, "prId", &id, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Merging PR #%lld in %s/%s", id, s->org, s->name);
	body = json_pack("{s:s}", "commit_message", msg ? msg : "GitHub PR Merge");
	if (body && method)
		json_object_set_new(body, "merge_method", json_string(method));
	if (ghs_call(s, "PUT", ghs_at(s, p, sizeof p, "/pulls/%lld/merge", id), body, &body, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Merged PR# %lld, sha: %s", id,
	       json_string_value(json_object_get(body, "sha")) ? json_string_value(json_object_get(body, "sha")) : "");
	json_decref(body);
	return ghs_done(out, json_object(), e);
}

int ghs_close_pr(struct gh_step *s, json_t **out, struct err *e)
{
	long long id;
	char p[1400];

	if (ghs_need_int(s, "prId", &id, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Closing PR #%lld in %s/%s", id, s->org, s->name);
	if (ghs_fire(s, "PATCH", ghs_at(s, p, sizeof p, "/pulls/%lld", id), json_pack("{s:s}", "state", "closed"), e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Closed PR# %lld", id);
	return ghs_done(out, json_object(), e);
}

int ghs_create_issue(struct gh_step *s, json_t **out, struct err *e)
{
	const char *title, *body = ghs_opt(s, "body"), *who = ghs_opt(s, "assignee");
	json_t *labels = json_object_get(s->in, "labels"), *req, *r = NULL;
	char p[1400];

	if (ghs_need(s, "title", &title, e) < 0)
		return -1;
	req = json_pack("{s:s, s:s*, s:s*, s:o}", "title", title, "body", body, "assignee", who, "labels",
			json_is_array(labels) ? json_incref(labels) : json_array());
	ghs_log(s, FLOW_INFO, "Creating issue in %s/%s", s->org, s->name);
	if (ghs_call(s, "POST", ghs_at(s, p, sizeof p, "/issues"), req, &r, e) < 0)
		return -1;
	return ghs_done(out, json_pack("{s:o}", "issue", r), e);
}

int ghs_get_pr(struct gh_step *s, json_t **out, struct err *e)
{
	long long n;
	json_t *r = NULL;
	char p[1400];

	if (ghs_need_int(s, "prNumber", &n, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Getting PR %lld info from '%s/%s'...", n, s->org, s->name);
	if (ghs_call(s, "GET", ghs_at(s, p, sizeof p, "/pulls/%lld", n), NULL, &r, e) < 0) {
		err_prefix(e, "Error occurred while getting PR");
		return -1;
	}
	return ghs_done(out, json_pack("{s:o}", "pr", r), e);
}

int ghs_pr_list(struct gh_step *s, json_t **out, struct err *e)
{
	const char *state = ghs_opt(s, "state") ? ghs_opt(s, "state") : "open";
	json_t *list;
	char p[1400];

	if (strcasecmp(state, "all") != 0 && strcasecmp(state, "open") != 0 && strcasecmp(state, "closed") != 0)
		return err_set(e, ERR_INVALID, "Invalid PR state '%s'. Allowed values are only 'all', 'open', 'closed'.",
			       state);
	ghs_log(s, FLOW_INFO, "Getting '%s' PRs from '%s/%s'...", state, s->org, s->name);
	if (ghs_list(s, ghs_at(s, p, sizeof p, "/pulls?state=%s", state), &list, e) < 0) {
		err_prefix(e, "Error occurred while getting PR list");
		return -1;
	}
	return ghs_done(out, json_pack("{s:o}", "prList", list), e);
}

int ghs_pr_files(struct gh_step *s, json_t **out, struct err *e)
{
	static const char *const kinds[] = {"added", "removed", "modified", "renamed", "copied", "changed"};
	static const char *const keys[] = {"prFilesAdded",  "prFilesRemoved", "prFilesModified",
					   "prFilesRenamed", "prFilesCopied",  "prFilesChanged"};
	json_t *list, *res, *any, *f;
	long long n;
	char p[1400];
	size_t i;

	if (ghs_need_int(s, "prNumber", &n, e) < 0)
		return -1;
	ghs_log(s, FLOW_INFO, "Getting PR %lld files from '%s/%s'", n, s->org, s->name);
	if (ghs_list(s, ghs_at(s, p, sizeof p, "/pulls/%lld/files", n), &list, e) < 0) {
		err_prefix(e, "Error occurred while getting PR list");
		return -1;
	}
	json_array_foreach(list, i, f) json_object_del(f, "patch");
	if (!(res = json_pack("{s:o}", "prFiles", list)) || !(any = json_array()))
		return (json_decref(res), ghs_oom(e));
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
	return ghs_done(out, res, e);
}
