/* GET /api/v1/process/{id}/log: a process log, whole, as one byte range (RFC 9110, plus
 * the spec's bare "a-b"), or followed while it is written.  See docs/api.md "Process log".
 *
 * Every answer is a stream (http_resp_stream) that reads the store block by block on the
 * connection's I/O thread, so a large log is never held in memory.  A follower subscribes
 * to the log watch before its first read; when it has sent everything there is, it
 * sleeps (its connection suspended, no thread held) until the log writer or the end of the
 * process wakes it.  So N followers of one log cost N reads per append, no thread each.
 * Followers are counted (api/log_followers.h): one over a limit is answered 429, and a
 * follower's slot is given back when its stream is freed — also when its client hung up
 * (http/stream.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/log_followers.h"
#include "api/process_access.h"
#include "api/routes.h"
#include "base/log.h"
#include "base/str.h"
#include "http/range.h"
#include "queue/supervise/logwatch.h"
#include "store/process_logs.h"

#define FOLLOW_END UINT64_MAX

struct log_reader {
	struct store *store;
	char id[UUID_STR_LEN];
	uint64_t off; /* next byte to send */
	uint64_t end; /* one past the last byte to send; FOLLOW_END when following */
	struct logwatch_sub *sub;
	struct buf chunk;
	char user_id[UUID_STR_LEN]; /* the follower's, when it holds a slot of log_followers */
};

static void on_log_change(void *stream)
{
	http_stream_wake(stream);
}

static int reader_start(void *ctx, struct http_stream *s)
{
	struct log_reader *r = ctx;

	if (r->end != FOLLOW_END)
		return 0;
	r->sub = logwatch_subscribe(r->id, on_log_change, s);
	return r->sub ? 0 : -1;
}

static void reader_free(void *ctx)
{
	struct log_reader *r = ctx;

	logwatch_unsubscribe(r->sub);
	if (r->user_id[0])
		log_followers_leave(r->user_id, r->id);
	buf_cleanup(&r->chunk);
	free(r);
}

/* Up to max bytes at r->off into buf: the count, or -1. */
static ssize_t read_block(struct log_reader *r, struct store_conn *db, char *buf, size_t max, struct err *e)
{
	uint64_t want = r->end - r->off < max ? r->end - r->off : max;

	buf_reset(&r->chunk);
	if (store_process_log_read(db, r->id, r->off, want, &r->chunk, e))
		return -1;
	if (r->chunk.len)
		memcpy(buf, r->chunk.data, r->chunk.len);
	r->off += r->chunk.len;
	return (ssize_t)r->chunk.len;
}

/* True when the process can write no more: final, suspended, or gone. */
static bool writer_done(struct store_conn *db, const char *id)
{
	struct process p;
	struct err e;
	bool done;

	if (store_process_get(db, id, &p, &e))
		return true;
	done = (PS_TERMINAL | PS_BIT(PS_SUSPENDED)) & PS_BIT(p.status);
	store_process_cleanup(&p);
	return done;
}

static ssize_t read_some(struct log_reader *r, char *buf, size_t max)
{
	struct err e;
	struct store_conn *db = store_conn(r->store, &e);
	ssize_t n;

	if (!db)
		goto fail;
	if (r->off >= r->end)
		return HTTP_STREAM_END;
	if ((n = read_block(r, db, buf, max, &e)) < 0)
		goto fail;
	if (n > 0)
		return n;
	if (r->end != FOLLOW_END) {
		err_set(&e, ERR_INTERNAL, "log ends before byte %llu", (unsigned long long)r->off);
		goto fail;
	}
	/* Nothing new.  The status is read before the log is read once more, so that bytes
	 * written just before the process ended are still sent. */
	if (!writer_done(db, r->id))
		return 0;
	if ((n = read_block(r, db, buf, max, &e)) < 0)
		goto fail;
	return n > 0 ? n : HTTP_STREAM_END;
fail:
	LOG_E("log of %s: %s", r->id, e.msg);
	return HTTP_STREAM_ERROR;
}

static ssize_t reader_read(void *ctx, char *buf, size_t max)
{
	struct log_reader *r = ctx;
	ssize_t n = read_some(r, buf, max);

	store_conn_release(r->store); /* as after a request (api_dispatch) */
	return n;
}

static const struct http_stream_ops reader_ops = {reader_start, reader_read, reader_free};

static int answer(struct api_call *c, const char *id, const struct http_range *rg, uint64_t size, bool follow)
{
	struct log_reader *r;
	char range[96];

	/* at most 70 bytes: three 20-digit numbers */
	if (!follow && !rg->whole &&
	    str_fmt(range, sizeof range, "bytes %llu-%llu/%llu", (unsigned long long)rg->first,
		    (unsigned long long)rg->last, (unsigned long long)size))
		return api_fail(c, ERR_INTERNAL, "Content-Range too long");
	if (!(r = calloc(1, sizeof *r)))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	r->store = c->app->store;
	if (str_fmt(r->id, sizeof r->id, "%s", id)) { /* api_process_load found it: an instance id */
		free(r);
		return api_fail(c, ERR_INTERNAL, "process id too long: %s", id);
	}
	buf_init(&r->chunk, 0);
	r->off = rg->whole ? 0 : rg->first;
	if (follow) {
		int rc = log_followers_enter(c->who.user.id, r->id, &c->err);

		if (rc) {
			reader_free(r);
			return rc;
		}
		memcpy(r->user_id, c->who.user.id, sizeof r->user_id); /* now reader_free gives the slot back */
		r->end = FOLLOW_END;
		http_resp_stream(c->resp, 200, "text/plain", &reader_ops, r, HTTP_STREAM_UNKNOWN_LEN);
	} else if (rg->whole) {
		r->end = size;
		http_resp_stream(c->resp, 200, "text/plain", &reader_ops, r, size);
	} else {
		r->end = rg->last + 1;
		http_resp_stream(c->resp, 206, "text/plain", &reader_ops, r, r->end - r->off);
		http_resp_header(c->resp, "Content-Range", range);
	}
	http_resp_header(c->resp, "Accept-Ranges", "bytes");
	return 0;
}

static int get_log(struct api_call *c)
{
	const char *id = api_param(c, "id");
	struct http_range rg;
	struct process p;
	uint64_t size;
	bool follow = false;
	int rc;

	if ((rc = api_query_bool(c, "follow", &follow)))
		return rc;
	if ((rc = api_process_load(c, id, PROC_READ, &p)))
		return rc;
	store_process_cleanup(&p);
	if ((rc = store_process_log_size(c->db, id, &size, &c->err)))
		return rc;
	rc = http_range_parse(http_header(c->req, "Range"), size, follow, &rg, &c->err);
	if (rc == -ERR_RANGE) {
		char range[64];
		if (str_fmt(range, sizeof range, "bytes */%llu", (unsigned long long)size) == 0) /* 26 bytes at most */
			http_resp_header(c->resp, "Content-Range", range);
	}
	if (rc)
		return rc;
	return answer(c, id, &rg, size, follow);
}

static const struct api_doc doc_log = {
    .summary = "The log of a process; Range: bytes=a-b (206), follow=true streams until the process ends",
    .params =
	(const struct api_param_doc[]){
	    DOC_PROCESS_ID, {"follow", "boolean", "keep the answer open and send new lines as they come"}, {0}},
    .response = "{'type':'string'}",
    .response_type = "text/plain",
    .errors = "400 403 404 429",
};

const struct api_route api_process_log_routes[] = {
    {"GET", "/api/v1/process/{id}/log", get_log, 0, &doc_log},
    {0},
};
