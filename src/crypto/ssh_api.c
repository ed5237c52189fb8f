#include "crypto/ssh_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

#ifndef SSH_SONAME
#define SSH_SONAME "libssh.so.4"
#endif

struct ssh_api ssh;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[ERR_MSG_MAX];

#define SYM(field, name)                                                                                               \
	do {                                                                                                           \
		*(void **)&api.field = dlsym(h, name);                                                                 \
		if (!api.field) {                                                                                      \
			str_fmt_cut(load_error, sizeof load_error, "%s has no symbol %s", SSH_SONAME, name);           \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

/* The handle stays open for the life of the process: libssh and its crypto library keep
 * global state. */
static void load(void)
{
	struct ssh_api api;
	__typeof__(&ssh_init) init;
	void *h = dlopen(SSH_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(load_error, sizeof load_error, "cannot load %s (package libssh-4): %s", SSH_SONAME,
			    dlerror());
		return;
	}
	SYM(pki_generate, "ssh_pki_generate");
	SYM(pki_export_privkey_base64, "ssh_pki_export_privkey_base64");
	SYM(pki_export_pubkey_base64, "ssh_pki_export_pubkey_base64");
	SYM(key_type, "ssh_key_type");
	SYM(key_type_to_char, "ssh_key_type_to_char");
	SYM(key_free, "ssh_key_free");
	SYM(string_free_char, "ssh_string_free_char");
	*(void **)&init = dlsym(h, "ssh_init");
	if (!init) {
		str_fmt_cut(load_error, sizeof load_error, "%s has no symbol ssh_init", SSH_SONAME);
		return;
	}
	if (init() != SSH_OK) {
		str_fmt_cut(load_error, sizeof load_error, "%s could not be initialised (ssh_init)", SSH_SONAME);
		return;
	}
	ssh = api;
}

int ssh_api_load(struct err *e)
{
	pthread_once(&once, load);
	if (!ssh.pki_generate)
		return err_set(e, ERR_INTERNAL, "%s", load_error);
	return 0;
}
