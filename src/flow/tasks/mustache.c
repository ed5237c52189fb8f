#include "flow/tasks/mustache.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/oom.h"
#include "flow/tasks/task.h"

/* The template is cut into tokens first (text runs and tags, sections knowing where they
 * close), then rendered by walking token ranges with a stack of contexts. */

#define MUSTACHE_MAX_TOKENS 100000
#define MUSTACHE_MAX_DEPTH 64
#define MUSTACHE_MAX_NAME 256

enum tok_kind { TOK_TEXT, TOK_VAR, TOK_RAW, TOK_SECTION, TOK_INVERTED, TOK_CLOSE, TOK_COMMENT };

struct tok {
	enum tok_kind kind;
	const char *p; /* text, or the tag's name (trimmed) */
	size_t len;
	size_t end; /* TOK_SECTION, TOK_INVERTED: index of the matching TOK_CLOSE */
	size_t at;  /* offset in the template: for error lines */
};

struct toks {
	struct tok *v;
	size_t n, cap;
};

struct render {
	const struct toks *t;
	json_t *stack[MUSTACHE_MAX_DEPTH];
	size_t depth;
	struct buf out;
};

static int line_of(const char *tpl, size_t at)
{
	int line = 1;
	for (size_t i = 0; i < at; i++)
		line += tpl[i] == '\n';
	return line;
}

static int push_tok(struct toks *t, struct tok k, struct err *e)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct tok *v;
		if (cap > MUSTACHE_MAX_TOKENS)
			return err_set(e, ERR_TOO_LARGE, "template: more than %d tags", MUSTACHE_MAX_TOKENS);
		if (!(v = realloc(t->v, cap * sizeof *v)))
			return oom_fail(e);
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = k;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Whether [from, to) holds only blanks. */
static bool blank_run(const char *p, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (!is_blank(p[i]))
			return false;
	return true;
}

static void trim(const char **p, size_t *len)
{
	while (*len && (is_blank(**p) || **p == '\n'))
		(*p)++, (*len)--;
	while (*len && (is_blank((*p)[*len - 1]) || (*p)[*len - 1] == '\n'))
		(*len)--;
}

/* Reads the tag that starts at tpl[at] ("{{"): its kind, name and where it ends. */
static int read_tag(const char *tpl, size_t len, size_t at, struct tok *k, size_t *after, struct err *e)
{
	bool triple = at + 2 < len && tpl[at + 2] == '{';
	const char *close = triple ? "}}}" : "}}", *p = tpl + at + (triple ? 3 : 2);
	const char *end = NULL;
	size_t rest = len - (size_t)(p - tpl), cl = strlen(close);

	for (size_t i = 0; i + cl <= rest && !end; i++)
		if (memcmp(p + i, close, cl) == 0)
			end = p + i;
	if (!end)
		return err_set(e, ERR_INVALID, "template line %d: '{{' without '%s'", line_of(tpl, at), close);
	*after = (size_t)(end - tpl) + cl;
	k->at = at;
	k->p = p;
	k->len = (size_t)(end - p);
	trim(&k->p, &k->len);
	k->kind = triple ? TOK_RAW : TOK_VAR;
	if (triple || k->len == 0)
		return k->len ? 0 : err_set(e, ERR_INVALID, "template line %d: empty tag", line_of(tpl, at));
	switch (k->p[0]) {
	case '#': k->kind = TOK_SECTION; break;
	case '^': k->kind = TOK_INVERTED; break;
	case '/': k->kind = TOK_CLOSE; break;
	case '!': k->kind = TOK_COMMENT; break;
	case '&': k->kind = TOK_RAW; break;
	case '>':
	case '=':
	case '{':
		return err_set(e, ERR_INVALID, "template line %d: '{{%c' (partials, delimiter changes) is not supported",
			       line_of(tpl, at), k->p[0]);
	default: return 0;
	}
	k->p++, k->len--;
	trim(&k->p, &k->len);
	if (k->kind != TOK_COMMENT && k->len == 0)
		return err_set(e, ERR_INVALID, "template line %d: a tag without a name", line_of(tpl, at));
	return 0;
}

/* A block tag alone on its line takes the line: the blanks before it (cut from the text
 * token just added) and the rest of the line after it. */
static void standalone(const char *tpl, size_t len, size_t at, size_t *after, struct toks *t)
{
	size_t ls = at, le = *after;
	while (ls > 0 && tpl[ls - 1] != '\n')
		ls--;
	while (le < len && tpl[le] != '\n')
		le++;
	if (!blank_run(tpl, ls, at) || !blank_run(tpl, *after, le))
		return;
	if (t->n && t->v[t->n - 1].kind == TOK_TEXT) {
		struct tok *prev = &t->v[t->n - 1];
		size_t start = (size_t)(prev->p - tpl);
		prev->len = ls > start ? ls - start : 0;
	}
	*after = le < len ? le + 1 : le;
}

/* Links sections to their closing tags; a stray or mismatched close is an error. */
static int link_sections(const char *tpl, struct toks *t, struct err *e)
{
	size_t open[MUSTACHE_MAX_DEPTH], n = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct tok *k = &t->v[i];
		if (k->kind == TOK_SECTION || k->kind == TOK_INVERTED) {
			if (n == MUSTACHE_MAX_DEPTH)
				return err_set(e, ERR_INVALID, "template line %d: sections nested deeper than %d",
					       line_of(tpl, k->at), MUSTACHE_MAX_DEPTH);
			open[n++] = i;
		} else if (k->kind == TOK_CLOSE) {
			struct tok *o = n ? &t->v[open[n - 1]] : NULL;
			if (!o || o->len != k->len || memcmp(o->p, k->p, k->len) != 0)
				return err_set(e, ERR_INVALID, "template line %d: {{/%.*s}} closes no open section",
					       line_of(tpl, k->at), (int)(k->len > 64 ? 64 : k->len), k->p);
			o->end = i;
			n--;
		}
	}
	if (n)
		return err_set(e, ERR_INVALID, "template line %d: section '%.*s' is not closed",
			       line_of(tpl, t->v[open[n - 1]].at),
			       (int)(t->v[open[n - 1]].len > 64 ? 64 : t->v[open[n - 1]].len), t->v[open[n - 1]].p);
	return 0;
}

static int tokenize(const char *tpl, size_t len, struct toks *t, struct err *e)
{
	size_t pos = 0;
	while (pos < len) {
		const char *o = NULL;
		size_t at, after = 0; /* set by read_tag; 0 for the release build's -Wmaybe-uninitialized */
		struct tok k = {0};
		for (size_t i = pos; i + 1 < len && !o; i++)
			if (tpl[i] == '{' && tpl[i + 1] == '{')
				o = tpl + i;
		at = o ? (size_t)(o - tpl) : len;
		if (at > pos && push_tok(t, (struct tok){TOK_TEXT, tpl + pos, at - pos, 0, pos}, e) < 0)
			return -1;
		if (!o)
			break;
		if (read_tag(tpl, len, at, &k, &after, e) < 0)
			return -1;
		if (k.kind == TOK_SECTION || k.kind == TOK_INVERTED || k.kind == TOK_CLOSE || k.kind == TOK_COMMENT)
			standalone(tpl, len, at, &after, t);
		if (push_tok(t, k, e) < 0)
			return -1;
		pos = after;
	}
	return link_sections(tpl, t, e);
}

/* The value of name in the contexts (BORROWED), or NULL. */
static json_t *lookup(const struct render *r, const char *p, size_t len)
{
	char seg[MUSTACHE_MAX_NAME];
	json_t *v = NULL;
	size_t at = 0;
	bool first = true;

	if (len == 1 && p[0] == '.')
		return r->depth ? r->stack[r->depth - 1] : NULL;
	while (at <= len) {
		const char *dot = memchr(p + at, '.', len - at);
		size_t n = dot ? (size_t)(dot - (p + at)) : len - at;
		if (n >= sizeof seg)
			return NULL;
		memcpy(seg, p + at, n);
		seg[n] = '\0';
		if (first) {
			for (size_t i = r->depth; i-- > 0 && !v;)
				v = json_object_get(r->stack[i], seg);
			first = false;
		} else {
			v = json_object_get(v, seg);
		}
		if (!v)
			return NULL;
		at += n + 1;
	}
	return v;
}

static bool falsy(const json_t *v)
{
	return !v || json_is_null(v) || json_is_false(v) || (json_is_string(v) && json_string_length(v) == 0) ||
	       (json_is_array(v) && json_array_size(v) == 0);
}

static int put_escaped(struct buf *b, const char *s, struct err *e)
{
	for (; *s; s++) {
		const char *ent = NULL;
		switch (*s) {
		case '&': ent = "&amp;"; break;
		case '<': ent = "&lt;"; break;
		case '>': ent = "&gt;"; break;
		case '"': ent = "&quot;"; break;
		case '\'': ent = "&#39;"; break;
		case '`': ent = "&#96;"; break;
		case '=': ent = "&#61;"; break;
		default: break;
		}
		if ((ent ? buf_append_str(b, ent, e) : buf_append_char(b, *s, e)) < 0)
			return -1;
	}
	return 0;
}

static int put_value(struct render *r, const struct tok *k, struct err *e)
{
	json_t *v = lookup(r, k->p, k->len);
	char *text;
	int rc;
	if (!v || json_is_null(v))
		return 0;
	if (!(text = task_text(v)))
		return oom_fail(e);
	rc = k->kind == TOK_RAW ? buf_append_str(&r->out, text, e) : put_escaped(&r->out, text, e);
	free(text);
	return rc;
}

static int render_range(struct render *r, size_t from, size_t to, struct err *e);

static int render_with(struct render *r, json_t *top, size_t from, size_t to, struct err *e)
{
	int rc;
	if (r->depth == MUSTACHE_MAX_DEPTH)
		return err_set(e, ERR_INVALID, "template: sections nested deeper than %d", MUSTACHE_MAX_DEPTH);
	r->stack[r->depth++] = top;
	rc = render_range(r, from, to, e);
	r->depth--;
	return rc;
}

static int render_section(struct render *r, const struct tok *k, size_t i, struct err *e)
{
	json_t *v = lookup(r, k->p, k->len), *item;
	size_t n;
	if (k->kind == TOK_INVERTED)
		return falsy(v) ? render_range(r, i + 1, k->end, e) : 0;
	if (falsy(v))
		return 0;
	if (!json_is_array(v))
		return render_with(r, v, i + 1, k->end, e);
	json_array_foreach(v, n, item)
	{
		if (render_with(r, item, i + 1, k->end, e) < 0)
			return -1;
	}
	return 0;
}

static int render_range(struct render *r, size_t from, size_t to, struct err *e)
{
	for (size_t i = from; i < to; i++) {
		const struct tok *k = &r->t->v[i];
		int rc = 0;
		switch (k->kind) {
		case TOK_TEXT: rc = buf_append(&r->out, k->p, k->len, e); break;
		case TOK_VAR:
		case TOK_RAW: rc = put_value(r, k, e); break;
		case TOK_SECTION:
		case TOK_INVERTED:
			rc = render_section(r, k, i, e);
			i = k->end;
			break;
		case TOK_CLOSE:
		case TOK_COMMENT: break;
		}
		if (rc < 0)
			return -1;
	}
	return 0;
}

char *mustache_render(const char *tpl, size_t len, json_t *scope, size_t max, size_t *out_len, struct err *e)
{
	struct toks t = {0};
	struct render r = {.t = &t};
	char *res = NULL;

	buf_init(&r.out, max);
	if (tokenize(tpl, len, &t, e) == 0) {
		r.stack[r.depth++] = scope;
		if (render_range(&r, 0, t.n, e) == 0)
			res = buf_detach(&r.out, out_len);
		else if (e->code == ERR_TOO_LARGE)
			err_set(e, ERR_TOO_LARGE, "template: the message would be larger than %zu bytes", max);
	}
	buf_cleanup(&r.out);
	free(t.v);
	return res;
}
