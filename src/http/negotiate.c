/* Content negotiation of JSON answers: an ETag (a hash of the body), 304 when the client's
 * If-None-Match has it, and gzip when the client accepts it.  The console's 2-second poll
 * of a list that did not change then costs a header, and a changed one a fraction. */
#include "http/negotiate.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>
#include <zlib.h>

#include "base/dlib.h"
#include "base/str.h"

enum { GZIP_MIN = 1024 }; /* smaller bodies are sent as they are: gzip would hardly help */

/* Whether q=… among the parameters (";q=0.5;x=y") is zero: 0, 0.0, 0.00, 0.000. */
static bool q_zero(struct str params)
{
	while (params.len) {
		size_t n = 0;
		struct str param;

		while (n < params.len && params.p[n] != ';')
			n++;
		param = str_trim((struct str){params.p, n});
		params = n < params.len ? (struct str){params.p + n + 1, params.len - n - 1} : (struct str){"", 0};
		if (param.len >= 2 && (param.p[0] == 'q' || param.p[0] == 'Q') && param.p[1] == '=')
			return strspn(param.p + 2, "0.") >= param.len - 2;
	}
	return false;
}

/* Whether an Accept-Encoding value allows gzip: a "gzip" (or "*") coding whose q is not 0. */
bool http_accepts_gzip(const char *accept)
{
	const char *p = accept ? accept : "";

	while (*p) {
		size_t item = strcspn(p, ","), name = strcspn(p, ",;");
		struct str coding = str_trim((struct str){p, name});

		if ((str_ieq_cstr(coding, "gzip") || str_ieq_cstr(coding, "x-gzip") || str_eq_cstr(coding, "*")) &&
		    !q_zero((struct str){p + name, item - name}))
			return true;
		p += item + (p[item] == ',');
	}
	return false;
}

static bool has_header(const struct http_response *w, const char *name)
{
	for (size_t i = 0; i < w->n_headers; i++)
		if (strcasecmp(w->header_names[i], name) == 0)
			return true;
	return false;
}

/* zlib, loaded on demand like the other libraries only some requests need: linked, it cost
 * every start of every command (`accord run`, each runner) its symbol bindings
 * (bench/flows/startup).  zlib.h is included for the types and constants only. */
#define ZLIB_FUNCTIONS(X)                                                                                              \
	X(deflate_init2, deflateInit2_)                                                                                \
	X(deflate_bound, deflateBound)                                                                                 \
	X(deflate, deflate)                                                                                            \
	X(deflate_end, deflateEnd)
struct zlib_api {
	ZLIB_FUNCTIONS(DLIB_FIELD)
};
#define ZLIB_SYM(field, name) DLIB_SYM(struct zlib_api, field, name)
static const struct dlib_sym zlib_syms[] = {ZLIB_FUNCTIONS(ZLIB_SYM)};
static struct dlib_once zlib_once = DLIB_ONCE_INIT;
static struct zlib_api zlib;

/* body → a malloc'd gzip stream in *out (NULL on failure, zlib missing included: the body
 * goes as it is). */
static size_t gzip(const char *body, size_t len, char **out)
{
	z_stream z = {0};
	struct err e;
	size_t cap;
	char *buf;

	*out = NULL;
	if (dlib_load_once(&zlib_once, ZLIB_SONAME, "zlib1g", zlib_syms, sizeof zlib_syms / sizeof zlib_syms[0], &zlib,
			   sizeof zlib, &e) ||
	    zlib.deflate_init2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, (int)sizeof z) != Z_OK)
		return 0;
	cap = zlib.deflate_bound(&z, len) + 32;
	buf = malloc(cap);
	if (!buf) {
		zlib.deflate_end(&z);
		return 0;
	}
	z.next_in = (Bytef *)body;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)buf;
	z.avail_out = (uInt)cap;
	if (zlib.deflate(&z, Z_FINISH) != Z_STREAM_END) {
		zlib.deflate_end(&z);
		free(buf);
		return 0;
	}
	len = z.total_out;
	zlib.deflate_end(&z);
	*out = buf;
	return len;
}

void http_negotiate_json(const struct http_request *req, struct http_response *w)
{
	unsigned char hash[16];
	char etag[2 * sizeof hash + 8], hex[2 * sizeof hash + 1];
	const char *inm = http_header(req, "If-None-Match");
	bool gz;
	char *packed;
	size_t n;

	if (strcmp(req->method, "GET") != 0 || w->status != 200 || !w->body ||
	    strncmp(w->content_type, "application/json", 16) != 0)
		return;
	gz = w->len >= GZIP_MIN && http_accepts_gzip(http_header(req, "Accept-Encoding"));
	crypto_generichash(hash, sizeof hash, (const unsigned char *)w->body, w->len, NULL, 0);
	sodium_bin2hex(hex, sizeof hex, hash, sizeof hash);
	/* One ETag per representation, as for the console's files: the gzipped one ends in -gz. */
	if (str_fmt(etag, sizeof etag, "\"%s%s\"", hex, gz ? "-gz" : ""))
		return; /* cannot happen: the buffer fits the longest */
	http_resp_header(w, "ETag", etag);
	http_resp_header(w, "Vary", "Accept-Encoding");
	if (!has_header(w, "Cache-Control")) /* a browser keeps it, and asks each time */
		http_resp_header(w, "Cache-Control", "private, no-cache");
	if (inm && strstr(inm, hex)) {
		http_resp_static(w, 304, NULL, "", 0);
		return;
	}
	if (!gz || !(n = gzip(w->body, w->len, &packed)))
		return;
	http_resp_header(w, "Content-Encoding", "gzip");
	http_resp_take(w, 200, "application/json", packed, n);
}
