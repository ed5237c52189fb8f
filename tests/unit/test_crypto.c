/* Unit tests for src/crypto: envelopes, master key handling, store passwords, key pairs
 * and the plaintext layouts of secret types. */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "base/b64.h"
#include "base/path.h"
#include "base/rand.h"
#include "base/str.h"
#include "crypto/keypair.h"
#include "crypto/keypool.h"
#include "crypto/masterkey.h"
#include "crypto/payload.h"
#include "crypto/seal.h"
#include "crypto/storepass.h"

static struct masterkey mk;
static const struct seal_binding bind_a = {"0fac1b18-d179-11e7-b3e7-d7df4543ed4f", "mySecret"};
static const unsigned char plain[] = "top secret \x00\x01\xff bytes";

static int setup(void **state)
{
	unsigned char raw[MASTERKEY_BYTES];
	(void)state;
	rand_init();
	rand_bytes(raw, sizeof raw);
	masterkey_from_bytes(&mk, raw);
	seal_set_kdf(1, 8 * 1024); /* cheap Argon2id for tests; envelopes record their cost */
	return 0;
}

static void seal_master(const struct seal_binding *b, unsigned char **env, size_t *len)
{
	struct err e;
	assert_int_equal(seal_encrypt(&mk, NULL, b, plain, sizeof plain, env, len, &e), 0);
	assert_int_equal(*len, sizeof plain + SEAL_OVERHEAD);
}

static void test_seal_round_trip_master(void **state)
{
	unsigned char *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	seal_master(&bind_a, &env, &len);
	assert_int_equal(seal_mode(env, len), SEAL_MODE_MASTER);
	assert_true(seal_uses_key(env, len, &mk));
	assert_null(memmem(env, len, "top secret", 10)); /* not in clear */
	assert_int_equal(seal_decrypt(&mk, NULL, &bind_a, env, len, &pt, &pt_len, &e), 0);
	assert_int_equal(pt_len, sizeof plain);
	assert_memory_equal(pt, plain, sizeof plain);
	assert_int_equal(pt[pt_len], 0);
	seal_plain_free(pt, pt_len);
	free(env);
}

static void test_seal_empty_plaintext(void **state)
{
	unsigned char *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	assert_int_equal(seal_encrypt(&mk, NULL, &bind_a, (const unsigned char *)"", 0, &env, &len, &e), 0);
	assert_int_equal(seal_decrypt(&mk, NULL, &bind_a, env, len, &pt, &pt_len, &e), 0);
	assert_int_equal(pt_len, 0);
	seal_plain_free(pt, pt_len);
	free(env);
}

static void test_seal_fresh_randomness(void **state)
{
	unsigned char *a, *b;
	size_t la, lb;
	(void)state;

	seal_master(&bind_a, &a, &la);
	seal_master(&bind_a, &b, &lb);
	assert_int_equal(la, lb);
	assert_memory_not_equal(a + SEAL_HEADER_BYTES, b + SEAL_HEADER_BYTES, la - SEAL_HEADER_BYTES);
	free(a);
	free(b);
}

static void test_seal_detects_every_flipped_byte(void **state)
{
	unsigned char *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	seal_master(&bind_a, &env, &len);
	for (size_t i = 0; i < len; i++) {
		env[i] ^= 0x01;
		int rc = seal_decrypt(&mk, NULL, &bind_a, env, len, &pt, &pt_len, &e);
		assert_true(rc < 0);
		assert_null(pt);
		/* a flipped key id is a configuration error (500), anything else a clean 400 */
		if (i >= 2 && i < 10)
			assert_int_equal(e.code, ERR_INTERNAL);
		else
			assert_int_equal(e.code, ERR_INVALID);
		env[i] ^= 0x01;
	}
	assert_int_equal(seal_decrypt(&mk, NULL, &bind_a, env, len, &pt, &pt_len, &e), 0);
	seal_plain_free(pt, pt_len);
	free(env);
}

static void test_seal_truncated_and_garbage(void **state)
{
	unsigned char *env, *pt, junk[200];
	size_t len, pt_len;
	struct err e;
	(void)state;

	seal_master(&bind_a, &env, &len);
	for (size_t n = 0; n < len; n++) {
		assert_true(seal_decrypt(&mk, NULL, &bind_a, env, n, &pt, &pt_len, &e) < 0);
		assert_int_equal(e.code, ERR_INVALID);
	}
	memset(junk, 0xAB, sizeof junk);
	assert_true(seal_decrypt(&mk, NULL, &bind_a, junk, sizeof junk, &pt, &pt_len, &e) < 0);
	assert_int_equal(seal_mode(junk, sizeof junk), 0);
	free(env);
}

static void test_seal_binding_mismatch(void **state)
{
	static const struct seal_binding other_org = {"11111111-d179-11e7-b3e7-d7df4543ed4f", "mySecret"};
	static const struct seal_binding other_name = {"0fac1b18-d179-11e7-b3e7-d7df4543ed4f", "mySecret2"};
	/* length prefixes keep ("ab","c") and ("a","bc") apart */
	static const struct seal_binding shift1 = {"ab", "c"}, shift2 = {"a", "bc"};
	unsigned char *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	seal_master(&bind_a, &env, &len);
	assert_true(seal_decrypt(&mk, NULL, &other_org, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_true(seal_decrypt(&mk, NULL, &other_name, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	free(env);
	seal_master(&shift1, &env, &len);
	assert_true(seal_decrypt(&mk, NULL, &shift2, env, len, &pt, &pt_len, &e) < 0);
	free(env);
}

static void test_seal_password(void **state)
{
	unsigned char *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	assert_int_equal(seal_encrypt(NULL, "Secret1!", &bind_a, plain, sizeof plain, &env, &len, &e), 0);
	assert_int_equal(seal_mode(env, len), SEAL_MODE_PASSWORD);
	assert_false(seal_uses_key(env, len, &mk));
	assert_int_equal(seal_decrypt(NULL, "Secret1!", &bind_a, env, len, &pt, &pt_len, &e), 0);
	assert_memory_equal(pt, plain, sizeof plain);
	seal_plain_free(pt, pt_len);

	assert_true(seal_decrypt(&mk, "Secret1?", &bind_a, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_null(strstr(e.msg, "Secret1"));
	assert_true(seal_decrypt(&mk, NULL, &bind_a, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_true(seal_decrypt(&mk, "", &bind_a, env, len, &pt, &pt_len, &e) < 0);
	/* the master key does not open a password envelope */
	env[26] = 0, env[27] = 0, env[28] = 0, env[29] = 0; /* opslimit 0: refused before any work */
	assert_true(seal_decrypt(&mk, "Secret1!", &bind_a, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	free(env);
}

static void test_seal_password_tampered_kdf_cost(void **state)
{
	unsigned char *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	assert_int_equal(seal_encrypt(NULL, "Secret1!", &bind_a, plain, sizeof plain, &env, &len, &e), 0);
	env[30] = 0x7f; /* memlimit far past the bound */
	assert_true(seal_decrypt(NULL, "Secret1!", &bind_a, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	env[30] = 0;
	env[33] ^= 1; /* still in bounds, but the header is authenticated by the wrap */
	assert_true(seal_decrypt(NULL, "Secret1!", &bind_a, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	free(env);
}

static void test_seal_default_kdf_cost(void **state)
{
	unsigned char *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	seal_set_kdf(3, 64 * 1024);
	assert_int_equal(seal_encrypt(NULL, "Secret1!", &bind_a, plain, sizeof plain, &env, &len, &e), 0);
	seal_set_kdf(1, 8 * 1024);
	assert_int_equal(env[29], 3);
	assert_int_equal(seal_decrypt(NULL, "Secret1!", &bind_a, env, len, &pt, &pt_len, &e), 0);
	seal_plain_free(pt, pt_len);
	free(env);
}

static void test_seal_wrong_master_key_and_rewrap(void **state)
{
	struct masterkey other;
	unsigned char raw[MASTERKEY_BYTES], *env, *pt;
	size_t len, pt_len;
	struct err e;
	(void)state;

	rand_bytes(raw, sizeof raw);
	masterkey_from_bytes(&other, raw);
	seal_master(&bind_a, &env, &len);
	assert_true(seal_decrypt(&other, NULL, &bind_a, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(e.code, ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "different master key"));

	assert_true(seal_rewrap(&other, &mk, env, len, &e) < 0); /* not other's envelope */
	assert_int_equal(seal_rewrap(&mk, &other, env, len, &e), 0);
	assert_true(seal_uses_key(env, len, &other));
	assert_true(seal_decrypt(&mk, NULL, &bind_a, env, len, &pt, &pt_len, &e) < 0);
	assert_int_equal(seal_decrypt(&other, NULL, &bind_a, env, len, &pt, &pt_len, &e), 0);
	assert_memory_equal(pt, plain, sizeof plain);
	seal_plain_free(pt, pt_len);
	free(env);
	masterkey_wipe(&other);
}

static char tmpdir[64];

static void make_tmpdir(void)
{
	assert_int_equal(str_fmt(tmpdir, sizeof tmpdir, "/tmp/accord-test-mk-XXXXXX"), 0);
	assert_non_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	struct err e;
	assert_int_equal(path_remove_tree(tmpdir, &e), 0);
}

static void test_masterkey_file_created_and_reloaded(void **state)
{
	struct masterkey a, b;
	enum masterkey_source src;
	char path[128];
	struct stat st;
	struct err e;
	(void)state;

	make_tmpdir();
	assert_int_equal(masterkey_load(NULL, tmpdir, &a, &src, &e), 0);
	assert_int_equal(src, MASTERKEY_CREATED);
	assert_int_equal(str_fmt(path, sizeof path, "%s/master.key", tmpdir), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 32);
	assert_int_equal(masterkey_load("", tmpdir, &b, &src, &e), 0);
	assert_int_equal(src, MASTERKEY_FROM_FILE);
	assert_memory_equal(a.key, b.key, MASTERKEY_BYTES);
	assert_memory_equal(a.id, b.id, MASTERKEY_ID_BYTES);

	assert_int_equal(chmod(path, 0644), 0);
	assert_true(masterkey_load(NULL, tmpdir, &b, &src, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_non_null(strstr(e.msg, "0644"));
	assert_int_equal(chmod(path, 0400), 0);
	assert_int_equal(masterkey_load(NULL, tmpdir, &b, &src, &e), 0);
	assert_int_equal(chmod(path, 0600), 0);

	assert_int_equal(truncate(path, 31), 0);
	assert_true(masterkey_load(NULL, tmpdir, &b, &src, &e) < 0);
	assert_non_null(strstr(e.msg, "31 bytes"));
	remove_tmpdir();
}

static void test_masterkey_symlink_and_previous(void **state)
{
	struct masterkey a;
	char path[128], target[128];
	struct err e;
	(void)state;

	make_tmpdir();
	assert_int_equal(str_fmt(path, sizeof path, "%s/master.key", tmpdir), 0);
	assert_int_equal(str_fmt(target, sizeof target, "%s/elsewhere", tmpdir), 0);
	assert_int_equal(symlink(target, path), 0);
	assert_true(masterkey_load(NULL, tmpdir, &a, NULL, &e) < 0);
	assert_int_equal(str_fmt(path, sizeof path, "%s/master.key.previous", tmpdir), 0);
	assert_true(masterkey_load_file(path, &a, &e) < 0);
	assert_int_equal(e.code, ERR_NOT_FOUND);
	remove_tmpdir();
}

static void test_masterkey_env(void **state)
{
	unsigned char raw[MASTERKEY_BYTES];
	struct masterkey a, b;
	enum masterkey_source src;
	char *b64;
	struct err e;
	(void)state;

	rand_bytes(raw, sizeof raw);
	b64 = b64_encode(raw, sizeof raw, B64_STD);
	assert_int_equal(masterkey_load(b64, "/nonexistent", &a, &src, &e), 0);
	assert_int_equal(src, MASTERKEY_FROM_ENV);
	assert_memory_equal(a.key, raw, sizeof raw);
	masterkey_from_bytes(&b, raw);
	assert_memory_equal(a.id, b.id, MASTERKEY_ID_BYTES);
	free(b64);

	b64 = b64_encode(raw, 31, B64_STD);
	assert_true(masterkey_load(b64, "/nonexistent", &a, &src, &e) < 0);
	assert_non_null(strstr(e.msg, "31 bytes"));
	free(b64);
	assert_true(masterkey_load("not base64!", "/nonexistent", &a, &src, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_null(strstr(e.msg, "not base64!"));
}

/* The key check against a vector computed outside (Python's hashlib.blake2b(b"accord master
 * key check v1", key=bytes(range(32)), digest_size=32)); another key gives another check. */
static void test_masterkey_check(void **state)
{
	unsigned char raw[MASTERKEY_BYTES];
	char check[MASTERKEY_CHECK_LEN + 1], other_check[MASTERKEY_CHECK_LEN + 1];
	struct masterkey a, b;
	(void)state;

	for (size_t i = 0; i < sizeof raw; i++)
		raw[i] = (unsigned char)i;
	masterkey_from_bytes(&a, raw);
	masterkey_check(&a, check);
	assert_string_equal(check, "v1:e4eb7e0b46c7a032f1ab48cbe2339ae3c0a0b5c17a882369cb35cc7b490d7831");
	assert_true(masterkey_check_matches(&a, check));
	raw[31] ^= 1;
	masterkey_from_bytes(&b, raw);
	masterkey_check(&b, other_check);
	assert_string_not_equal(check, other_check);
	assert_false(masterkey_check_matches(&b, check));
	assert_true(masterkey_check_matches(&b, other_check));
	check[MASTERKEY_CHECK_LEN - 1] = '\0';
	assert_false(masterkey_check_matches(&a, check));
	assert_false(masterkey_check_matches(&a, ""));
	masterkey_wipe(&a);
	masterkey_wipe(&b);
}

static void expect_policy(const char *pw, const char *user, const char *fragment)
{
	struct err e;
	if (!fragment) {
		assert_int_equal(storepass_check(pw, user, &e), 0);
		return;
	}
	assert_true(storepass_check(pw, user, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_non_null(strstr(e.msg, "Invalid password: "));
	assert_non_null(strstr(e.msg, fragment));
	if (pw[0])
		assert_null(strstr(e.msg, pw));
}

static void test_storepass_policy(void **state)
{
	(void)state;
	expect_policy("Ab1defg", NULL, NULL);
	expect_policy("Ab1def", NULL, "seven (7)");
	expect_policy("", NULL, "seven (7)");
	expect_policy("ab1", NULL, "seven (7)"); /* first failure wins */
	expect_policy("abcdefg1", NULL, "upper case");
	expect_policy("ABCDEFG1", NULL, "lower case");
	expect_policy("abcdefgH", NULL, "digit");
	expect_policy("Xalice99z", "alice", "username");
	expect_policy("XALice99z", "alice", "username");
	expect_policy("Xal9ic9ez", "alice", NULL);
	expect_policy("Xal1ce99z", "al", NULL);
	expect_policy("abcdefgH", "abc", "digit"); /* digit rule comes before the username rule */
}

static void test_storepass_generate(void **state)
{
	static const char special[] = "~`!@#$%^&*()-_=+[{]}|,<.>/?\\";
	int seen_special = 0;
	(void)state;

	for (int i = 0; i < 500; i++) {
		char pw[STOREPASS_GEN_LEN + 1], other[STOREPASS_GEN_LEN + 1];
		int up = 0, lo = 0, dig = 0;
		struct err e;
		storepass_generate(pw);
		assert_int_equal(strlen(pw), 12);
		assert_int_equal(storepass_check(pw, NULL, &e), 0);
		for (int k = 0; k < 3; k++) {
			up += pw[k] >= 'A' && pw[k] <= 'Z';
			lo += pw[k] >= 'a' && pw[k] <= 'z';
			dig += pw[k] >= '0' && pw[k] <= '9';
		}
		assert_true(up == 1 && lo == 1 && dig == 1);
		for (int k = 3; k < 12; k++) {
			assert_true((pw[k] >= 'A' && pw[k] <= 'Z') || (pw[k] >= 'a' && pw[k] <= 'z') ||
				    (pw[k] >= '0' && pw[k] <= '9') || strchr(special, pw[k]));
			seen_special += strchr(special, pw[k]) != NULL;
		}
		storepass_generate(other);
		assert_string_not_equal(pw, other);
	}
	assert_true(seen_special > 0);
}

static void test_keypair_ed25519(void **state)
{
	struct keypair kp;
	struct err e;
	(void)state;

	assert_int_equal(keypair_generate(KEYPAIR_ED25519, &kp, &e), 0);
	assert_true(strncmp(kp.public_key, "ssh-ed25519 AAAA", 16) == 0);
	assert_int_equal(kp.public_len, strlen(kp.public_key));
	assert_string_equal(kp.public_key + kp.public_len - 16, " concord-server\n");
	assert_non_null(strstr(kp.private_key, "-----BEGIN OPENSSH PRIVATE KEY-----"));
	keypair_cleanup(&kp);
	keypair_cleanup(&kp);
}

static void test_keypair_rsa(void **state)
{
	struct keypair kp;
	struct err e;
	(void)state;

	assert_int_equal(keypair_generate(KEYPAIR_RSA, &kp, &e), 0);
	assert_true(strncmp(kp.public_key, "ssh-rsa AAAA", 12) == 0);
	/* 4096-bit modulus: the public blob is about 720 Base64 characters */
	assert_true(kp.public_len > 700);
	assert_non_null(strstr(kp.private_key, "-----BEGIN "));
	assert_non_null(strstr(kp.private_key, "PRIVATE KEY-----"));
	assert_true(kp.private_len > 3000);
	keypair_cleanup(&kp);
}

/* The generation a key pool can stop: the same pair as keypair_generate's (libssh's
 * PKCS#8 export of RSA, the ssh-rsa line); a set flag stops it before it starts. */
static void test_keypair_rsa_cancellable(void **state)
{
	struct keypair kp;
	struct err e;
	atomic_bool cancel = false;
	(void)state;

	assert_int_equal(keypair_generate_cancellable(KEYPAIR_RSA, &cancel, &kp, &e), 0);
	assert_true(strncmp(kp.public_key, "ssh-rsa AAAA", 12) == 0);
	assert_true(kp.public_len > 700);
	assert_string_equal(kp.public_key + kp.public_len - 16, " concord-server\n");
	assert_true(strncmp(kp.private_key, "-----BEGIN PRIVATE KEY-----\n", 28) == 0);
	assert_true(kp.private_len > 3000);
	keypair_cleanup(&kp);
	atomic_store(&cancel, true);
	assert_int_equal(keypair_generate_cancellable(KEYPAIR_RSA, &cancel, &kp, &e), -ERR_UNAVAILABLE);
	assert_string_equal(e.msg, "key pair generation cancelled");
	assert_null(kp.private_key);
	assert_null(kp.public_key);
}

/* The key pool's generations, seen through the linker (-Wl,--wrap in the Makefile): how
 * many began, and how the last one ended. */
static atomic_int gen_started, gen_ended, gen_last_rc;

int __real_keypair_generate_cancellable(enum keypair_type t, const atomic_bool *cancel, struct keypair *kp,
					struct err *e);
int __wrap_keypair_generate_cancellable(enum keypair_type t, const atomic_bool *cancel, struct keypair *kp,
					struct err *e);
int __wrap_keypair_generate_cancellable(enum keypair_type t, const atomic_bool *cancel, struct keypair *kp,
					struct err *e)
{
	int rc;

	atomic_fetch_add(&gen_started, 1);
	rc = __real_keypair_generate_cancellable(t, cancel, kp, e);
	atomic_store(&gen_last_rc, rc);
	atomic_fetch_add(&gen_ended, 1);
	return rc;
}

/* keypool_stop stops the RSA-4096 generation in progress instead of waiting for it: that
 * takes 0.3-3 s of CPU, and tens of seconds at nice +10 on a loaded machine, which a
 * server's stop used to wait for.  The generation that keypool_stop met must have ended
 * cancelled, not with a pair.  Three times, so that a lucky fast generation on the old
 * code cannot pass. */
static void test_keypool_stop_cancels_generation(void **state)
{
	struct err e;
	(void)state;

	for (int i = 0; i < 3; i++) {
		int started = atomic_load(&gen_started), ended = atomic_load(&gen_ended);

		assert_int_equal(keypool_start(1, &e), 0);
		while (atomic_load(&gen_started) == started) /* the generator is inside its first pair */
			usleep(1000);
		keypool_stop();
		assert_int_equal(atomic_load(&gen_started), started + 1);
		assert_int_equal(atomic_load(&gen_ended), ended + 1);
		assert_int_equal(atomic_load(&gen_last_rc), -ERR_UNAVAILABLE); /* cancelled, not finished */
		assert_int_equal(keypool_ready(), 0);
	}
}

static void test_keypair_type_parse(void **state)
{
	enum keypair_type t;
	struct err e;
	(void)state;

	assert_int_equal(keypair_type_parse("ED25519", &t, &e), 0);
	assert_int_equal(t, KEYPAIR_ED25519);
	assert_int_equal(keypair_type_parse("rsa", &t, &e), 0);
	assert_int_equal(t, KEYPAIR_RSA);
	assert_true(keypair_type_parse("dsa", &t, &e) < 0);
	assert_non_null(strstr(e.msg, "dsa"));
}

static void test_payload_keypair(void **state)
{
	unsigned char *p;
	size_t len;
	struct str pub, priv;
	struct err e;
	static char big[PAYLOAD_KEY_MAX + 1];
	(void)state;

	assert_int_equal(payload_keypair_encode(STR_LIT("ssh-rsa AAA"), STR_LIT("PRIV"), &p, &len, &e), 0);
	assert_int_equal(len, 4 + 11 + 4 + 4);
	assert_memory_equal(p, "\0\0\0\x0bssh-rsa AAA\0\0\0\x04PRIV", len);
	assert_int_equal(payload_keypair_decode(p, len, &pub, &priv, &e), 0);
	assert_true(str_eq_cstr(pub, "ssh-rsa AAA"));
	assert_true(str_eq_cstr(priv, "PRIV"));
	for (size_t n = 0; n < len; n++)
		assert_true(payload_keypair_decode(p, n, &pub, &priv, &e) < 0);
	p[3] = 0xff; /* length past the input */
	assert_true(payload_keypair_decode(p, len, &pub, &priv, &e) < 0);
	p[0] = 0x80; /* negative int32 */
	assert_true(payload_keypair_decode(p, len, &pub, &priv, &e) < 0);
	payload_free(p, len);

	memset(big, 'k', sizeof big);
	assert_true(payload_keypair_encode((struct str){big, sizeof big}, STR_LIT("x"), &p, &len, &e) < 0);
	assert_true(payload_keypair_encode(STR_LIT("x"), (struct str){big, sizeof big}, &p, &len, &e) < 0);
	assert_int_equal(payload_keypair_encode(STR_LIT(""), (struct str){big, PAYLOAD_KEY_MAX}, &p, &len, &e), 0);
	assert_int_equal(payload_keypair_decode(p, len, &pub, &priv, &e), 0);
	assert_int_equal(pub.len, 0);
	assert_int_equal(priv.len, PAYLOAD_KEY_MAX);
	payload_free(p, len);

	assert_true(payload_keypair_decode((const unsigned char *)"\0\0\0\0\0\0\0\0x", 9, &pub, &priv, &e) < 0);
	assert_non_null(strstr(e.msg, "trailing"));
}

static void userpass_round_trip(const char *user, size_t ulen, const char *expect_wire, size_t wire_ulen)
{
	unsigned char *p;
	size_t len, out_len;
	char *u;
	struct str pw;
	struct err e;

	assert_int_equal(payload_userpass_encode((struct str){user, ulen}, STR_LIT("pa\0ss"), &p, &len, &e), 0);
	assert_int_equal(len, 2 + wire_ulen + 4 + 5);
	assert_int_equal(p[0] << 8 | p[1], wire_ulen);
	assert_memory_equal(p + 2, expect_wire, wire_ulen);
	assert_memory_equal(p + 2 + wire_ulen, "\0\0\0\x05pa\0ss", 9);
	assert_int_equal(payload_userpass_decode(p, len, &u, &out_len, &pw, &e), 0);
	assert_int_equal(out_len, ulen);
	assert_memory_equal(u, user, ulen);
	assert_int_equal(pw.len, 5);
	assert_memory_equal(pw.p, "pa\0ss", 5);
	payload_free(u, out_len);
	for (size_t n = 0; n < len; n++) {
		assert_true(payload_userpass_decode(p, n, &u, &out_len, &pw, &e) < 0);
		assert_null(u);
	}
	payload_free(p, len);
}

static void test_payload_userpass(void **state)
{
	unsigned char *p;
	size_t len, ulen;
	char *u;
	struct str pw;
	struct err e;
	(void)state;

	userpass_round_trip("bob", 3, "bob", 3);
	userpass_round_trip("", 0, "", 0);
	userpass_round_trip("a\0b", 3,
			    "a\xc0\x80"
			    "b",
			    4);							   /* NUL as C0 80 */
	userpass_round_trip("\xc3\xa9", 2, "\xc3\xa9", 2);			   /* é unchanged */
	userpass_round_trip("\xe2\x82\xac", 3, "\xe2\x82\xac", 3);		   /* € unchanged */
	userpass_round_trip("\xf0\x9f\x98\x80", 4, "\xed\xa0\xbd\xed\xb8\x80", 6); /* U+1F600 as surrogates */

	assert_true(payload_userpass_encode(STR_LIT("\xff"), STR_LIT("x"), &p, &len, &e) < 0);
	assert_non_null(strstr(e.msg, "UTF-8"));
	assert_true(payload_userpass_encode(STR_LIT("\xc0\x80"), STR_LIT("x"), &p, &len, &e) < 0);     /* overlong */
	assert_true(payload_userpass_encode(STR_LIT("\xed\xa0\x80"), STR_LIT("x"), &p, &len, &e) < 0); /* surrogate */
	/* malformed modified UTF-8 on the wire */
	assert_true(payload_userpass_decode((const unsigned char *)"\0\x01\xff\0\0\0\0", 7, &u, &ulen, &pw, &e) < 0);
	/* trailing bytes */
	assert_true(payload_userpass_decode((const unsigned char *)"\0\0\0\0\0\0z", 7, &u, &ulen, &pw, &e) < 0);
}

static void test_payload_userpass_long_username(void **state)
{
	size_t n = PAYLOAD_UTF_MAX / 2 + 1;
	char *user = malloc(n);
	unsigned char *p;
	size_t len;
	struct err e;
	(void)state;

	memset(user, 0, n); /* each NUL becomes 2 bytes: 65536 > 65535 */
	assert_true(payload_userpass_encode((struct str){user, n}, STR_LIT("x"), &p, &len, &e) < 0);
	assert_non_null(strstr(e.msg, "65535"));
	assert_int_equal(payload_userpass_encode((struct str){user, n - 1}, STR_LIT("x"), &p, &len, &e), 0);
	payload_free(p, len);
	free(user);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seal_round_trip_master),
	    cmocka_unit_test(test_seal_empty_plaintext),
	    cmocka_unit_test(test_seal_fresh_randomness),
	    cmocka_unit_test(test_seal_detects_every_flipped_byte),
	    cmocka_unit_test(test_seal_truncated_and_garbage),
	    cmocka_unit_test(test_seal_binding_mismatch),
	    cmocka_unit_test(test_seal_password),
	    cmocka_unit_test(test_seal_password_tampered_kdf_cost),
	    cmocka_unit_test(test_seal_default_kdf_cost),
	    cmocka_unit_test(test_seal_wrong_master_key_and_rewrap),
	    cmocka_unit_test(test_masterkey_file_created_and_reloaded),
	    cmocka_unit_test(test_masterkey_symlink_and_previous),
	    cmocka_unit_test(test_masterkey_env),
	    cmocka_unit_test(test_masterkey_check),
	    cmocka_unit_test(test_storepass_policy),
	    cmocka_unit_test(test_storepass_generate),
	    cmocka_unit_test(test_keypair_ed25519),
	    cmocka_unit_test(test_keypair_rsa),
	    cmocka_unit_test(test_keypair_rsa_cancellable),
	    cmocka_unit_test(test_keypool_stop_cancels_generation),
	    cmocka_unit_test(test_keypair_type_parse),
	    cmocka_unit_test(test_payload_keypair),
	    cmocka_unit_test(test_payload_userpass),
	    cmocka_unit_test(test_payload_userpass_long_username),
	};
	return cmocka_run_group_tests_name("crypto", tests, setup, NULL);
}
