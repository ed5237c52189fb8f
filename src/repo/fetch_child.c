/* `accord git-fetch [--ca-file FILE] [--known-hosts FILE] DIR URL`: the fetch child.
 *
 * Started by repo/fetch.c with a clean environment (HOME an empty private folder) in its
 * own process group; killed when it outlives the fetch timeout.  Reads the credentials
 * frame (repo/internal.h) from stdin, fetches every branch and tag of URL into the bare
 * repository DIR (created when missing) with prune, points DIR's HEAD at the remote's
 * default branch, and writes one JSON line to stdout: {"ok":true,"head":"refs/heads/…"}
 * or {"error":"…"}.  The credentials are never written anywhere; URLs in messages lose
 * their userinfo. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>
#include <sodium.h>

#include "base/path.h"
#include "base/str.h"
#include "git/git_api.h"
#include "repo/internal.h"

#define SYSTEM_CERTS "/etc/ssl/certs"
#define HEADS "+refs/heads/*:refs/heads/*"

struct child {
	const char *dir, *url, *ca_file, *known_hosts;
	struct repo_cred cred;
	unsigned cred_calls;
	bool auth_failed;
	char cert_error[300]; /* why the ssh host key was refused */
	char msg[ERR_MSG_MAX];
};

/* Replaces every occurrence of the secret in msg (defence in depth: libgit2 does not echo
 * credentials, but a server's message might). */
static void scrub(char *msg, const char *secret, size_t n)
{
	char *p;

	if (!secret || n < 3)
		return;
	while ((p = memmem(msg, strlen(msg), secret, n)))
		memset(p, '*', n);
}

static int finish(struct child *ch, int rc, const char *head)
{
	char clean[ERR_MSG_MAX];
	json_t *v;
	char *line;

	if (rc) {
		scrub(ch->msg, ch->cred.a, ch->cred.type == REPO_CRED_USERPASS ? 0 : ch->cred.a_len);
		scrub(ch->msg, ch->cred.b, ch->cred.b_len);
		repo_strip_url_credentials(ch->msg, clean, sizeof clean);
		v = json_pack("{s:s}", "error", clean);
	} else {
		v = json_pack("{s:b, s:s?}", "ok", 1, "head", head);
	}
	line = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	if (line) {
		size_t n = strlen(line);
		line[n] = '\n';
		if (path_write_all(1, line, n + 1) < 0)
			rc = -1;
		free(line);
	}
	repo_cred_clear(&ch->cred);
	if (git.libgit2_shutdown)
		git.libgit2_shutdown();
	return rc ? 1 : 0;
}

static int fail(struct child *ch, const char *what)
{
	char url[2100];

	repo_strip_url_credentials(ch->url, url, sizeof url);
	/* the message has room for a URL of 200 bytes and the reason; longer ones are cut */
	if (ch->auth_failed)
		str_fmt_cut(ch->msg, sizeof ch->msg, "git fetch of %.200s: authentication failed", url);
	else if (ch->cert_error[0])
		str_fmt_cut(ch->msg, sizeof ch->msg, "git fetch of %.200s: %.250s", url, ch->cert_error);
	else
		str_fmt_cut(ch->msg, sizeof ch->msg, "git fetch of %.200s: %.40s: %.200s", url, what, git_api_error());
	return -1;
}

static int credentials(git_credential **out, const char *url, const char *user_from_url, unsigned int allowed,
		       void *payload)
{
	struct child *ch = payload;

	(void)url;
	if (++ch->cred_calls > 2) {
		ch->auth_failed = true;
		return GIT_EAUTH;
	}
	switch (ch->cred.type) {
	case REPO_CRED_USERPASS:
		if (!(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT))
			break;
		return git.credential_userpass_plaintext_new(out, ch->cred.a, ch->cred.b);
	case REPO_CRED_KEYPAIR:
		if (!(allowed & (GIT_CREDENTIAL_SSH_MEMORY | GIT_CREDENTIAL_SSH_KEY)))
			break;
		return git.credential_ssh_key_memory_new(out, user_from_url && *user_from_url ? user_from_url : "git",
							 ch->cred.a_len ? ch->cred.a : NULL, ch->cred.b, NULL);
	case REPO_CRED_NONE:
		break;
	}
	/* nothing (else) to offer: the server wants credentials the repository has not */
	ch->auth_failed = true;
	return GIT_EAUTH;
}

/* https: libgit2's own verification decides (GIT_PASSTHROUGH); ssh: any host key unless
 * --known-hosts was given, then the key must be listed in that file (repo/known_hosts.c). */
static int certificate_check(git_cert *cert, int valid, const char *host, void *payload)
{
	struct child *ch = payload;
	const git_cert_hostkey *hk = (const git_cert_hostkey *)cert;
	int found;

	(void)valid;
	if (cert->cert_type != GIT_CERT_HOSTKEY_LIBSSH2)
		return GIT_PASSTHROUGH;
	if (!ch->known_hosts)
		return 0;
	if (!(hk->type & GIT_CERT_SSH_RAW)) {
		str_fmt_cut(ch->cert_error, sizeof ch->cert_error, "the host key of %s is not available to check",
			    host);
		return GIT_ECERTIFICATE;
	}
	found = repo_known_host(ch->known_hosts, host, repo_url_port(ch->url), hk->hostkey, hk->hostkey_len);
	if (found == 1)
		return 0;
	if (found < 0)
		str_fmt_cut(ch->cert_error, sizeof ch->cert_error, "cannot read the known hosts file %s",
			    ch->known_hosts);
	else
		str_fmt_cut(ch->cert_error, sizeof ch->cert_error,
			    "the host key of %s is not in the known hosts file %s", host, ch->known_hosts);
	return GIT_ECERTIFICATE;
}

static int open_or_init(struct child *ch, git_repository **g)
{
	if (git.repository_open_bare(g, ch->dir) == 0)
		return 0;
	if (git.repository_init(g, ch->dir, 1) == 0)
		return 0;
	return fail(ch, "cannot create the clone");
}

static int origin(struct child *ch, git_repository *g, git_remote **remote)
{
	if (git.remote_lookup(remote, g, "origin") == 0) {
		git.remote_free(*remote);
		*remote = NULL;
		if (git.remote_set_url(g, "origin", ch->url) < 0 || git.remote_lookup(remote, g, "origin") < 0)
			return fail(ch, "cannot set the remote");
		return 0;
	}
	/* the configured refspec is the one of the fetch (else libgit2 also writes refs/remotes/) */
	if (git.remote_create_with_fetchspec(remote, g, "origin", ch->url, HEADS) < 0)
		return fail(ch, "invalid URL");
	return 0;
}

static int fetch(struct child *ch, git_repository *g, git_remote *remote, char *head, size_t cap)
{
	static char heads[] = HEADS, tags[] = "+refs/tags/*:refs/tags/*";
	char *specs[] = {heads, tags};
	git_strarray refspecs = {specs, 2};
	git_fetch_options fo;
	git_buf def = {0};
	git_reference *ref = NULL;
	int rc = 0;

	git.fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.callbacks.credentials = credentials;
	fo.callbacks.certificate_check = certificate_check;
	fo.callbacks.payload = ch;
	fo.prune = GIT_FETCH_PRUNE;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	if (git.remote_connect(remote, GIT_DIRECTION_FETCH, &fo.callbacks, &fo.proxy_opts, &fo.custom_headers) < 0)
		return fail(ch, "cannot connect");
	head[0] = 0;
	if (git.remote_default_branch(&def, remote) == 0 && def.ptr && str_fmt(head, cap, "%s", def.ptr)) {
		git.buf_dispose(&def);
		return fail(ch, "the default branch's name is too long");
	}
	git.buf_dispose(&def);
	if (git.remote_download(remote, &refspecs, &fo) < 0)
		rc = fail(ch, "cannot download");
	else if (git.remote_update_tips(remote, &fo.callbacks, 0, GIT_REMOTE_DOWNLOAD_TAGS_NONE, NULL) < 0)
		rc = fail(ch, "cannot update the branches");
	else if (git.remote_prune(remote, &fo.callbacks) < 0)
		rc = fail(ch, "cannot prune");
	git.remote_disconnect(remote);
	if (rc == 0 && head[0] && strncmp(head, "refs/heads/", 11) == 0 &&
	    git.reference_symbolic_create(&ref, g, "HEAD", head, 1, NULL) < 0)
		rc = fail(ch, "cannot record the default branch");
	git.reference_free(ref);
	return rc;
}

static int usage(void)
{
	fprintf(stderr, "usage: accord git-fetch [--ca-file FILE] [--known-hosts FILE] DIR URL < credentials\n"
			"internal: the fetch child of `accord serve` (docs/operations.md \"Repositories\")\n");
	return 2;
}

int repo_fetch_child_main(int argc, char **argv)
{
	struct child ch = {0};
	struct err e = {0};
	git_repository *g = NULL;
	git_remote *remote = NULL;
	char head[1024] = "";
	int i, rc;

	for (i = 1; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		if (strcmp(argv[i], "--ca-file") == 0)
			ch.ca_file = argv[i + 1];
		else if (strcmp(argv[i], "--known-hosts") == 0)
			ch.known_hosts = argv[i + 1];
		else
			return usage();
	}
	if (argc - i != 2)
		return usage();
	ch.dir = argv[i];
	ch.url = argv[i + 1];
	if (sodium_init() < 0) {
		str_fmt_cut(ch.msg, sizeof ch.msg, "cannot initialise libsodium");
		return finish(&ch, -1, NULL);
	}
	if (repo_cred_read(0, &ch.cred, &e) || git_api_load(&e)) {
		str_fmt_cut(ch.msg, sizeof ch.msg, "%s", e.msg);
		return finish(&ch, -1, NULL);
	}
	/* the file is added to the system's certificates, not put in their place */
	if (ch.ca_file && git.libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ch.ca_file,
					   access(SYSTEM_CERTS, R_OK) == 0 ? SYSTEM_CERTS : NULL) < 0) {
		str_fmt_cut(ch.msg, sizeof ch.msg, "cannot load the CA file %s: %s", ch.ca_file, git_api_error());
		return finish(&ch, -1, NULL);
	}
	rc = open_or_init(&ch, &g);
	if (rc == 0)
		rc = origin(&ch, g, &remote);
	if (rc == 0)
		rc = fetch(&ch, g, remote, head, sizeof head);
	git.remote_free(remote);
	git.repository_free(g);
	return finish(&ch, rc, head[0] ? head : NULL);
}
