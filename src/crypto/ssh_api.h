#ifndef ACCORD_CRYPTO_SSH_API_H
#define ACCORD_CRYPTO_SSH_API_H

#include <libssh/libssh.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "base/err.h"

/* libssh, loaded on demand.  Only key-pair generation (crypto/keypair.c) speaks to it, but
 * libssh brings libcrypto, krb5 and GSSAPI, whose relocations cost every `accord run` and
 * every process runner about as much as the rest of their start together.  So the binary
 * does not link it: ssh_api_load() opens it on first use (once, thread-safe), runs
 * ssh_init() once, and fills `ssh` with the functions keypair.c uses, which call through
 * `ssh.x(...)` instead of `ssh_x(...)`.  The header is included for the types only; each
 * field has the type of the prototype it stands for. */
struct ssh_api {
	__typeof__(&ssh_pki_generate) pki_generate;
	__typeof__(&ssh_pki_import_privkey_base64) pki_import_privkey_base64;
	__typeof__(&ssh_pki_export_privkey_base64) pki_export_privkey_base64;
	__typeof__(&ssh_pki_export_pubkey_base64) pki_export_pubkey_base64;
	__typeof__(&ssh_key_type) key_type;
	__typeof__(&ssh_key_type_to_char) key_type_to_char;
	__typeof__(&ssh_key_free) key_free;
	__typeof__(&ssh_string_free_char) string_free_char;
};

/* Filled by a successful ssh_api_load(); all NULL before (and after a failed load). */
extern struct ssh_api ssh;

/* libssh's crypto library when it is OpenSSL's libcrypto (CRYPTO_SONAME, loaded already as
 * libssh's dependency, so opening it costs nothing): RSA generation through it can be
 * stopped by its progress callback, libssh's ssh_pki_generate cannot (keypair.h). */
struct crypto_api {
	__typeof__(&EVP_PKEY_CTX_new_from_name) ctx_new_from_name;
	__typeof__(&EVP_PKEY_keygen_init) keygen_init;
	__typeof__(&EVP_PKEY_CTX_set_rsa_keygen_bits) set_rsa_keygen_bits;
	__typeof__(&EVP_PKEY_CTX_set_app_data) set_app_data;
	__typeof__(&EVP_PKEY_CTX_get_app_data) get_app_data;
	__typeof__(&EVP_PKEY_CTX_set_cb) set_cb;
	__typeof__(&EVP_PKEY_generate) generate;
	__typeof__(&EVP_PKEY_CTX_free) ctx_free;
	__typeof__(&EVP_PKEY_free) pkey_free;
	__typeof__(&BIO_s_secmem) bio_s_secmem;
	__typeof__(&BIO_new) bio_new;
	__typeof__(&BIO_write) bio_write;
	__typeof__(&BIO_ctrl) bio_ctrl;
	__typeof__(&BIO_free) bio_free;
	__typeof__(&PEM_write_bio_PrivateKey) pem_write_bio_privatekey;
};

/* Filled by ssh_api_load() when libssh loaded and libcrypto has every symbol; all NULL
 * otherwise (libssh built on another crypto library), and keypair.c uses libssh alone. */
extern struct crypto_api libcrypto;

/* Loads the library (SSH_SONAME, set by the Makefile from the build's libssh) and
 * initialises it.  Thread-safe; only the first call does the work, later calls return its
 * result.  ERR_INTERNAL "cannot load libssh.so.4 (package libssh-4): <dlerror>" when the
 * library is missing, naming the symbol when one is, or saying ssh_init() failed. */
int ssh_api_load(struct err *e) WUR;

#endif
