#include "crypto/ssh_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"

#ifndef SSH_SONAME
#define SSH_SONAME "libssh.so.4"
#endif
#ifndef CRYPTO_SONAME
#define CRYPTO_SONAME "libcrypto.so.3"
#endif

struct ssh_api ssh;
struct crypto_api libcrypto;

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

#define CRYPTO_SYM(field, name)                                                                                        \
	do {                                                                                                           \
		*(void **)&api.field = dlsym(h, name);                                                                 \
		if (!api.field)                                                                                        \
			return;                                                                                        \
	} while (0)

/* RTLD_NOLOAD: only the libcrypto that libssh loaded, never a second one beside it. */
static void load_crypto(void)
{
	struct crypto_api api;
	void *h = dlopen(CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);

	if (!h)
		return;
	CRYPTO_SYM(ctx_new_from_name, "EVP_PKEY_CTX_new_from_name");
	CRYPTO_SYM(keygen_init, "EVP_PKEY_keygen_init");
	CRYPTO_SYM(set_rsa_keygen_bits, "EVP_PKEY_CTX_set_rsa_keygen_bits");
	CRYPTO_SYM(set_app_data, "EVP_PKEY_CTX_set_app_data");
	CRYPTO_SYM(get_app_data, "EVP_PKEY_CTX_get_app_data");
	CRYPTO_SYM(set_cb, "EVP_PKEY_CTX_set_cb");
	CRYPTO_SYM(generate, "EVP_PKEY_generate");
	CRYPTO_SYM(ctx_free, "EVP_PKEY_CTX_free");
	CRYPTO_SYM(pkey_free, "EVP_PKEY_free");
	CRYPTO_SYM(bio_s_secmem, "BIO_s_secmem");
	CRYPTO_SYM(bio_new, "BIO_new");
	CRYPTO_SYM(bio_write, "BIO_write");
	CRYPTO_SYM(bio_ctrl, "BIO_ctrl");
	CRYPTO_SYM(bio_free, "BIO_free");
	CRYPTO_SYM(pem_write_bio_privatekey, "PEM_write_bio_PrivateKey");
	libcrypto = api;
}

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
	SYM(pki_import_privkey_base64, "ssh_pki_import_privkey_base64");
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
	load_crypto();
}

int ssh_api_load(struct err *e)
{
	pthread_once(&once, load);
	if (!ssh.pki_generate)
		return err_set(e, ERR_INTERNAL, "%s", load_error);
	return 0;
}
