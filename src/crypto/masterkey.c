#include "crypto/masterkey.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "base/b64.h"

static const char id_context[] = "accord master key id v1";
static const char check_context[] = "accord master key check v1";

void masterkey_from_bytes(struct masterkey *mk, const unsigned char key[MASTERKEY_BYTES])
{
	memcpy(mk->key, key, MASTERKEY_BYTES);
	crypto_generichash(mk->id, sizeof mk->id, (const unsigned char *)id_context, sizeof id_context - 1, mk->key,
			   sizeof mk->key);
}

void masterkey_check(const struct masterkey *mk, char out[MASTERKEY_CHECK_LEN + 1])
{
	unsigned char h[32];

	crypto_generichash(h, sizeof h, (const unsigned char *)check_context, sizeof check_context - 1, mk->key,
			   sizeof mk->key);
	memcpy(out, "v1:", 3);
	sodium_bin2hex(out + 3, MASTERKEY_CHECK_LEN - 3 + 1, h, sizeof h);
}

bool masterkey_check_matches(const struct masterkey *mk, const char *check)
{
	char mine[MASTERKEY_CHECK_LEN + 1];

	masterkey_check(mk, mine);
	return strlen(check) == MASTERKEY_CHECK_LEN && sodium_memcmp(mine, check, MASTERKEY_CHECK_LEN) == 0;
}

void masterkey_wipe(struct masterkey *mk)
{
	if (mk)
		sodium_memzero(mk, sizeof *mk);
}

static int from_env(const char *b64, struct masterkey *mk, struct err *e)
{
	size_t n = 0;
	struct err ignored;
	unsigned char *raw = b64_decode(b64, strlen(b64), &n, &ignored);
	int rc = 0;

	if (!raw)
		return err_set(e, ERR_INVALID,
			       "ACCORD_MASTER_KEY is not valid Base64 (expected the Base64 of 32 bytes)");
	if (n != MASTERKEY_BYTES)
		rc = err_set(e, ERR_INVALID, "ACCORD_MASTER_KEY decodes to %zu bytes, expected %d", n, MASTERKEY_BYTES);
	else
		masterkey_from_bytes(mk, raw);
	sodium_memzero(raw, n);
	free(raw);
	return rc;
}

static int read_exact(int fd, unsigned char *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static int check_stat(const char *path, const struct stat *st, struct err *e)
{
	if (!S_ISREG(st->st_mode))
		return err_set(e, ERR_INVALID, "master key file %s is not a regular file", path);
	if (st->st_mode & 077)
		return err_set(e, ERR_INVALID,
			       "master key file %s has mode %04o; it must not be readable by group or others "
			       "(chmod 600 %s)",
			       path, (unsigned)(st->st_mode & 0777), path);
	if (st->st_size != MASTERKEY_BYTES)
		return err_set(e, ERR_INVALID, "master key file %s has %lld bytes, expected exactly %d", path,
			       (long long)st->st_size, MASTERKEY_BYTES);
	return 0;
}

int masterkey_load_file(const char *path, struct masterkey *mk, struct err *e)
{
	unsigned char raw[MASTERKEY_BYTES];
	struct stat st;
	int fd, rc;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return err_set(e, ERR_NOT_FOUND, "master key file %s does not exist", path);
	if (fd < 0)
		return err_set(e, ERR_INVALID, "cannot open master key file %s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0) {
		rc = err_set(e, ERR_INTERNAL, "cannot stat master key file %s: %s", path, strerror(errno));
		goto out;
	}
	rc = check_stat(path, &st, e);
	if (rc < 0)
		goto out;
	if (read_exact(fd, raw, sizeof raw) != 0) {
		rc = err_set(e, ERR_INTERNAL, "cannot read master key file %s", path);
		goto out;
	}
	masterkey_from_bytes(mk, raw);
out:
	sodium_memzero(raw, sizeof raw);
	close(fd);
	return rc;
}

static int create_file(const char *path, struct masterkey *mk, struct err *e)
{
	unsigned char raw[MASTERKEY_BYTES];
	const unsigned char *p = raw;
	size_t left = sizeof raw;
	int fd, rc = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_set(e, ERR_INTERNAL, "cannot create master key file %s: %s", path, strerror(errno));
	randombytes_buf(raw, sizeof raw);
	while (left) {
		ssize_t n = write(fd, p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = err_set(e, ERR_INTERNAL, "cannot write master key file %s: %s", path, strerror(errno));
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	if (rc == 0 && fsync(fd) != 0)
		rc = err_set(e, ERR_INTERNAL, "cannot sync master key file %s: %s", path, strerror(errno));
	close(fd);
	if (rc == 0)
		masterkey_from_bytes(mk, raw);
	else
		unlink(path);
	sodium_memzero(raw, sizeof raw);
	return rc;
}

int masterkey_load(const char *env_b64, const char *data_dir, struct masterkey *mk, enum masterkey_source *src,
		   struct err *e)
{
	char path[4096];
	struct err e2;
	int rc;

	if (env_b64 && env_b64[0]) {
		if (src)
			*src = MASTERKEY_FROM_ENV;
		return from_env(env_b64, mk, e);
	}
	if (snprintf(path, sizeof path, "%s/%s", data_dir, MASTERKEY_FILE) >= (int)sizeof path)
		return err_set(e, ERR_INVALID, "data folder path too long");
	rc = masterkey_load_file(path, mk, &e2);
	if (rc == 0) {
		if (src)
			*src = MASTERKEY_FROM_FILE;
		return 0;
	}
	if (e2.code != ERR_NOT_FOUND) {
		if (e)
			*e = e2;
		return rc;
	}
	if (src)
		*src = MASTERKEY_CREATED;
	return create_file(path, mk, e);
}
