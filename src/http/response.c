#include "http/response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/jsonx.h"
#include "base/str.h"

void http_resp_init(struct http_response *w)
{
	memset(w, 0, sizeof *w);
	w->status = 500;
	w->fd = -1;
}

static void clear_body(struct http_response *w)
{
	if (w->body)
		explicit_bzero(w->body, w->len); /* exported secrets pass through here */
	free(w->body);
	w->body = NULL;
	w->static_body = NULL;
	w->len = 0;
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	if (w->stream_ops)
		w->stream_ops->free(w->stream_ctx);
	w->stream_ops = NULL;
	w->stream_ctx = NULL;
}

void http_resp_cleanup(struct http_response *w)
{
	clear_body(w);
	for (size_t i = 0; i < w->n_headers; i++) {
		free(w->header_names[i]);
		free(w->header_values[i]);
	}
	w->n_headers = 0;
}

/* A content type is never cut: one too long for its field is sent as plain bytes. */
static void set_type(struct http_response *w, const char *content_type)
{
	if (str_fmt(w->content_type, sizeof w->content_type, "%s", content_type))
		str_set_lit(w->content_type, "application/octet-stream");
}

void http_resp_take(struct http_response *w, int status, const char *content_type, char *data, size_t len)
{
	clear_body(w);
	w->status = status;
	set_type(w, content_type ? content_type : "");
	w->body = data;
	w->len = len;
}

void http_resp_bytes(struct http_response *w, int status, const char *content_type, const void *data, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy) { /* out of memory: an empty 500 (nothing left to say it with) */
		http_resp_take(w, 500, NULL, NULL, 0);
		return;
	}
	if (len)
		memcpy(copy, data, len);
	http_resp_take(w, status, content_type, copy, len);
}

void http_resp_static(struct http_response *w, int status, const char *content_type, const void *data, size_t len)
{
	clear_body(w);
	w->status = status;
	set_type(w, content_type ? content_type : "");
	w->static_body = data;
	w->len = len;
}

void http_resp_json(struct http_response *w, int status, json_t *v)
{
	char *s = jsonx_dump(v);

	json_decref(v);
	if (!s) { /* out of memory (also a json_pack that failed): an empty 500 */
		http_resp_take(w, 500, NULL, NULL, 0);
		return;
	}
	http_resp_take(w, status, "application/json", s, strlen(s));
}

void http_resp_file(struct http_response *w, int status, const char *content_type, int fd, uint64_t off, uint64_t len)
{
	clear_body(w);
	w->status = status;
	set_type(w, content_type);
	w->fd = fd;
	w->fd_off = off;
	w->fd_len = len;
}

void http_resp_stream(struct http_response *w, int status, const char *content_type, const struct http_stream_ops *ops,
		      void *ctx, uint64_t len)
{
	clear_body(w);
	w->status = status;
	set_type(w, content_type);
	w->stream_ops = ops;
	w->stream_ctx = ctx;
	w->stream_len = len;
}

void http_resp_header(struct http_response *w, const char *name, const char *value)
{
	if (w->n_headers == HTTP_MAX_HEADERS)
		return;
	w->header_names[w->n_headers] = strdup(name);
	w->header_values[w->n_headers] = strdup(value);
	if (!w->header_names[w->n_headers] || !w->header_values[w->n_headers])
		abort();
	w->n_headers++;
}

void http_resp_header_drop(struct http_response *w, const char *name)
{
	size_t kept = 0;

	for (size_t i = 0; i < w->n_headers; i++) {
		if (strcasecmp(w->header_names[i], name) == 0) {
			free(w->header_names[i]);
			free(w->header_values[i]);
			continue;
		}
		w->header_names[kept] = w->header_names[i];
		w->header_values[kept++] = w->header_values[i];
	}
	w->n_headers = kept;
}

int http_status_of(enum err_code code)
{
	static const int status[ERR__COUNT] = {
	    [ERR_OK] = 200,	    [ERR_INVALID] = 400,     [ERR_UNAUTH] = 401,   [ERR_FORBIDDEN] = 403,
	    [ERR_NOT_FOUND] = 404,  [ERR_METHOD] = 405,	     [ERR_CONFLICT] = 409, [ERR_TOO_LARGE] = 413,
	    [ERR_MEDIA_TYPE] = 415, [ERR_UNAVAILABLE] = 503, [ERR_INTERNAL] = 500, [ERR_LIMIT] = 400,
	    [ERR_RANGE] = 416,	    [ERR_NO_SPACE] = 507,    [ERR_TOO_MANY] = 429,
	};
	if (code <= 0 || code >= ERR__COUNT || !status[code])
		return 500;
	return status[code];
}

void http_resp_error(struct http_response *w, const struct err *e)
{
	json_t *body = json_object();
	int status = http_status_of(e->code);

	json_object_set_new(body, "ok", json_false());
	json_object_set_new(body, "message", jsonx_string_lossy(e->msg[0] ? e->msg : err_code_name(e->code)));
	http_resp_json(w, status, body);
	if (status == 401)
		http_resp_header(w, "WWW-Authenticate", "Basic realm=\"accord\"");
	if (status == 503)
		http_resp_header(w, "Retry-After", "1");
}
