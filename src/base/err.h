#ifndef ACCORD_BASE_ERR_H
#define ACCORD_BASE_ERR_H

/* Error details carried by every fallible function.  A function that can fail returns
 * 0 / a pointer on success and a negative code / NULL on failure, and fills a
 * caller-owned struct err.  The code says what kind of failure it was; the HTTP layer
 * maps codes to statuses through one table (http/response.c).  Messages say what was
 * wrong and with which value, and never carry a secret. */

enum err_code {
	ERR_OK = 0,
	ERR_INVALID,	 /* bad input: 400 */
	ERR_UNAUTH,	 /* no or bad credentials: 401 */
	ERR_FORBIDDEN,	 /* authenticated, not allowed: 403 */
	ERR_NOT_FOUND,	 /* unknown resource: 404 */
	ERR_METHOD,	 /* path exists, method does not: 405 */
	ERR_CONFLICT,	 /* duplicate name or wrong state: 409 */
	ERR_TOO_LARGE,	 /* over a size limit: 413 */
	ERR_MEDIA_TYPE,	 /* wrong content type: 415 */
	ERR_UNAVAILABLE, /* shutting down, overloaded: 503 */
	ERR_INTERNAL,	 /* a bug or an I/O failure: 500 */
	ERR_LIMIT,	 /* a configured limit of a flow was hit */
	ERR_RANGE,	 /* a byte range outside the resource: 416 */
	ERR_NO_SPACE,	 /* a file system (or the database's) is full: 507 */
	ERR_TOO_MANY,	 /* over a per-user or per-resource count: 429 */
	ERR__COUNT
};

#define ERR_MSG_MAX 512

struct err {
	enum err_code code;
	char msg[ERR_MSG_MAX];
};

#define WUR __attribute__((warn_unused_result))

/* Sets e (may be NULL) and returns -code, so `return err_set(e, ERR_INVALID, ...)` reads well. */
int err_set(struct err *e, enum err_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message: "<prefix>: <old message>". */
void err_prefix(struct err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

void err_clear(struct err *e);

/* The code for a failed write's errno: ERR_NO_SPACE for a full file system or quota
 * (ENOSPC, EDQUOT), ERR_INTERNAL for anything else. */
enum err_code err_code_of_write(int errnum);

/* A short stable name for the code ("invalid", "not_found", …). */
const char *err_code_name(enum err_code code);

#endif
