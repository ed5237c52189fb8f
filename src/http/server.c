#include "http/server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http/deadline.h"
#include "http/mhd.h"
#include "http/stream.h"

#include "base/datetime.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/sanitizer.h"
#include "base/sockdiag.h"
#include "base/str.h"
#include "base/workq.h"

struct http_server {
	struct MHD_Daemon *d;
	struct http_server_cfg cfg;
	http_handler fn;
	void *ctx;
	_Atomic int in_flight;
	uint16_t port;
	struct workq *workers;
	struct workq *apart; /* HTTP_DEFER_APART handlers */
	struct http_streams streams;
	struct http_deadlines deadlines;
};

/* What the server keeps per connection (libmicrohttpd's socket context), as opposed to
 * per request (conn_state). */
struct http_conn_sock {
	struct http_deadline_conn *deadline;
	_Atomic bool nul_in_url; /* the URL of the request being read decoded a %00 */
};

static struct http_conn_sock *http_conn_sock_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static struct http_deadline_conn *deadline_of(struct MHD_Connection *conn)
{
	struct http_conn_sock *sock = http_conn_sock_of(conn);

	return sock ? sock->deadline : NULL;
}

/* A request's life: READING its body on an I/O thread, then either answered at once by the
 * handler, or (HTTP_DEFER) RUNNING its handler on a worker with the connection suspended
 * → DONE, resumed, and answered on the I/O thread.  So no handler, however slow (Argon2id,
 * key generation, a write waiting for the database lock), holds up other connections. */
enum conn_phase { PHASE_READING, PHASE_RUNNING, PHASE_DONE };

struct conn_state {
	struct http_request req;
	struct http_response resp;
	struct http_server *server;
	struct MHD_Connection *conn;
	_Atomic int phase;
	bool too_large;
	bool refused; /* answered with `early` before reading the body */
	bool answered;
	struct err early;
	int early_status; /* overrides the status of `early` (414, 431) when set */
	size_t limit;
};

static int parse_listen(const char *listen, struct sockaddr_storage *ss, struct err *e)
{
	char host[256];
	const char *colon, *port_s;
	struct addrinfo hints = {0}, *res = NULL;
	int64_t port;
	int rc;

	if (listen[0] == '[') {
		const char *close = strchr(listen, ']');
		if (!close || close[1] != ':')
			goto bad;
		if (str_fmt(host, sizeof host, "%.*s", (int)(close - listen - 1), listen + 1))
			goto bad;
		port_s = close + 2;
	} else {
		colon = strrchr(listen, ':');
		if (!colon)
			goto bad;
		if (str_fmt(host, sizeof host, "%.*s", (int)(colon - listen), listen))
			goto bad;
		port_s = colon + 1;
	}
	if (str_to_i64(str_from(port_s), 0, 65535, &port, "port", e))
		goto bad;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host[0] ? host : NULL, port_s, &hints, &res);
	if (rc != 0 || !res)
		return err_set(e, ERR_INVALID, "--listen '%s': cannot resolve '%s': %s", listen, host,
			       gai_strerror(rc));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
bad:
	return err_set(e, ERR_INVALID, "--listen must be HOST:PORT, [IPV6]:PORT or :PORT, got '%s'", listen);
}

/* libmicrohttpd's messages about a client that went away (reset, closed) in the middle of
 * an answer — every hung-up log follower, every download a browser cancels — and about a
 * stream ended on purpose (the server stops; its handler already logged why): nothing for
 * an operator to act on, so they are logged at debug level, the others as warnings. */
static bool client_gone(const char *msg)
{
	static const char *const phrases[] = {
	    "forcibly closed by remote peer",
	    "no longer available for sending",
	    "application error generating response",
	};

	for (size_t i = 0; i < sizeof phrases / sizeof phrases[0]; i++)
		if (strstr(msg, phrases[i]))
			return true;
	return false;
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];
	size_t n;
	(void)cls;

	str_vfmt_cut(msg, sizeof msg, fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	log_line(client_gone(msg) ? LOG_DEBUG : LOG_WARN, msg, NULL);
}

/* glibc keeps freed memory in its arenas (one per thread that allocated), so after a
 * request that used much of it — a large inventory query, a large body — the process
 * would stay at its peak size for ever.  malloc_trim gives the free pages of every arena
 * back; it costs a walk of the heap, so only after such requests. */
#define TRIM_AFTER_BYTES ((size_t)1 << 20)

static void give_back_memory(void)
{
	if (!sanitizer_give_back_memory())
		malloc_trim(0);
}

/* Response bodies are zeroed before they are freed (docs/security.md). */
static void free_wiped(void *p)
{
	size_t n = p ? malloc_usable_size(p) : 0;

	if (p)
		explicit_bzero(p, n);
	free(p);
	if (n >= TRIM_AFTER_BYTES)
		give_back_memory();
}

static enum MHD_Result queue(struct http_server *s, struct MHD_Connection *conn, struct http_response *w)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (w->stream_ops) {
		r = http_stream_response(&s->streams, conn, w);
	} else if (w->fd >= 0) {
		r = mhd.create_response_from_fd_at_offset64(w->fd_len, w->fd, w->fd_off);
		if (r)
			w->fd = -1; /* libmicrohttpd closes it */
	} else if (w->body) {
		/* Handed over, not copied: the body may be exported secret data, and a copy
		 * freed inside libmicrohttpd could not be wiped. */
		r = mhd.create_response_from_buffer_with_free_callback(w->len, w->body, free_wiped);
		if (r)
			w->body = NULL;
	} else if (w->static_body) {
		r = mhd.create_response_from_buffer(w->len, (void *)w->static_body, MHD_RESPMEM_PERSISTENT);
	} else {
		r = mhd.create_response_from_buffer(0, (char *)"", MHD_RESPMEM_PERSISTENT);
	}
	if (!r)
		return MHD_NO;
	if (w->content_type[0])
		mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, w->content_type);
	for (size_t i = 0; i < w->n_headers; i++)
		mhd.add_response_header(r, w->header_names[i], w->header_values[i]);
	ret = mhd.queue_response(conn, (unsigned)w->status, r);
	mhd.destroy_response(r);
	return ret;
}

static void answer_too_large(struct conn_state *cs)
{
	struct err e;

	err_set(&e, ERR_TOO_LARGE, "request body exceeds the limit of %zu bytes", cs->limit);
	http_resp_error(&cs->resp, &e);
	http_resp_header(&cs->resp, "Connection", "close");
}

/* Answers a request refused before its body was read; libmicrohttpd then skips the body
 * and closes the connection. */
static enum MHD_Result answer_early(struct conn_state *cs)
{
	http_resp_error(&cs->resp, &cs->early);
	if (cs->early_status)
		cs->resp.status = cs->early_status;
	http_resp_header(&cs->resp, "Connection", "close");
	cs->answered = true;
	http_deadline_conn_busy(&cs->server->deadlines, deadline_of(cs->conn));
	return queue(cs->server, cs->conn, &cs->resp);
}

/* Why libmicrohttpd's view of the request cannot be trusted, as an error; 0 when it can.
 * libmicrohttpd takes the first of several Content-Length headers and waits for ever for a
 * body framed by a transfer coding it does not know, so both are refused here. */
struct framing {
	const char *content_length;
	bool conflicting_length;
	const char *transfer_encoding;
	unsigned n_transfer_encoding;
	size_t header_bytes;
	bool nul;
};

static enum MHD_Result framing_cb(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				  const char *value, size_t value_size)
{
	struct framing *f = cls;
	(void)kind;

	f->header_bytes += key_size + value_size + 4; /* "name: value\r\n" */
	if (strlen(key) != key_size || (value && strlen(value) != value_size))
		f->nul = true;
	if (!value)
		return MHD_YES;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		if (f->content_length && strcmp(f->content_length, value) != 0)
			f->conflicting_length = true;
		f->content_length = value;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->transfer_encoding = value;
		f->n_transfer_encoding++;
	}
	return MHD_YES;
}

static enum MHD_Result query_size_cb(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
				     const char *value, size_t value_size)
{
	size_t *n = cls;
	(void)kind;
	(void)key;
	(void)value;

	*n += key_size + value_size + 2; /* "&key=value" */
	return MHD_YES;
}

static int check_framing(struct conn_state *cs, struct err *e)
{
	struct framing f = {0};
	struct http_conn_sock *sock = http_conn_sock_of(cs->conn);
	int64_t n;

	if (sock && sock->nul_in_url)
		return err_set(e, ERR_INVALID, "the request URL contains a NUL byte (%%00)");
	mhd.get_connection_values_n(cs->conn, MHD_HEADER_KIND, framing_cb, &f);
	mhd.get_connection_values_n(cs->conn, MHD_GET_ARGUMENT_KIND, query_size_cb, &f.header_bytes);
	/* libmicrohttpd has room for twice the limit (http_server_start) and answers in HTML
	 * when that is full; up to there the limits are checked here, answered in JSON. */
	if (strlen(cs->req.path) > cs->server->cfg.header_bytes / 2) {
		cs->early_status = 414;
		return err_set(e, ERR_TOO_LARGE, "the request URL exceeds the limit of %zu bytes",
			       cs->server->cfg.header_bytes / 2);
	}
	if (f.header_bytes + strlen(cs->req.path) > cs->server->cfg.header_bytes) {
		cs->early_status = 431;
		return err_set(e, ERR_TOO_LARGE, "the request line and headers exceed the limit of %zu bytes",
			       cs->server->cfg.header_bytes);
	}
	if (f.nul)
		return err_set(e, ERR_INVALID, "a request header contains a NUL byte");
	if (f.transfer_encoding && (f.n_transfer_encoding > 1 || strcasecmp(f.transfer_encoding, "chunked") != 0))
		return err_set(e, ERR_INVALID,
			       "Transfer-Encoding '%.60s' is not supported: send the body "
			       "as is or with Transfer-Encoding: chunked",
			       f.transfer_encoding);
	if (f.transfer_encoding && f.content_length)
		return err_set(e, ERR_INVALID, "a request may not have both Content-Length and Transfer-Encoding");
	if (f.conflicting_length)
		return err_set(e, ERR_INVALID, "the request has several different Content-Length headers");
	if (!f.content_length)
		return 0;
	if (str_to_i64(str_trim(str_from(f.content_length)), 0, INT64_MAX, &n, "Content-Length", e))
		return -ERR_INVALID;
	if ((uint64_t)n > cs->limit)
		return err_set(e, ERR_TOO_LARGE, "request body exceeds the limit of %zu bytes", cs->limit);
	return 0;
}

/* The client's address as text into req->remote_addr, and whether it connects from this
 * host (127.0.0.0/8, ::1, ::ffff:127.x.x.x). */
static bool client_address(struct MHD_Connection *conn, struct http_request *req)
{
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	req->remote_addr[0] = 0;
	if (!sa)
		return false;
	if (sa->sa_family == AF_INET) {
		const struct in_addr *a = &((const struct sockaddr_in *)(const void *)sa)->sin_addr;
		if (!inet_ntop(AF_INET, a, req->remote_addr, sizeof req->remote_addr))
			req->remote_addr[0] = 0;
		return (ntohl(a->s_addr) >> 24) == 127;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		if (!inet_ntop(AF_INET6, a, req->remote_addr, sizeof req->remote_addr))
			req->remote_addr[0] = 0;
		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

int http_peer_uid(const struct http_request *req, uid_t *uid, struct err *e)
{
	const union MHD_ConnectionInfo *ci =
	    req->conn ? mhd.get_connection_info(req->conn, MHD_CONNECTION_INFO_CONNECTION_FD) : NULL;

	if (!ci)
		return err_set(e, ERR_INTERNAL, "the connection's socket is unknown");
	return sockdiag_peer_uid(ci->connect_fd, uid, e);
}

static struct conn_state *begin(struct http_server *s, struct MHD_Connection *conn, const char *url, const char *method)
{
	struct conn_state *cs = calloc(1, sizeof *cs);

	if (!cs)
		return NULL;
	arena_init(&cs->req.arena);
	http_resp_init(&cs->resp);
	cs->req.conn = conn;
	cs->server = s;
	cs->conn = conn;
	cs->req.method = method;
	cs->req.path = url;
	cs->req.start_ns = dt_mono_ns();
	cs->req.route_id = SIZE_MAX;
	cs->req.from_loopback = client_address(conn, &cs->req);
	metrics_http_begin();
	str_set_lit(cs->req.principal, "-");
	cs->req.content_type = mhd.lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
	cs->limit = s->cfg.body_bytes;
	if (cs->req.content_type && strncasecmp(cs->req.content_type, "multipart/", 10) == 0)
		cs->limit = s->cfg.upload_bytes;
	buf_init(&cs->req.body, cs->limit);
	buf_set_wipe(&cs->req.body); /* bodies carry secret data and store passwords */
	if (check_framing(cs, &cs->early)) {
		cs->refused = true;
		cs->too_large = cs->early.code == ERR_TOO_LARGE && !cs->early_status;
	}
	atomic_fetch_add(&s->in_flight, 1);
	return cs;
}

/* On a worker: runs the handler, then hands the connection back to its I/O thread. */
static void run_handler(void *arg)
{
	struct conn_state *cs = arg;

	cs->req.on_worker = true;
	(void)cs->server->fn(cs->server->ctx, &cs->req, &cs->resp);
	atomic_store(&cs->phase, PHASE_DONE);
	mhd.resume_connection(cs->conn);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct http_server *s = cls;
	struct conn_state *cs = *con_cls;
	(void)version;

	if (!cs) {
		cs = begin(s, conn, url, method);
		if (!cs)
			return MHD_NO;
		*con_cls = cs;
		if (cs->refused)
			return answer_early(cs);
		http_deadline_conn_headers(&s->deadlines, deadline_of(conn));
		return MHD_YES;
	}
	if (cs->answered)
		return MHD_YES;
	if (*upload_data_size) {
		if (!cs->too_large && buf_append(&cs->req.body, upload_data, *upload_data_size, NULL))
			cs->too_large = true;
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (atomic_load(&cs->phase) == PHASE_READING)
		http_deadline_conn_busy(&s->deadlines, deadline_of(conn));
	if (cs->too_large) {
		answer_too_large(cs);
	} else if (atomic_load(&cs->phase) == PHASE_READING) {
		int how = s->fn(s->ctx, &cs->req, &cs->resp);

		if (how == HTTP_HANDLED) {
			cs->answered = true;
			return queue(s, conn, &cs->resp);
		}
		atomic_store(&cs->phase, PHASE_RUNNING);
		mhd.suspend_connection(conn);
		if (workq_push(how == HTTP_DEFER_APART ? s->apart : s->workers, run_handler, cs) == 0)
			return MHD_YES;
		mhd.resume_connection(conn);
		return MHD_NO;
	} else if (atomic_load(&cs->phase) != PHASE_DONE) {
		return MHD_YES;
	}
	cs->answered = true;
	return queue(s, conn, &cs->resp);
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *s = cls;
	struct http_conn_sock *sock = *socket_context;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

		sock = calloc(1, sizeof *sock);
		if (sock && ci)
			sock->deadline = http_deadline_conn_started(&s->deadlines, ci->connect_fd);
		*socket_context = sock;
		return;
	}
	if (!sock)
		return;
	http_deadline_conn_closed(&s->deadlines, sock->deadline);
	free(sock);
	*socket_context = NULL;
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* libmicrohttpd's percent-decoding of the path and query, which also notes a decoded NUL:
 * the C strings handed on would end there, so such a request is refused (check_framing). */
static size_t unescape(void *cls, struct MHD_Connection *conn, char *uri)
{
	char *r = uri, *w = uri;
	bool nul = false;
	(void)cls;

	while (*r) {
		int hi, lo;

		if (r[0] == '%' && (hi = hex_val(r[1])) >= 0 && (lo = hex_val(r[2])) >= 0) {
			*w = (char)(hi * 16 + lo);
			nul |= *w == '\0';
			w++;
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
	if (nul) {
		struct http_conn_sock *sock = http_conn_sock_of(conn);

		if (sock)
			atomic_store(&sock->nul_in_url, true);
	}
	return (size_t)(w - uri);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct http_server *s = cls;
	struct conn_state *cs = *con_cls;
	char fields[1024];
	int64_t us;
	bool heavy;

	if (!cs)
		return;
	fields[0] = '\0';
	us = (dt_mono_ns() - cs->req.start_ns) / 1000;
	log_kv(fields, sizeof fields, "method", cs->req.method);
	log_kv(fields, sizeof fields, "path", cs->req.path);
	log_kv_int(fields, sizeof fields, "status", cs->answered ? cs->resp.status : 0);
	log_kv_int(fields, sizeof fields, "bytes", (long long)(cs->resp.fd_len ? cs->resp.fd_len : cs->resp.len));
	log_kv_int(fields, sizeof fields, "duration_us", (long long)us);
	log_kv(fields, sizeof fields, "principal", cs->req.principal);
	if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
		log_kv(fields, sizeof fields, "aborted", "true");
	log_line(LOG_INFO, "request", fields);
	metrics_http(cs->req.route_id, cs->answered ? cs->resp.status : 0, us);
	{
		struct http_conn_sock *sock = http_conn_sock_of(conn);

		if (sock) {
			atomic_store(&sock->nul_in_url, false);
			http_deadline_conn_next(&s->deadlines, sock->deadline);
		}
	}
	heavy = cs->req.heavy || cs->req.body.cap >= TRIM_AFTER_BYTES;
	http_resp_cleanup(&cs->resp);
	buf_cleanup(&cs->req.body);
	arena_cleanup(&cs->req.arena);
	free(cs);
	if (heavy)
		give_back_memory();
	*con_cls = NULL;
	atomic_fetch_sub(&s->in_flight, 1);
}

/* libmicrohttpd's room beyond header_bytes (see http_server_start). */
#define HEADER_ROOM 16384

struct http_server *http_server_start(const struct http_server_cfg *cfg, http_handler fn, void *ctx, struct err *e)
{
	struct sockaddr_storage ss;
	struct http_server *s;
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;

	memset(&ss, 0, sizeof ss);
	if (mhd_load(e) || parse_listen(cfg->listen, &ss, e))
		return NULL;
	s = calloc(1, sizeof *s);
	if (!s) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	s->cfg = *cfg;
	s->fn = fn;
	s->ctx = ctx;
	s->workers = workq_new(cfg->threads, "http-handler", e);
	if (!s->workers) {
		free(s);
		return NULL;
	}
	s->apart = workq_new(cfg->apart_threads ? cfg->apart_threads : 2, "http-fetch", e);
	if (!s->apart) {
		workq_free(s->workers);
		free(s);
		return NULL;
	}
	if (http_streams_init(&s->streams, e)) {
		workq_free(s->workers);
		workq_free(s->apart);
		free(s);
		return NULL;
	}
	if (http_deadlines_init(&s->deadlines, cfg->header_s ? cfg->header_s : 10, cfg->request_s ? cfg->request_s : 60,
				e)) {
		http_streams_close(&s->streams);
		http_streams_cleanup(&s->streams);
		workq_free(s->workers);
		workq_free(s->apart);
		free(s);
		return NULL;
	}
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	/* A pool of one is no pool: libmicrohttpd then logs a warning that means nothing to an
	 * operator, so the option is only passed for two or more (else the timeout is passed
	 * twice, which is harmless).  A connection's memory holds its request line and headers
	 * and the answer's headers; libmicrohttpd 0.9.x zeroes all of it after every request
	 * (and half of it again when it moves the read buffer), so it is the limit plus room
	 * for the answer and for headers a little over the limit (answered 431 here, in JSON),
	 * not more: at twice the limit the zeroing cost more than the rest of an authenticated
	 * GET (bench/RESULTS.md, 2026-11-27). */
	s->d = mhd.start_daemon(
	    flags, 0, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&ss, cfg->io_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_CONNECTION_TIMEOUT,
	    cfg->io_threads > 1 ? cfg->io_threads : cfg->timeout_s,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)cfg->max_connections, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
	    (unsigned)(cfg->per_address_connections ? cfg->per_address_connections : cfg->max_connections),
	    MHD_OPTION_CONNECTION_TIMEOUT, cfg->timeout_s,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, cfg->header_bytes + HEADER_ROOM, MHD_OPTION_NOTIFY_COMPLETED,
	    on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_UNESCAPE_CALLBACK, unescape,
	    NULL, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_END);
	if (!s->d) {
		err_set(e, ERR_INTERNAL, "cannot listen on %s (address in use or not available)", cfg->listen);
		workq_free(s->workers);
		workq_free(s->apart);
		http_streams_close(&s->streams);
		http_streams_cleanup(&s->streams);
		http_deadlines_cleanup(&s->deadlines);
		free(s);
		return NULL;
	}
	info = mhd.get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
	s->port = info ? info->port : 0;
	return s;
}

int http_listen_check(const char *listen, struct err *e)
{
	struct sockaddr_storage ss;

	return parse_listen(listen, &ss, e);
}

int http_listen_probe(const char *listen, struct err *e)
{
	struct sockaddr_storage ss;
	int fd, one = 1, rc = 0;

	memset(&ss, 0, sizeof ss);
	if (parse_listen(listen, &ss, e))
		return -ERR_INVALID;
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return err_set(e, ERR_INTERNAL, "cannot listen on %s: %s", listen, strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&ss,
		 ss.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) != 0)
		rc = err_set(e, ERR_INTERNAL, "cannot listen on %s: %s%s", listen, strerror(errno),
			     errno == EADDRINUSE ? " (is another server running? use --listen to pick another port)"
						 : "");
	close(fd);
	return rc;
}

uint16_t http_server_port(const struct http_server *s)
{
	return s->port;
}

void http_server_stop(struct http_server *s, unsigned grace_ms)
{
	MHD_socket fd;
	int64_t deadline = dt_mono_ns() + (int64_t)grace_ms * 1000000;

	if (!s)
		return;
	fd = mhd.quiesce_daemon(s->d);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	/* Streams may wait (suspended) for a long time: end them now. */
	http_streams_close(&s->streams);
	while (atomic_load(&s->in_flight) > 0 && dt_mono_ns() < deadline) {
		struct timespec ts = {0, 10 * 1000000};
		nanosleep(&ts, NULL);
	}
	if (atomic_load(&s->in_flight) > 0)
		LOG_W("stopping with %d requests still in flight after %u ms", atomic_load(&s->in_flight), grace_ms);
	/* Finishes every handler (so no connection stays suspended), then closes them all. */
	workq_free(s->workers);
	workq_free(s->apart);
	/* Streams that started during the grace period were born closing; wake any left. */
	http_streams_close(&s->streams);
	mhd.stop_daemon(s->d);
	http_deadlines_cleanup(&s->deadlines);
	http_streams_cleanup(&s->streams);
	free(s);
}
