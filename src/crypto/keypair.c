#include "crypto/keypair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/limits.h"
#include "base/str.h"
#include "crypto/ssh_api.h"

int keypair_init(struct err *e)
{
	ssh_key key = NULL;
	char *pem = NULL;
	int rc = 0;

	if (ssh_api_load(e) < 0)
		return -1;
	if (ssh.pki_generate(SSH_KEYTYPE_RSA, 1024, &key) != SSH_OK ||
	    ssh.pki_export_privkey_base64(key, NULL, NULL, NULL, &pem) != SSH_OK)
		rc = err_set(e, ERR_INTERNAL, "libssh cannot generate RSA keys");
	if (pem) {
		sodium_memzero(pem, strlen(pem));
		ssh.string_free_char(pem);
	}
	ssh.key_free(key);
	return rc;
}

int keypair_type_parse(const char *s, enum keypair_type *out, struct err *e)
{
	if (cstr_ieq(s, "rsa")) {
		*out = KEYPAIR_RSA;
		return 0;
	}
	if (cstr_ieq(s, "ed25519")) {
		*out = KEYPAIR_ED25519;
		return 0;
	}
	return err_set(e, ERR_INVALID, "Unsupported keyType: '%.64s' (expected rsa or ed25519)", s);
}

const char *keypair_type_name(enum keypair_type t)
{
	return t == KEYPAIR_ED25519 ? "ed25519" : "rsa";
}

static char *public_line(ssh_key key, size_t *len)
{
	char *b64 = NULL, *line = NULL;
	const char *type = ssh.key_type_to_char(ssh.key_type(key));
	int n;

	if (!type || ssh.pki_export_pubkey_base64(key, &b64) != SSH_OK)
		return NULL;
	n = snprintf(NULL, 0, "%s %s %s\n", type, b64, KEYPAIR_COMMENT);
	if (n > 0)
		line = malloc((size_t)n + 1);
	if (line && snprintf(line, (size_t)n + 1, "%s %s %s\n", type, b64, KEYPAIR_COMMENT) != n) {
		free(line);
		line = NULL;
	}
	if (line)
		*len = (size_t)n;
	ssh.string_free_char(b64);
	return line;
}

/* --secret-key-bits (limits.secret_key_bits; 0, as in unit tests that set no limits: the
 * default) */
static unsigned rsa_bits(void)
{
	return limits.secret_key_bits ? limits.secret_key_bits : SECRET_KEY_BITS_DEFAULT;
}

/* Stops libcrypto's RSA generation (it calls this for every prime candidate and test
 * round) once the caller's flag is set. */
static int keep_going(EVP_PKEY_CTX *ctx)
{
	const atomic_bool *cancel = libcrypto.get_app_data(ctx);
	return !atomic_load(cancel);
}

/* RSA through libcrypto, then handed to libssh as the PKCS#8 PEM its OpenSSL backend
 * exports too, so the pair is exported as libssh's own would be. */
static int rsa_generate(const atomic_bool *cancel, ssh_key *key, struct err *e)
{
	EVP_PKEY_CTX *ctx = libcrypto.ctx_new_from_name(NULL, "RSA", NULL);
	EVP_PKEY *pk = NULL;
	BIO *bio = NULL;
	char *pem = NULL;
	int rc = 0;

	if (!ctx || libcrypto.keygen_init(ctx) <= 0 || libcrypto.set_rsa_keygen_bits(ctx, (int)rsa_bits()) <= 0) {
		rc = err_set(e, ERR_INTERNAL, "key pair generation failed (rsa)");
		goto out;
	}
	libcrypto.set_app_data(ctx, (void *)cancel);
	libcrypto.set_cb(ctx, keep_going);
	if (libcrypto.generate(ctx, &pk) <= 0) {
		rc = atomic_load(cancel) ? err_set(e, ERR_UNAVAILABLE, "key pair generation cancelled")
					 : err_set(e, ERR_INTERNAL, "key pair generation failed (rsa)");
		goto out;
	}
	/* A secure-memory BIO wipes its buffer when freed; the NUL ends the PEM for libssh. */
	bio = libcrypto.bio_new(libcrypto.bio_s_secmem());
	if (!bio || libcrypto.pem_write_bio_privatekey(bio, pk, NULL, NULL, 0, NULL, NULL) != 1 ||
	    libcrypto.bio_write(bio, "", 1) != 1 || libcrypto.bio_ctrl(bio, BIO_CTRL_INFO, 0, &pem) <= 0 ||
	    ssh.pki_import_privkey_base64(pem, NULL, NULL, NULL, key) != SSH_OK)
		rc = err_set(e, ERR_INTERNAL, "private key export failed (rsa)");
out:
	if (bio)
		libcrypto.bio_free(bio);
	libcrypto.pkey_free(pk);
	libcrypto.ctx_free(ctx);
	return rc;
}

static int generate(enum keypair_type t, const atomic_bool *cancel, ssh_key *key, struct err *e)
{
	if (t == KEYPAIR_RSA && cancel && libcrypto.generate)
		return rsa_generate(cancel, key, e);
	if (ssh.pki_generate(t == KEYPAIR_ED25519 ? SSH_KEYTYPE_ED25519 : SSH_KEYTYPE_RSA,
			     t == KEYPAIR_ED25519 ? 0 : (int)rsa_bits(), key) != SSH_OK)
		return err_set(e, ERR_INTERNAL, "key pair generation failed (%s)", keypair_type_name(t));
	return 0;
}

int keypair_generate_cancellable(enum keypair_type t, const atomic_bool *cancel, struct keypair *kp, struct err *e)
{
	ssh_key key = NULL;
	char *pem = NULL;
	int rc = 0;

	memset(kp, 0, sizeof *kp);
	if (ssh_api_load(e) < 0)
		return -1;
	if ((rc = generate(t, cancel, &key, e)) < 0)
		goto out;
	if (ssh.pki_export_privkey_base64(key, NULL, NULL, NULL, &pem) != SSH_OK || !pem) {
		rc = err_set(e, ERR_INTERNAL, "private key export failed (%s)", keypair_type_name(t));
		goto out;
	}
	kp->private_len = strlen(pem);
	kp->private_key = malloc(kp->private_len + 1);
	kp->public_key = public_line(key, &kp->public_len);
	if (!kp->private_key || !kp->public_key) {
		rc = err_set(e, ERR_INTERNAL, "public key export failed (%s)", keypair_type_name(t));
		goto out;
	}
	memcpy(kp->private_key, pem, kp->private_len + 1);
out:
	if (pem) {
		sodium_memzero(pem, strlen(pem));
		ssh.string_free_char(pem);
	}
	ssh.key_free(key);
	if (rc < 0)
		keypair_cleanup(kp);
	return rc;
}

int keypair_generate(enum keypair_type t, struct keypair *kp, struct err *e)
{
	return keypair_generate_cancellable(t, NULL, kp, e);
}

void keypair_cleanup(struct keypair *kp)
{
	if (!kp)
		return;
	if (kp->private_key) {
		sodium_memzero(kp->private_key, kp->private_len);
		free(kp->private_key);
	}
	free(kp->public_key);
	memset(kp, 0, sizeof *kp);
}
