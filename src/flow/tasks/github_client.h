#ifndef ACCORD_FLOW_TASKS_GITHUB_CLIENT_H
#define ACCORD_FLOW_TASKS_GITHUB_CLIENT_H

#include <stdbool.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* Calls of GitHub's REST API for the `github` task, over libcurl (flow/tasks/curl_api.h),
 * as Concord's GitHub plugin makes them: the API at apiUrl's scheme, host and port with
 * "/api/v3" (GitHub Enterprise), or https://api.github.com for github.com; headers
 * "Accept: application/vnd.github+json" and "Authorization: Bearer <token>"; JSON bodies;
 * GET, PUT and DELETE tried again on 429, 500, 502 and 503 (after Retry-After, else 1, 2,
 * 4, 8 s; five attempts in all).  The token is masked in the log and events from the moment
 * it is read and never appears in a message. */

struct gh {
	struct task_ctx *c;
	char *base;  /* the API's root, no trailing slash */
	char *token; /* wiped when done */
	/* Not NULL: the retry warnings go here instead of the process log (calls made off the
	 * VM's thread). */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

/* Sets up g for calls to api_url (NULL: https://api.github.com; with raw, the URL itself is
 * the root, as Concord's App installation calls use it) with token (copied, masked from
 * now on).  Fails with e set on a bad URL; gh_cleanup is needed either way. */
int gh_init(struct gh *g, struct task_ctx *c, const char *api_url, const char *token, bool raw, struct err *e) WUR;
void gh_cleanup(struct gh *g);

/* One call: method, path (from "/", segments escaped with gh_escape), body (BORROWED; NULL:
 * none).  0 with *resp the parsed answer (NEW; json null when the body is empty) on a 2xx;
 * < 0 with e set ("GitHub API error: <status> - <message>") otherwise, *status the HTTP
 * status (0 when no answer came). */
int gh_call(struct gh *g, const char *method, const char *path, json_t *body, json_t **resp, long *status,
	    struct err *e) WUR;

/* The pages of a list in turn (GET path with per_page, then its Link rel="next" below the
 * API's root, at most 100 pages): page(ctx, items BORROWED) returns false to stop. */
int gh_pages(struct gh *g, const char *path, int per_page, bool (*page)(void *ctx, json_t *items), void *ctx,
	     struct err *e) WUR;

/* Every page of a list (GET path with per_page=100, then its Link rel="next", at most 100
 * pages): *out a NEW array of all items. */
int gh_list(struct gh *g, const char *path, json_t **out, struct err *e) WUR;

/* s escaped for a URL path segment (NEW); NULL when out of memory. */
char *gh_escape(const char *s);

#endif
