#include "http/router.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGMENTS 16

struct seg {
	const char *p; /* literal text or parameter name */
	size_t len;
	bool param, rest;
};

struct compiled {
	struct http_route route;
	struct seg segs[MAX_SEGMENTS];
	size_t n_segs;
	int score;
};

struct index_list {
	size_t *at;
	size_t n, cap;
};

/* routes in the order they were added; their indexes again by segment count (a route with
 * {x*} in rest instead), in that order too: a path is held only against the routes of its
 * own count and the {x*} ones, a tenth of them (each request scanned all ~180 before). */
struct router {
	struct compiled *routes;
	size_t n, cap;
	struct index_list by_n[MAX_SEGMENTS + 1], rest;
};

struct router *router_new(void)
{
	return calloc(1, sizeof(struct router));
}

void router_free(struct router *r)
{
	if (!r)
		return;
	for (size_t i = 0; i <= MAX_SEGMENTS; i++)
		free(r->by_n[i].at);
	free(r->rest.at);
	free(r->routes);
	free(r);
}

static int list_push(struct index_list *l, size_t i, struct err *e)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		size_t *p = realloc(l->at, cap * sizeof *p);
		if (!p)
			return err_set(e, ERR_INTERNAL, "out of memory");
		l->at = p;
		l->cap = cap;
	}
	l->at[l->n++] = i;
	return 0;
}

static int compile(const char *pattern, struct compiled *c, struct err *e)
{
	const char *p = pattern;
	size_t n_params = 0;

	c->n_segs = 0;
	c->score = 0;
	if (*p != '/')
		return err_set(e, ERR_INVALID, "route '%s' must start with /", pattern);
	while (*p == '/') {
		const char *start = ++p;
		struct seg *s;
		size_t len = strcspn(start, "/");
		if (c->n_segs == MAX_SEGMENTS)
			return err_set(e, ERR_INVALID, "route '%s' has too many segments", pattern);
		s = &c->segs[c->n_segs++];
		*s = (struct seg){start, len, false, false};
		if (len >= 2 && start[0] == '{' && start[len - 1] == '}') {
			s->param = true;
			s->p = start + 1;
			s->len = len - 2;
			if (s->len && s->p[s->len - 1] == '*') {
				s->rest = true;
				s->len--;
			}
			if (++n_params > HTTP_MAX_PARAMS)
				return err_set(e, ERR_INVALID, "route '%s' has too many parameters", pattern);
		} else if (n_params == 0) {
			c->score++;
		}
		p = start + len;
		if (s->rest && *p)
			return err_set(e, ERR_INVALID, "route '%s': {x*} must be last", pattern);
	}
	return 0;
}

int router_add(struct router *r, const struct http_route *route, struct err *e)
{
	struct compiled c;
	int rc;

	memset(&c, 0, sizeof c);
	c.route = *route;
	if ((rc = compile(route->pattern, &c, e)))
		return rc;
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->routes[i].route.pattern, route->pattern) == 0 &&
		    strcmp(r->routes[i].route.method, route->method) == 0)
			return err_set(e, ERR_INVALID, "duplicate route %s %s", route->method, route->pattern);
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		struct compiled *p = realloc(r->routes, cap * sizeof *p);
		if (!p)
			return err_set(e, ERR_INTERNAL, "out of memory");
		r->routes = p;
		r->cap = cap;
	}
	if (list_push(c.n_segs && c.segs[c.n_segs - 1].rest ? &r->rest : &r->by_n[c.n_segs], r->n, e))
		return -ERR_INTERNAL;
	r->routes[r->n++] = c;
	return 0;
}

/* The next candidate for a path of n segments, in the order of adding: the smaller of the
 * two lists' next indexes.  False when both are done. */
static bool next_candidate(const struct router *r, size_t n, size_t *ia, size_t *ib, size_t *i)
{
	const struct index_list *a = n <= MAX_SEGMENTS ? &r->by_n[n] : NULL, *b = &r->rest;
	bool from_a = a && *ia < a->n && (*ib >= b->n || a->at[*ia] < b->at[*ib]);

	if (from_a)
		*i = a->at[(*ia)++];
	else if (*ib < b->n)
		*i = b->at[(*ib)++];
	else
		return false;
	return true;
}

/* The path split once into segments (slices of the path). */
struct split {
	struct seg segs[MAX_SEGMENTS + 1];
	size_t n;
	bool trailing_slash;
	bool too_long;
};

static void split_path(const char *path, struct split *sp)
{
	const char *p = path;

	sp->n = 0;
	sp->trailing_slash = false;
	sp->too_long = false;
	while (*p == '/') {
		const char *start = ++p;
		size_t len = strcspn(start, "/");
		if (len == 0 && *start == '\0' && sp->n > 0) {
			sp->trailing_slash = true;
			break;
		}
		if (sp->n == MAX_SEGMENTS + 1) {
			/* No pattern has this many segments: only a {x*} route can match, and it
			 * takes the rest of the path as one value (inventory item paths). */
			size_t n = strlen(path);

			sp->trailing_slash = n > 1 && path[n - 1] == '/';
			return;
		}
		sp->segs[sp->n++] = (struct seg){start, len, false, false};
		p = start + len;
	}
	if (*p != '\0')
		sp->too_long = true; /* not an absolute path */
}

/* Matches the split path against c; on success (and when fill) sets req's parameters. */
static bool match(const struct compiled *c, const struct split *sp, struct http_request *req, bool fill)
{
	const struct seg *last = c->n_segs ? &c->segs[c->n_segs - 1] : NULL;
	bool rest = last && last->rest;
	size_t k = 0;

	if (sp->too_long || (rest ? sp->n < c->n_segs : sp->n != c->n_segs))
		return false;
	for (size_t i = 0; i < c->n_segs; i++) {
		const struct seg *s = &c->segs[i], *in = &sp->segs[i];
		if (!s->param && (in->len != s->len || memcmp(in->p, s->p, s->len) != 0))
			return false;
		/* An empty segment is no value, but for a {x*} parameter whose rest starts with
		 * it: "data//a" (Concord's clients send "data/%2Fa") is the item path "/a". */
		if (s->param && in->len == 0 && !(s->rest && in->p[0] == '/' && in->p[1] != '\0'))
			return false;
	}
	if (!fill)
		return true;
	req->n_params = 0;
	for (size_t i = 0; i < c->n_segs; i++) {
		const struct seg *s = &c->segs[i], *in = &sp->segs[i];
		size_t len = in->len;
		if (!s->param)
			continue;
		if (s->rest) /* the rest of the path, slashes included */
			len = strlen(in->p) - (sp->trailing_slash ? 1 : 0);
		req->param_names[k] = arena_strndup(&req->arena, s->p, s->len);
		req->param_values[k] = arena_strndup(&req->arena, in->p, len);
		req->n_params = ++k;
	}
	return true;
}

const struct http_route *router_match(const struct router *r, struct http_request *req, char *allow, size_t allow_cap,
				      struct err *e)
{
	const struct compiled *best = NULL;
	size_t pos = 0;
	bool path_known = false;

	struct split sp;
	size_t ia = 0, ib = 0, i;

	split_path(req->path, &sp);
	if (allow_cap)
		allow[0] = '\0';
	while (next_candidate(r, sp.n, &ia, &ib, &i)) {
		const struct compiled *c = &r->routes[i];
		if (!match(c, &sp, req, false))
			continue;
		path_known = true;
		if (strcmp(c->route.method, req->method) != 0) {
			if (pos < allow_cap && !strstr(allow, c->route.method)) {
				int n =
				    snprintf(allow + pos, allow_cap - pos, "%s%s", pos ? ", " : "", c->route.method);
				if (n > 0)
					pos += (size_t)n;
			}
			continue;
		}
		if (!best || c->score > best->score)
			best = c;
	}
	if (best) {
		match(best, &sp, req, true);
		return &best->route;
	}
	if (path_known)
		err_set(e, ERR_METHOD, "method %s is not allowed on %.200s (allowed: %s)", req->method, req->path,
			allow);
	else
		err_set(e, ERR_NOT_FOUND, "no such endpoint: %s %.200s", req->method, req->path);
	return NULL;
}
