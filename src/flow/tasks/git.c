/* The `git` task (docs/flows.md "git"): Concord's actions init, clone, createBranch, merge,
 * commit and pull on a repository in the working directory, by running Debian's git
 * (git_cli.h).  The result is Concord's: ok, status (SUCCESS, FAILURE, NO_CHANGES), error,
 * changeList and headSHA; a failure fails the step unless ignoreErrors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/git_cli.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

#define ACTIONS "[INIT, CLONE, CREATEBRANCH, MERGE, COMMIT, PULL]"

struct git_step {
	struct task_ctx *c;
	json_t *in;
	struct git_cli g;
	char *dir;	     /* the repository, relative to the working directory */
	json_t *changes;     /* changeList */
	char head[64];	     /* headSHA, "" when unknown */
	const char *status;  /* SUCCESS, FAILURE, NO_CHANGES */
	char error[ERR_MSG_MAX];
	bool failed;	     /* the action failed: error says why */
};

static const char *str_in(struct git_step *s, const char *key)
{
	json_t *v = json_object_get(s->in, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static bool bool_in(struct git_step *s, const char *key, bool dflt)
{
	json_t *v = json_object_get(s->in, key);
	if (json_is_boolean(v))
		return json_is_true(v);
	if (json_is_string(v))
		return strcasecmp(json_string_value(v), "true") == 0;
	return dflt;
}

/* A mandatory string parameter (Concord's MapUtils.assertString message). */
static int need(struct git_step *s, const char *key, const char **out, struct err *e)
{
	if (!(*out = str_in(s, key)))
		return err_set(e, ERR_INVALID, "Mandatory parameter '%s' is required", key);
	return 0;
}

/* A branch, tag or commit name: refused when git could read it as an option. */
static int ref_ok(const char *key, const char *v, struct err *e)
{
	if (!*v || *v == '-' || strpbrk(v, " \t\n\r"))
		return err_set(e, ERR_INVALID, "git: bad '%s' value '%s'", key, v);
	return 0;
}

static int url_in(struct git_step *s, const char **url, struct err *e)
{
	if (need(s, "url", url, e) < 0)
		return -1;
	if (!git_cli_url_ok(*url))
		return err_set(e, ERR_INVALID,
			       "git: url '%s' is not an http(s), ssh or git URL (local repositories are not reachable "
			       "from a flow)",
			       *url);
	return 0;
}

/* workingDir, or the last part of the URL without ".git" (Concord's getDest); it must stay
 * inside the working directory. */
static int dest(struct git_step *s, struct err *e)
{
	const char *d = str_in(s, "workingDir"), *url;
	if (d) {
		s->dir = strdup(d);
	} else {
		const char *slash, *dot;
		size_t len;
		if (need(s, "url", &url, e) < 0)
			return -1;
		slash = strrchr(url, '/');
		slash = slash ? slash + 1 : url;
		dot = strstr(slash, ".git");
		len = dot && dot > slash ? (size_t)(dot - slash) : strlen(slash);
		s->dir = strndup(slash, len);
	}
	if (!s->dir)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (!path_is_safe_relative(s->dir) || strcmp(s->dir, GIT_RUN_DIR) == 0 || *s->dir == '-')
		return err_set(e, ERR_INVALID, "git: workingDir '%s' is not a folder inside the working directory",
			       s->dir);
	return 0;
}

/* Runs git with the arguments given (NULL-terminated); 1 when it exited 0, 0 when it
 * failed (s->error says why, prefixed with what), < 0 when it could not run. */
static int run(struct git_step *s, const char *what, bool quiet, struct err *e, const char *const *args)
{
	int code = 0;
	if (git_cli_run(&s->g, quiet, &code, e, args) < 0)
		return -1;
	if (code == 0)
		return 1;
	const char *sep = what[strlen(what) - 1] == '\n' ? "" : ": ";
	if (*git_cli_reason(&s->g))
		str_fmt_cut(s->error, sizeof s->error, "%s%s%s", what, sep, git_cli_reason(&s->g));
	else
		str_fmt_cut(s->error, sizeof s->error, "%s%sgit exited with code %d", what, sep, code);
	return 0;
}

#define RUN(s, what, quiet, e, ...) run(s, what, quiet, e, (const char *const[]){__VA_ARGS__, NULL})

static void head_sha(struct git_step *s)
{
	struct err e;
	s->head[0] = '\0';
	if (RUN(s, "rev-parse", true, &e, "-C", s->dir, "rev-parse", "--verify", "-q", "HEAD") == 1)
		str_fmt_cut(s->head, sizeof s->head, "%.*s", (int)strcspn(s->g.out.data, "\n"), s->g.out.data);
}

static int fail(struct git_step *s, bool remove_dir)
{
	s->failed = true;
	s->status = "FAILURE";
	if (remove_dir) {
		char *p = path_join_safe(s->c->h->workdir, s->dir, &(struct err){0});
		if (p && path_remove_tree(p, &(struct err){0}) < 0)
			vm_log(s->c->vm, FLOW_WARN, "cleanup -> error: cannot remove %s", s->dir);
		free(p);
		s->head[0] = '\0';
	}
	vm_log(s->c->vm, FLOW_ERROR, "%s", s->error);
	return 0;
}

static int ensure_dir(struct git_step *s, struct err *e)
{
	return path_mkdirs_beneath(s->c->h->workdir, s->dir, 0700, e);
}

/* git clone of url into s->dir, then a checkout of ref (a branch, tag or commit; NULL: the
 * remote's default branch).  1 cloned, 0 failed (s->error set, the folder removed). */
static int clone_into(struct git_step *s, const char *url, const char *ref, struct err *e)
{
	const char *what = "Error while cloning the repository";
	int rc;

	vm_log(s->c->vm, FLOW_INFO, "Cloning %s to %s...", url, s->dir);
	if (bool_in(s, "shallow", false))
		rc = ref ? RUN(s, what, false, e, "clone", "--quiet", "--depth", "1", "--branch", ref, "--", url, s->dir)
			 : RUN(s, what, false, e, "clone", "--quiet", "--depth", "1", "--", url, s->dir);
	else
		rc = RUN(s, what, false, e, "clone", "--quiet", "--no-checkout", "--", url, s->dir);
	if (rc == 1 && !bool_in(s, "shallow", false))
		rc = ref ? RUN(s, what, false, e, "-C", s->dir, "checkout", "--quiet", ref)
			 : RUN(s, what, false, e, "-C", s->dir, "checkout", "--quiet");
	if (rc == 0)
		fail(s, true);
	return rc;
}

static int act_init(struct git_step *s, struct err *e)
{
	const char *url, *branch, *what = "Exception occurred while initializing the git repo\n";

	if (url_in(s, &url, e) < 0 || need(s, "initBranch", &branch, e) < 0 || ref_ok("initBranch", branch, e) < 0 ||
	    dest(s, e) < 0)
		return -1;
	vm_log(s->c->vm, FLOW_INFO, "Initializing repository in '%s' with url '%s' and branch '%s'...", s->dir, url,
	       branch);
	int rc = RUN(s, what, false, e, "init", "--quiet", "--initial-branch", branch, "--", s->dir);
	if (rc == 1)
		rc = RUN(s, what, false, e, "-C", s->dir, "remote", "add", "origin", url);
	return rc < 0 ? -1 : rc == 0 ? fail(s, false) : 0;
}

static int act_clone(struct git_step *s, struct err *e)
{
	const char *url;
	int rc;

	if (url_in(s, &url, e) < 0 || dest(s, e) < 0)
		return -1;
	if ((rc = path_exists_beneath(s->c->h->workdir, s->dir, e)) != 0)
		return rc < 0 ? -1 : err_set(e, ERR_CONFLICT, "Destination directory '%s' already exists", s->dir);
	const char *ref = str_in(s, "baseBranch");
	if (ref && ref_ok("baseBranch", ref, e) < 0)
		return -1;
	if ((rc = clone_into(s, url, ref, e)) == 1)
		head_sha(s);
	return rc < 0 ? -1 : 0;
}

static int act_create_branch(struct git_step *s, struct err *e)
{
	const char *url, *name, *base = str_in(s, "baseRef");
	int rc;

	if (!base)
		base = str_in(s, "baseBranch");
	if (url_in(s, &url, e) < 0 || need(s, "newBranch", &name, e) < 0 || ref_ok("newBranch", name, e) < 0 ||
	    (base && ref_ok("baseBranch", base, e) < 0) || dest(s, e) < 0 || ensure_dir(s, e) < 0)
		return -1;
	if ((rc = clone_into(s, url, base, e)) != 1)
		return rc < 0 ? -1 : 0;
	const char *what = "Error while creating the branch";
	if ((rc = RUN(s, what, false, e, "-C", s->dir, "checkout", "--quiet", "-b", name)) == 1) {
		head_sha(s);
		vm_log(s->c->vm, FLOW_INFO, "Created new branch '%s' from '%s'", name, s->head);
		if (bool_in(s, "pushBranch", false)) {
			if ((rc = RUN(s, what, false, e, "-C", s->dir, "push", "--quiet", "origin", name)) == 1)
				vm_log(s->c->vm, FLOW_INFO, "Pushed '%s' to the remote's origin", name);
		} else {
			vm_log(s->c->vm, FLOW_WARN,
			       "Skipping push operation as 'pushBranch' parameter is set to 'false' by default. If "
			       "you want to push your new branch to origin, set it to 'true' in your git createBranch "
			       "action");
		}
	}
	return rc < 0 ? -1 : rc == 0 ? fail(s, true) : 0;
}

static int act_merge(struct git_step *s, struct err *e)
{
	const char *url, *src, *dst, *what = "Error while merging a repository";
	char before[64], ref[600];
	int rc;

	if (url_in(s, &url, e) < 0 || need(s, "sourceBranch", &src, e) < 0 || need(s, "destinationBranch", &dst, e) < 0 ||
	    ref_ok("sourceBranch", src, e) < 0 || ref_ok("destinationBranch", dst, e) < 0 || dest(s, e) < 0 ||
	    ensure_dir(s, e) < 0)
		return -1;
	if ((rc = clone_into(s, url, dst, e)) != 1)
		return rc < 0 ? -1 : 0;
	head_sha(s);
	str_fmt_cut(before, sizeof before, "%s", s->head);
	str_fmt_cut(ref, sizeof ref, "refs/remotes/origin/%s", src);
	if ((rc = RUN(s, what, false, e, "-C", s->dir, "merge", "--no-edit", "--no-ff", "--quiet", ref)) != 1) {
		if (rc < 0)
			return -1;
		RUN(s, what, true, e, "-C", s->dir, "merge", "--abort");
		head_sha(s);
		str_fmt_cut(s->error, sizeof s->error,
			    "Automatic merge failed and aborted because of conflicts. Fix the conflicts and commit the "
			    "result before merging");
		return fail(s, false);
	}
	head_sha(s);
	if (strcmp(before, s->head) == 0) {
		vm_log(s->c->vm, FLOW_INFO, "Branch already up-to-date. No merging required");
		s->status = "NO_CHANGES";
		return 0;
	}
	vm_log(s->c->vm, FLOW_INFO, "Merged '%s' with '%s'", src, dst);
	if ((rc = RUN(s, what, false, e, "-C", s->dir, "push", "--quiet", "origin", dst)) != 1)
		return rc < 0 ? -1 : fail(s, true);
	vm_log(s->c->vm, FLOW_INFO, "Pushed '%s' to the remote's origin", dst);
	return 0;
}

/* The paths `git status` lists as changed (staged, after `git add -A`). */
static int change_list(struct git_step *s, struct err *e)
{
	int rc = RUN(s, "Exception occurred while accessing the git repo or while pushing the changes to origin\n", true,
		     e, "-C", s->dir, "status", "--porcelain", "--no-renames", "--untracked-files=all");
	if (rc != 1)
		return rc;
	for (char *p = s->g.out.data, *end = p + s->g.out.len; p && p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (len > 3)
			json_array_append_new(s->changes, json_stringn(p + 3, len - 3));
		p = nl ? nl + 1 : NULL;
	}
	return 1;
}

/* git push --porcelain of branch: Concord's outcomes by the status flag of its ref. */
static int push_branch(struct git_step *s, const char *branch, struct err *e)
{
	char want[600];
	const char *line = NULL;
	int code = 0;

	if (git_cli_run(&s->g, true, &code, e, (const char *const[]){"-C", s->dir, "push", "--porcelain", "origin",
								      branch, NULL}) < 0)
		return -1;
	str_fmt_cut(want, sizeof want, "\trefs/heads/%s:", branch);
	for (char *p = s->g.out.data; p && (p = strstr(p, want)); p++)
		if (p > s->g.out.data && (p == s->g.out.data + 1 || p[-2] == '\n')) {
			line = p - 1;
			break;
		}
	if (!line && code != 0) {
		str_fmt_cut(s->error, sizeof s->error,
			    "Exception occurred while accessing the git repo or while pushing the changes to origin\n%s",
			    git_cli_reason(&s->g));
		return 0;
	}
	if (!line) {
		str_fmt_cut(s->error, sizeof s->error,
			    "Got invalid input for 'baseBranch' param: '%s'.\n hint: 1) Check if the input params passed "
			    "for 'commit' action are valid.\n hint: 2) 'baseBranch' parameter should be plain branch "
			    "name.\n hint: 3) Make sure you are pushing the changes to the same 'baseBranch', that's "
			    "checked out as part of your 'clone' operation",
			    branch);
		return 0;
	}
	if (*line == '=') {
		str_fmt_cut(s->error, sizeof s->error,
			    "Everything up-to-date. Nothing to push to origin. Status Code:UP_TO_DATE");
		return 0;
	}
	if (*line == '!') {
		str_fmt_cut(s->error, sizeof s->error,
			    "%s Git Push action failed with status code:%s", "failed to push some refs to origin'",
			    strstr(line, "non-fast-forward") || strstr(line, "fetch first") ? "REJECTED_NONFASTFORWARD"
											 : "REJECTED_OTHER_REASON");
		return 0;
	}
	vm_log(s->c->vm, FLOW_INFO, "Successfully pushed the changes to origin");
	return 1;
}

static int act_commit(struct git_step *s, struct err *e)
{
	const char *branch, *msg, *user, *email;
	bool empty = bool_in(s, "allowEmptyCommit", false);
	int rc;

	if (need(s, "baseBranch", &branch, e) < 0 || need(s, "commitMessage", &msg, e) < 0 ||
	    need(s, "commitUsername", &user, e) < 0 || need(s, "commitEmail", &email, e) < 0 ||
	    ref_ok("baseBranch", branch, e) < 0 || dest(s, e) < 0 || ensure_dir(s, e) < 0 ||
	    git_cli_identity(&s->g, user, email, e) < 0)
		return -1;
	vm_log(s->c->vm, FLOW_INFO, "Scanning folder for changes.");
	rc = RUN(s, "Exception occurred while accessing the git repo or while pushing the changes to origin\n", false, e,
		 "-C", s->dir, "add", "--all", ".");
	if (rc == 1)
		rc = change_list(s, e);
	if (rc != 1)
		return rc < 0 ? -1 : fail(s, false);
	head_sha(s);
	if (json_array_size(s->changes) == 0 && !empty) {
		vm_log(s->c->vm, FLOW_WARN,
		       "No changes detected on your local git repo.Skipping git commit and git push actions.");
		s->status = "NO_CHANGES";
		return 0;
	}
	rc = empty ? RUN(s, "Problem committing changes.\n", false, e, "-C", s->dir, "commit", "--quiet",
			 "--no-gpg-sign", "--allow-empty", "-m", msg)
		   : RUN(s, "Problem committing changes.\n", false, e, "-C", s->dir, "commit", "--quiet", "--no-gpg-sign",
			 "-m", msg);
	if (rc != 1)
		return rc < 0 ? -1 : fail(s, false);
	head_sha(s);
	vm_log(s->c->vm, FLOW_INFO, "Committer userid and email are '%s', '%s'", user, email);
	if (!bool_in(s, "pushChanges", false)) {
		vm_log(s->c->vm, FLOW_WARN,
		       "Skipping push operation as 'pushChanges' parameter is set to 'false' by default. If you want to "
		       "push the changes to origin, set it to 'true' in your git commit action");
		return 0;
	}
	if ((rc = push_branch(s, branch, e)) != 1)
		return rc < 0 ? -1 : fail(s, false);
	return 0;
}

static int act_pull(struct git_step *s, struct err *e)
{
	const char *branch;
	int rc;

	if (need(s, "remoteBranch", &branch, e) < 0 || ref_ok("remoteBranch", branch, e) < 0 || dest(s, e) < 0 ||
	    ensure_dir(s, e) < 0)
		return -1;
	vm_log(s->c->vm, FLOW_INFO, "Pulling changes from remote 'origin/%s'...", branch);
	rc = RUN(s, "Error occurred during git pull action", false, e, "-C", s->dir, "pull", "--no-rebase", "--no-edit",
		 "origin", branch);
	if (rc != 1)
		return rc < 0 ? -1 : fail(s, true);
	head_sha(s);
	vm_log(s->c->vm, FLOW_INFO, "Pulled changes from remote 'origin/%s'.", branch);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(struct git_step *s, struct err *e);
} actions[] = {{"init", act_init},	 {"clone", act_clone}, {"createBranch", act_create_branch},
	       {"merge", act_merge},	 {"commit", act_commit}, {"pull", act_pull}};

static json_t *result(struct git_step *s)
{
	bool ok = !s->failed;
	return json_pack("{s:b, s:s, s:s, s:O, s:s?}", "ok", ok, "status", s->status, "error", ok ? "" : s->error,
			 "changeList", s->changes, "headSHA", s->head[0] ? s->head : NULL);
}

static int git_execute(struct task_ctx *c, json_t *in, json_t **out, struct err *e)
{
	struct git_step s = {.c = c, .in = in, .status = "SUCCESS"};
	const char *action;
	int rc = -1;
	size_t i;

	if (!c->h->ops->tool_run || !c->h->workdir)
		return err_set(e, ERR_UNAVAILABLE, "git: external programs cannot run here");
	if (access("/usr/bin/git", X_OK) != 0)
		return err_set(e, ERR_UNAVAILABLE,
			       "git: /usr/bin/git is not installed on this node: install the Debian package 'git' "
			       "(apt-get install git)");
	if (need(&s, "action", &action, e) < 0)
		return -1;
	for (i = 0; i < sizeof actions / sizeof actions[0]; i++)
		if (strcasecmp(action, actions[i].name) == 0)
			break;
	if (i == sizeof actions / sizeof actions[0])
		return err_set(e, ERR_INVALID, "Unknown action: '%s'. Available actions: " ACTIONS, action);
	if (!(s.changes = json_array()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	vm_log(c->vm, FLOW_INFO, "Starting '%s' action...", (const char *[]){"INIT", "CLONE", "CREATEBRANCH", "MERGE",
									    "COMMIT", "PULL"}[i]);
	if (git_cli_init(&s.g, c, in, e) == 0 && actions[i].fn(&s, e) == 0) {
		if (s.failed && !bool_in(&s, "ignoreErrors", false))
			rc = err_set(e, ERR_INVALID, "%s", s.error);
		else if (!(*out = result(&s)))
			rc = err_set(e, ERR_INTERNAL, "out of memory");
		else
			rc = 0;
	}
	git_cli_cleanup(&s.g);
	json_decref(s.changes);
	free(s.dir);
	return rc;
}

static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_git = {"git", git_execute, no_methods, false, false};
