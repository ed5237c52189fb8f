/* Branches, tags and commits of a bare clone → struct repo_commit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "git/git_api.h"
#include "repo/internal.h"

/* At most cap - 1 bytes of s, not cutting a UTF-8 sequence. */
static void copy_utf8(char *out, size_t cap, const char *s)
{
	size_t n = strlen(s);

	if (n >= cap) {
		n = cap - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = 0;
}

static void fill(git_commit *cm, struct repo_commit *out)
{
	const git_signature *a = git.commit_author(cm);
	const char *msg = git.commit_message(cm);

	git.oid_tostr(out->id, sizeof out->id, git.object_id((const git_object *)cm));
	str_fmt_cut(out->author, sizeof out->author, "%s <%s>", a && a->name ? a->name : "",
		    a && a->email ? a->email : "");
	copy_utf8(out->message, sizeof out->message, msg ? msg : "");
}

static int peel(git_reference *ref, struct repo_commit *out)
{
	git_object *obj = NULL;

	if (git.reference_peel(&obj, ref, GIT_OBJECT_COMMIT) < 0)
		return -1;
	fill((git_commit *)obj, out);
	git.object_free(obj);
	return 0;
}

/* 1 (e set) when the branch or tag is not in the clone. */
int repo_resolve_ref(git_repository *g, const struct repository *r, const char *name, struct repo_commit *out,
		     struct err *e)
{
	static const char *const prefixes[] = {"refs/heads/", "refs/tags/"};
	git_reference *ref = NULL;
	char full[1024];
	int rc;

	if (!name) {
		rc = git.repository_head(&ref, g);
		if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
			err_set(e, ERR_INVALID, "The repository %s has no default branch (is it empty?)", r->name);
			return 1;
		}
		if (rc < 0 || peel(ref, out) < 0)
			rc = err_set(e, ERR_INVALID, "Cannot read the default branch of repository %s: %s", r->name,
				     git_api_error());
		git.reference_free(ref);
		return rc;
	}
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		if (snprintf(full, sizeof full, "%s%s", prefixes[i], name) >= (int)sizeof full)
			break;
		if (git.reference_lookup(&ref, g, full) < 0)
			continue;
		rc = peel(ref, out);
		git.reference_free(ref);
		if (rc == 0)
			return 0;
		return err_set(e, ERR_INVALID, "Branch or tag %s of repository %s is not a commit: %s", name, r->name,
			       git_api_error());
	}
	err_set(e, ERR_INVALID, "Branch or tag not found in repository %s: %s", r->name, name);
	return 1;
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
			return false;
	return true;
}

/* 1 (e set) when the commit is not in the clone. */
int repo_resolve_commit(git_repository *g, const struct repository *r, const char *id, struct repo_commit *out,
			struct err *e)
{
	size_t n = strlen(id);
	git_object *obj = NULL;
	git_oid oid;
	int rc;

	if (n < 7 || n > 40 || !is_hex(id, n))
		return err_set(e, ERR_INVALID, "Invalid commit id (7 to 40 hexadecimal digits): %.64s", id);
	if (git.oid_fromstrn(&oid, id, n) < 0)
		return err_set(e, ERR_INVALID, "Invalid commit id: %s", id);
	rc = git.object_lookup_prefix(&obj, g, &oid, n, GIT_OBJECT_COMMIT);
	if (rc == GIT_EAMBIGUOUS)
		return err_set(e, ERR_INVALID, "Commit id is ambiguous in repository %s: %s", r->name, id);
	if (rc < 0) {
		err_set(e, ERR_INVALID, "Commit not found in repository %s: %s", r->name, id);
		return 1;
	}
	fill((git_commit *)obj, out);
	git.object_free(obj);
	return 0;
}
