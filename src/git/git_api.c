#include "git/git_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

#ifndef GIT2_SONAME
#define GIT2_SONAME "libgit2.so.1.5"
#endif

struct git_api git;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[ERR_MSG_MAX];

#define SYM(field, name)                                                                                               \
	do {                                                                                                           \
		*(void **)&api.field = dlsym(h, name);                                                                 \
		if (!api.field) {                                                                                      \
			str_fmt_cut(load_error, sizeof load_error, "%s has no symbol %s", GIT2_SONAME, name);          \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

/* No configuration file outside the repository is read: not the system's, not the
 * user's (the fetch child runs with an empty HOME as well). */
static int empty_search_paths(const struct git_api *api)
{
	static const int levels[] = {GIT_CONFIG_LEVEL_SYSTEM, GIT_CONFIG_LEVEL_XDG, GIT_CONFIG_LEVEL_GLOBAL,
				     GIT_CONFIG_LEVEL_PROGRAMDATA};

	for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
		if (api->libgit2_opts(GIT_OPT_SET_SEARCH_PATH, levels[i], "") < 0)
			return -1;
	return 0;
}

/* The handle stays open for the life of the process: the table points into it. */
static void load(void)
{
	struct git_api api;
	void *h = dlopen(GIT2_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(load_error, sizeof load_error, "cannot load %s (package libgit2-1.5): %s", GIT2_SONAME,
			    dlerror());
		return;
	}
	SYM(libgit2_init, "git_libgit2_init");
	SYM(libgit2_shutdown, "git_libgit2_shutdown");
	SYM(libgit2_opts, "git_libgit2_opts");
	SYM(error_last, "git_error_last");
	SYM(repository_init, "git_repository_init");
	SYM(repository_open_bare, "git_repository_open_bare");
	SYM(repository_free, "git_repository_free");
	SYM(repository_head, "git_repository_head");
	SYM(remote_lookup, "git_remote_lookup");
	SYM(remote_create_with_fetchspec, "git_remote_create_with_fetchspec");
	SYM(remote_set_url, "git_remote_set_url");
	SYM(remote_free, "git_remote_free");
	SYM(remote_connect, "git_remote_connect");
	SYM(remote_default_branch, "git_remote_default_branch");
	SYM(remote_download, "git_remote_download");
	SYM(remote_update_tips, "git_remote_update_tips");
	SYM(remote_prune, "git_remote_prune");
	SYM(remote_disconnect, "git_remote_disconnect");
	SYM(fetch_options_init, "git_fetch_options_init");
	SYM(remote_init_callbacks, "git_remote_init_callbacks");
	SYM(credential_userpass_plaintext_new, "git_credential_userpass_plaintext_new");
	SYM(credential_ssh_key_memory_new, "git_credential_ssh_key_memory_new");
	SYM(buf_dispose, "git_buf_dispose");
	SYM(reference_lookup, "git_reference_lookup");
	SYM(reference_symbolic_create, "git_reference_symbolic_create");
	SYM(reference_peel, "git_reference_peel");
	SYM(reference_free, "git_reference_free");
	SYM(oid_fromstrn, "git_oid_fromstrn");
	SYM(oid_tostr, "git_oid_tostr");
	SYM(object_lookup_prefix, "git_object_lookup_prefix");
	SYM(object_id, "git_object_id");
	SYM(object_free, "git_object_free");
	SYM(commit_lookup, "git_commit_lookup");
	SYM(commit_author, "git_commit_author");
	SYM(commit_message, "git_commit_message");
	SYM(commit_tree, "git_commit_tree");
	SYM(commit_free, "git_commit_free");
	SYM(tree_lookup, "git_tree_lookup");
	SYM(tree_free, "git_tree_free");
	SYM(tree_entrycount, "git_tree_entrycount");
	SYM(tree_entry_byindex, "git_tree_entry_byindex");
	SYM(tree_entry_bypath, "git_tree_entry_bypath");
	SYM(tree_entry_free, "git_tree_entry_free");
	SYM(tree_entry_name, "git_tree_entry_name");
	SYM(tree_entry_id, "git_tree_entry_id");
	SYM(tree_entry_type, "git_tree_entry_type");
	SYM(tree_entry_filemode, "git_tree_entry_filemode");
	SYM(blob_lookup, "git_blob_lookup");
	SYM(blob_free, "git_blob_free");
	SYM(blob_rawsize, "git_blob_rawsize");
	SYM(blob_rawcontent, "git_blob_rawcontent");
	if (api.libgit2_init() < 0 || empty_search_paths(&api) < 0) {
		const git_error *ge = api.error_last();
		str_fmt_cut(load_error, sizeof load_error, "cannot initialise %s: %s", GIT2_SONAME,
			    ge && ge->message ? ge->message : "unknown error");
		return;
	}
	git = api;
}

int git_api_load(struct err *e)
{
	pthread_once(&once, load);
	if (!git.libgit2_init)
		return err_set(e, ERR_INTERNAL, "%s", load_error);
	return 0;
}

const char *git_api_error(void)
{
	const git_error *ge = git.error_last ? git.error_last() : NULL;
	return ge && ge->message ? ge->message : "unknown error";
}
