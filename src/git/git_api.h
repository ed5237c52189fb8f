#ifndef ACCORD_GIT_GIT_API_H
#define ACCORD_GIT_GIT_API_H

#include <git2.h>

#include "base/err.h"

/* libgit2, loaded on demand (like base/archive_api.h).  Only repositories use it (repo/):
 * the fetch child (`accord git-fetch`) and the server when it resolves and checks out
 * commits.  Linking it would add libssh2, mbedTLS and http-parser relocations to the
 * start-up of every `accord run` and every process runner, so the binary does not: git_api_load()
 * opens GIT2_SONAME (set by the Makefile from the build's libgit2) once, thread-safely,
 * calls git_libgit2_init and fills `git` with the functions repo/ uses, which call
 * through `git.x(...)` instead of `git_x(...)`.  The headers are included for the types
 * only; each field has the type of the prototype it stands for.
 *
 * After the load, libgit2 reads no configuration outside the repository: the system,
 * global and XDG search paths are empty (no /etc/gitconfig, no ~/.gitconfig). */
struct git_api {
	__typeof__(&git_libgit2_init) libgit2_init;
	__typeof__(&git_libgit2_shutdown) libgit2_shutdown;
	__typeof__(&git_libgit2_opts) libgit2_opts;
	__typeof__(&git_error_last) error_last;
	/* repositories */
	__typeof__(&git_repository_init) repository_init;
	__typeof__(&git_repository_open_bare) repository_open_bare;
	__typeof__(&git_repository_free) repository_free;
	__typeof__(&git_repository_head) repository_head;
	/* remotes and fetching */
	__typeof__(&git_remote_lookup) remote_lookup;
	__typeof__(&git_remote_create_with_fetchspec) remote_create_with_fetchspec;
	__typeof__(&git_remote_set_url) remote_set_url;
	__typeof__(&git_remote_free) remote_free;
	__typeof__(&git_remote_connect) remote_connect;
	__typeof__(&git_remote_default_branch) remote_default_branch;
	__typeof__(&git_remote_download) remote_download;
	__typeof__(&git_remote_update_tips) remote_update_tips;
	__typeof__(&git_remote_prune) remote_prune;
	__typeof__(&git_remote_disconnect) remote_disconnect;
	__typeof__(&git_fetch_options_init) fetch_options_init;
	__typeof__(&git_remote_init_callbacks) remote_init_callbacks;
	__typeof__(&git_credential_userpass_plaintext_new) credential_userpass_plaintext_new;
	__typeof__(&git_credential_ssh_key_memory_new) credential_ssh_key_memory_new;
	__typeof__(&git_buf_dispose) buf_dispose;
	/* references */
	__typeof__(&git_reference_lookup) reference_lookup;
	__typeof__(&git_reference_symbolic_create) reference_symbolic_create;
	__typeof__(&git_reference_peel) reference_peel;
	__typeof__(&git_reference_free) reference_free;
	/* objects */
	__typeof__(&git_oid_fromstrn) oid_fromstrn;
	__typeof__(&git_oid_tostr) oid_tostr;
	__typeof__(&git_object_lookup_prefix) object_lookup_prefix;
	__typeof__(&git_object_id) object_id;
	__typeof__(&git_object_free) object_free;
	__typeof__(&git_commit_lookup) commit_lookup;
	__typeof__(&git_commit_author) commit_author;
	__typeof__(&git_commit_message) commit_message;
	__typeof__(&git_commit_tree) commit_tree;
	__typeof__(&git_commit_free) commit_free;
	__typeof__(&git_tree_lookup) tree_lookup;
	__typeof__(&git_tree_free) tree_free;
	__typeof__(&git_tree_entrycount) tree_entrycount;
	__typeof__(&git_tree_entry_byindex) tree_entry_byindex;
	__typeof__(&git_tree_entry_bypath) tree_entry_bypath;
	__typeof__(&git_tree_entry_free) tree_entry_free;
	__typeof__(&git_tree_entry_name) tree_entry_name;
	__typeof__(&git_tree_entry_id) tree_entry_id;
	__typeof__(&git_tree_entry_type) tree_entry_type;
	__typeof__(&git_tree_entry_filemode) tree_entry_filemode;
	__typeof__(&git_blob_lookup) blob_lookup;
	__typeof__(&git_blob_free) blob_free;
	__typeof__(&git_blob_rawsize) blob_rawsize;
	__typeof__(&git_blob_rawcontent) blob_rawcontent;
};

/* Filled by a successful git_api_load(); all NULL before (and after a failed load). */
extern struct git_api git;

/* Loads and initialises the library.  Thread-safe; only the first call does the work,
 * later calls return its result.  ERR_INTERNAL "cannot load libgit2.so.1.5 (package
 * libgit2-1.5): <dlerror>" when the library is missing, or naming the symbol when one is. */
int git_api_load(struct err *e) WUR;

/* libgit2's last error message ("unknown error" when it has none). */
const char *git_api_error(void);

#endif
