/* The credentials frame of the fetch child (layout in repo/internal.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "repo/internal.h"

/* Lengths are 32-bit big-endian. */
static void put_len(unsigned char *p, size_t n)
{
	uint32_t be = htonl((uint32_t)n);
	memcpy(p, &be, sizeof be);
}

static uint32_t get_len(const unsigned char *p)
{
	uint32_t be;
	memcpy(&be, p, sizeof be);
	return ntohl(be);
}

int repo_cred_encode(const struct repo_cred *c, unsigned char **out, size_t *len, struct err *e)
{
	size_t n = 1;
	unsigned char *p;

	*out = NULL;
	*len = 0;
	if (c->type != REPO_CRED_NONE) {
		if (c->a_len > REPO_CRED_MAX || c->b_len > REPO_CRED_MAX)
			return err_set(e, ERR_INVALID, "the repository's credentials are too large");
		n += 8 + c->a_len + c->b_len;
	}
	if (!(p = malloc(n)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	p[0] = (unsigned char)c->type;
	if (c->type != REPO_CRED_NONE) {
		put_len(p + 1, c->a_len);
		if (c->a_len)
			memcpy(p + 5, c->a, c->a_len);
		put_len(p + 5 + c->a_len, c->b_len);
		if (c->b_len)
			memcpy(p + 9 + c->a_len, c->b, c->b_len);
	}
	*out = p;
	*len = n;
	return 0;
}

void repo_cred_frame_free(unsigned char *p, size_t len)
{
	if (p) {
		sodium_memzero(p, len);
		free(p);
	}
}

/* Reads fd to its end into a new buffer (at most max bytes). */
static int read_all(int fd, size_t max, unsigned char **out, size_t *len, struct err *e)
{
	size_t cap = 4096, n = 0;
	unsigned char *p = malloc(cap);

	if (!p)
		return err_set(e, ERR_INTERNAL, "out of memory");
	for (;;) {
		ssize_t r;
		if (n == cap) {
			unsigned char *q;
			if (cap >= max) {
				repo_cred_frame_free(p, n);
				return err_set(e, ERR_INVALID, "credentials frame: too large");
			}
			/* grow without leaving a copy of the plaintext behind */
			if (!(q = malloc(cap * 2))) {
				repo_cred_frame_free(p, n);
				return err_set(e, ERR_INTERNAL, "out of memory");
			}
			memcpy(q, p, n);
			repo_cred_frame_free(p, n);
			p = q;
			cap *= 2;
		}
		r = read(fd, p + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			repo_cred_frame_free(p, n);
			return err_set(e, ERR_INTERNAL, "credentials frame: read: %s", strerror(errno));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = p;
	*len = n;
	return 0;
}

static char *field(const unsigned char *p, size_t len, size_t *off, size_t *out_len, struct err *e)
{
	uint32_t n;
	char *s;

	if (len - *off < 4) {
		err_set(e, ERR_INVALID, "credentials frame: truncated");
		return NULL;
	}
	n = get_len(p + *off);
	*off += 4;
	if (n > REPO_CRED_MAX || len - *off < n) {
		err_set(e, ERR_INVALID, "credentials frame: bad length");
		return NULL;
	}
	if (!(s = malloc((size_t)n + 1))) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	memcpy(s, p + *off, n);
	s[n] = 0;
	*off += n;
	*out_len = n;
	return s;
}

int repo_cred_read(int fd, struct repo_cred *c, struct err *e)
{
	unsigned char *p = NULL;
	size_t len = 0, off = 1;
	int rc = 0;

	memset(c, 0, sizeof *c);
	if (read_all(fd, 2 * (size_t)REPO_CRED_MAX + 16, &p, &len, e))
		return -1;
	if (len < 1)
		rc = err_set(e, ERR_INVALID, "credentials frame: empty");
	else if (p[0] != REPO_CRED_NONE && p[0] != REPO_CRED_USERPASS && p[0] != REPO_CRED_KEYPAIR)
		rc = err_set(e, ERR_INVALID, "credentials frame: unknown type %u", p[0]);
	else if ((c->type = p[0]) != REPO_CRED_NONE &&
		 (!(c->a = field(p, len, &off, &c->a_len, e)) || !(c->b = field(p, len, &off, &c->b_len, e))))
		rc = -1;
	else if (off != len)
		rc = err_set(e, ERR_INVALID, "credentials frame: trailing bytes");
	repo_cred_frame_free(p, len);
	if (rc)
		repo_cred_clear(c);
	return rc;
}

void repo_cred_clear(struct repo_cred *c)
{
	if (c->a) {
		sodium_memzero(c->a, c->a_len);
		free(c->a);
	}
	if (c->b) {
		sodium_memzero(c->b, c->b_len);
		free(c->b);
	}
	memset(c, 0, sizeof *c);
}
