#include "crypto/keypair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

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

int keypair_generate(enum keypair_type t, struct keypair *kp, struct err *e)
{
	ssh_key key = NULL;
	char *pem = NULL;
	int rc = 0;

	memset(kp, 0, sizeof *kp);
	if (ssh_api_load(e) < 0)
		return -1;
	if (ssh.pki_generate(t == KEYPAIR_ED25519 ? SSH_KEYTYPE_ED25519 : SSH_KEYTYPE_RSA,
			     t == KEYPAIR_ED25519 ? 0 : KEYPAIR_RSA_BITS, &key) != SSH_OK) {
		rc = err_set(e, ERR_INTERNAL, "key pair generation failed (%s)", keypair_type_name(t));
		goto out;
	}
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
