#include "flow/yaml.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/limits.h"
#include "base/oom.h"
#include "base/str.h"

#define YAML_MAX_DEPTH 256

struct anchor {
	char *name;
	struct ynode *node;
	struct anchor *next;
};

struct builder {
	struct ydoc *d;
	struct ynode *stack[YAML_MAX_DEPTH];
	size_t cap[YAML_MAX_DEPTH];
	size_t fill[YAML_MAX_DEPTH];
	char *anchors_of[YAML_MAX_DEPTH];
	size_t depth;
	size_t nodes;
	struct anchor *anchors;
	struct err *e;
};

int yerr(struct err *e, const struct ynode *n, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	str_vfmt_cut(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (!n)
		return err_set(e, ERR_INVALID, "%s", msg);
	return err_set(e, ERR_INVALID, "(%s): Error @ line: %d, col: %d. %s", n->file, n->line, n->col, msg);
}

static int err_at(struct builder *b, const yaml_mark_t *m, const char *msg)
{
	return err_set(b->e, ERR_INVALID, "(%s): Error @ line: %zu, col: %zu. %s", b->d->file, m->line + 1,
		       m->column + 1, msg);
}

static struct ynode *node_new(struct builder *b, enum ynode_kind kind, const yaml_mark_t *m)
{
	struct ynode *n = arena_alloc(&b->d->arena, sizeof *n);
	n->kind = kind;
	n->line = (int)m->line + 1;
	n->col = (int)m->column + 1;
	n->file = b->d->file;
	n->weight = 1;
	return n;
}

static int add_weight(struct builder *b, size_t w, const yaml_mark_t *m)
{
	if (__builtin_add_overflow(b->nodes, w, &b->nodes) || b->nodes > limits.flow_yaml_nodes) {
		char msg[160];
		str_fmt_cut(msg, sizeof msg, "too many YAML nodes (limit flow_yaml_nodes = %zu)",
			    limits.flow_yaml_nodes);
		err_at(b, m, msg);
		b->e->code = ERR_LIMIT;
		return -1;
	}
	return 0;
}

static int check_tag(struct builder *b, const yaml_char_t *tag, const yaml_mark_t *m)
{
	static const char *ok[] = {"!",
				   "tag:yaml.org,2002:str",
				   "tag:yaml.org,2002:int",
				   "tag:yaml.org,2002:map",
				   "tag:yaml.org,2002:seq",
				   "tag:yaml.org,2002:null",
				   "tag:yaml.org,2002:bool",
				   "tag:yaml.org,2002:float"};
	if (!tag)
		return 0;
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (strcmp((const char *)tag, ok[i]) == 0)
			return 0;
	return err_at(b, m, "unsupported YAML tag");
}

static int key_cmp(const void *a, const void *b)
{
	const struct ynode *x = *(struct ynode *const *)a, *y = *(struct ynode *const *)b;
	size_t l = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->s, y->s, l);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

static int check_dup_keys(struct builder *b, struct ynode *map)
{
	struct ynode **keys;
	int rc = 0;
	if (map->n < 2)
		return 0;
	keys = malloc(map->n * sizeof *keys);
	if (!keys)
		return oom_fail(b->e);
	for (size_t i = 0; i < map->n; i++)
		keys[i] = map->kids[2 * i];
	qsort(keys, map->n, sizeof *keys, key_cmp);
	for (size_t i = 1; i < map->n && rc == 0; i++)
		if (key_cmp(&keys[i - 1], &keys[i]) == 0) {
			struct ynode *later = keys[i]->line > keys[i - 1]->line ? keys[i] : keys[i - 1];
			rc = yerr(b->e, later, "Duplicate field '%s'", later->s);
		}
	free(keys);
	return rc;
}

static void remember_anchor(struct builder *b, const yaml_char_t *name, struct ynode *n)
{
	struct anchor *a;
	if (!name)
		return;
	a = arena_alloc(&b->d->arena, sizeof *a);
	a->name = arena_strdup(&b->d->arena, (const char *)name);
	a->node = n;
	a->next = b->anchors;
	b->anchors = a;
}

static int attach(struct builder *b, struct ynode *n, const yaml_mark_t *m)
{
	struct ynode *parent;
	size_t *fill, *cap;
	if (b->depth == 0) {
		if (b->d->root)
			return err_at(b, m, "only one YAML document is allowed");
		b->d->root = n;
		return 0;
	}
	parent = b->stack[b->depth - 1];
	fill = &b->fill[b->depth - 1];
	cap = &b->cap[b->depth - 1];
	if (parent->kind == YN_MAP && *fill % 2 == 0 && n->kind != YN_SCALAR)
		return err_at(b, m, "mapping keys must be scalars");
	if (*fill == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct ynode **kids = arena_alloc(&b->d->arena, ncap * sizeof *kids);
		if (*fill)
			memcpy(kids, parent->kids, *fill * sizeof *kids);
		parent->kids = kids;
		*cap = ncap;
	}
	parent->kids[(*fill)++] = n;
	parent->weight += n->weight;
	return 0;
}

static int on_scalar(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *n;
	if (check_tag(b, ev->data.scalar.tag, &ev->start_mark) < 0 || add_weight(b, 1, &ev->start_mark) < 0)
		return -1;
	n = node_new(b, YN_SCALAR, &ev->start_mark);
	n->len = ev->data.scalar.length;
	n->s = arena_strndup(&b->d->arena, (const char *)ev->data.scalar.value, n->len);
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
	if (ev->data.scalar.tag && strcmp((const char *)ev->data.scalar.tag, "tag:yaml.org,2002:str") != 0)
		n->plain = true;
	remember_anchor(b, ev->data.scalar.anchor, n);
	return attach(b, n, &ev->start_mark);
}

static int on_alias(struct builder *b, const yaml_event_t *ev)
{
	for (struct anchor *a = b->anchors; a; a = a->next)
		if (strcmp(a->name, (const char *)ev->data.alias.anchor) == 0) {
			if (add_weight(b, a->node->weight, &ev->start_mark) < 0)
				return -1;
			return attach(b, a->node, &ev->start_mark);
		}
	return err_at(b, &ev->start_mark, "unknown YAML alias");
}

static int on_start(struct builder *b, const yaml_event_t *ev, enum ynode_kind kind)
{
	const yaml_char_t *tag = kind == YN_MAP ? ev->data.mapping_start.tag : ev->data.sequence_start.tag;
	const yaml_char_t *anchor = kind == YN_MAP ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
	struct ynode *n;
	if (check_tag(b, tag, &ev->start_mark) < 0 || add_weight(b, 1, &ev->start_mark) < 0)
		return -1;
	if (b->depth == YAML_MAX_DEPTH)
		return err_at(b, &ev->start_mark, "YAML nesting is too deep");
	n = node_new(b, kind, &ev->start_mark);
	b->anchors_of[b->depth] = anchor ? arena_strdup(&b->d->arena, (const char *)anchor) : NULL;
	b->stack[b->depth] = n;
	b->fill[b->depth] = 0;
	b->cap[b->depth] = 0;
	b->depth++;
	return 0;
}

static int on_end(struct builder *b, const yaml_event_t *ev)
{
	struct ynode *n = b->stack[--b->depth];
	size_t fill = b->fill[b->depth];
	n->n = n->kind == YN_MAP ? fill / 2 : fill;
	if (n->kind == YN_MAP && check_dup_keys(b, n) < 0)
		return -1;
	remember_anchor(b, (const yaml_char_t *)b->anchors_of[b->depth], n);
	return attach(b, n, &ev->start_mark);
}

static int on_event(struct builder *b, const yaml_event_t *ev)
{
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		return on_scalar(b, ev);
	case YAML_ALIAS_EVENT:
		return on_alias(b, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(b, ev, YN_SEQ);
	case YAML_MAPPING_START_EVENT:
		return on_start(b, ev, YN_MAP);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(b, ev);
	case YAML_DOCUMENT_START_EVENT:
		if (b->d->root)
			return err_at(b, &ev->start_mark, "only one YAML document is allowed");
		return 0;
	default:
		return 0;
	}
}

/* libyaml's words for the usual mistakes, followed by what to look for (issue 12). */
static const char *yaml_hint(const char *problem, const char *context)
{
	static const struct {
		const char *word, *hint;
	} hints[] = {
	    {"expected key", "check the indentation: the keys of one map start in the same column"},
	    {"'-' indicator", "check the indentation: the items of one list start in the same column"},
	    {"mapping values are not allowed",
	     "check the indentation of this line and the one above, or quote a value that contains ': '"},
	    {"block sequence entries are not allowed", "check the indentation: a '-' item cannot follow a value there"},
	    {"cannot start any token", "tabs cannot indent YAML, and '@' or '`' cannot start a plain value: quote it"},
	    {"found unexpected end of stream", "a quoted value or a bracket is not closed"},
	};

	for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++)
		if ((problem && strstr(problem, hints[i].word)) || (context && strstr(context, hints[i].word)))
			return hints[i].hint;
	if (context && strstr(context, "quoted scalar"))
		return "a quoted value is not closed";
	return NULL;
}

int ydoc_parse(struct ydoc *d, const char *file, const char *data, size_t len, struct err *e)
{
	struct builder b = {.d = d, .e = e};
	yaml_parser_t p;
	int rc = 0;
	bool done = false;

	arena_init(&d->arena);
	d->file = arena_strdup(&d->arena, file);
	d->root = NULL;
	if (len > limits.flow_yaml_bytes)
		return err_set(e, ERR_LIMIT, "(%s): file too large: %zu bytes (limit flow_yaml_bytes = %zu)", file, len,
			       limits.flow_yaml_bytes);
	if (!yaml_parser_initialize(&p))
		return oom_fail(e);
	yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			const char *hint = yaml_hint(p.problem, p.context);
			rc = err_set(e, ERR_INVALID, "(%s): Error @ line: %zu, col: %zu. %s%s%s%s%s", file,
				     p.problem_mark.line + 1, p.problem_mark.column + 1,
				     p.problem ? p.problem : "invalid YAML", p.context ? " " : "",
				     p.context ? p.context : "", hint ? " — hint: " : "", hint ? hint : "");
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&b, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc < 0 ? -1 : 0;
}

void ydoc_cleanup(struct ydoc *d)
{
	arena_cleanup(&d->arena);
	d->root = NULL;
}

struct ynode *ynode_get(const struct ynode *map, const char *key)
{
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->kids[2 * i]->s, key) == 0)
			return map->kids[2 * i + 1];
	return NULL;
}

const char *ynode_type_name(const struct ynode *n)
{
	json_t *v;
	const char *name;
	if (n->kind == YN_SEQ)
		return "ARRAY";
	if (n->kind == YN_MAP)
		return "OBJECT";
	v = ynode_to_json(n);
	switch (json_typeof(v)) {
	case JSON_NULL:
		name = "NULL";
		break;
	case JSON_TRUE:
	case JSON_FALSE:
		name = "BOOLEAN";
		break;
	case JSON_INTEGER:
		name = "INT";
		break;
	case JSON_REAL:
		name = "FLOAT";
		break;
	default:
		name = "STRING";
	}
	json_decref(v);
	return name;
}

static bool ieq(const char *s, size_t len, const char *w)
{
	return strlen(w) == len && strncasecmp(s, w, len) == 0;
}

static bool is_int(const char *s, size_t len)
{
	size_t i = (len > 0 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
	if (i == len)
		return false;
	for (; i < len; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool is_float(const char *s, size_t len)
{
	size_t i = (len > 0 && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
	size_t digits = 0;
	while (i < len && isdigit((unsigned char)s[i]))
		i++, digits++;
	if (i < len && s[i] == '.') {
		i++;
		while (i < len && isdigit((unsigned char)s[i]))
			i++, digits++;
	}
	if (digits == 0)
		return false;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		size_t exp = 0;
		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		while (i < len && isdigit((unsigned char)s[i]))
			i++, exp++;
		if (exp == 0)
			return false;
	}
	return i == len;
}

static json_t *number_to_json(const char *s, size_t len)
{
	char tmp[64];
	if (len >= sizeof tmp)
		return NULL;
	memcpy(tmp, s, len);
	tmp[len] = '\0';
	if (is_int(s, len)) {
		int64_t v;
		struct err ignored;
		const char *digits = s[0] == '+' ? s + 1 : s; /* str_to_i64 takes no '+' */

		if (str_to_i64((struct str){digits, len - (size_t)(digits - s)}, INT64_MIN, INT64_MAX, &v, "number",
			       &ignored) == 0)
			return json_integer(v);
		return json_real(strtod(tmp, NULL)); /* beyond 64 bits: a double, as Concord's YAML reader */
	}
	if (is_float(s, len))
		return json_real(strtod(tmp, NULL));
	return NULL;
}

json_t *yscalar_to_json(const char *s, size_t len, bool plain)
{
	static const char *yes[] = {"true", "yes", "on", "y"};
	static const char *no[] = {"false", "no", "off", "n"};
	json_t *num;
	if (!plain)
		return json_stringn(s, len);
	if (len == 0 || ieq(s, len, "~") || ieq(s, len, "null"))
		return json_null();
	for (size_t i = 0; i < 4; i++) {
		if (ieq(s, len, yes[i]))
			return json_true();
		if (ieq(s, len, no[i]))
			return json_false();
	}
	num = number_to_json(s, len);
	if (num)
		return num;
	return json_stringn(s, len);
}

json_t *ynode_to_json(const struct ynode *n)
{
	json_t *v;
	if (n->kind == YN_SCALAR)
		return yscalar_to_json(n->s, n->len, n->plain);
	v = n->kind == YN_SEQ ? json_array() : json_object();
	if (!v)
		return NULL;
	for (size_t i = 0; i < n->n; i++) {
		if (n->kind == YN_SEQ)
			json_array_append_new(v, ynode_to_json(n->kids[i]));
		else
			json_object_set_new(v, n->kids[2 * i]->s, ynode_to_json(n->kids[2 * i + 1]));
	}
	return v;
}
