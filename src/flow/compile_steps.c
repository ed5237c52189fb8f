#include <stdio.h>
#include <string.h>

#include "flow/compile.h"

struct kind_def {
	const char *key;
	enum step_kind kind;
	const char *const *options;
};

static const char *const o_task[] = {
    "task",  "name", "in", "out", "ignoreErrors", "retry", "loop", "withItems", "parallelWithItems",
    "error", "meta", NULL};
static const char *const o_log[] = {"log", "name", "meta", NULL};
static const char *const o_log_yaml[] = {"logYaml", "name", "meta", NULL};
static const char *const o_throw[] = {"throw", "name", "meta", NULL};
static const char *const o_expr[] = {"expr", "out", "error", "name", "meta", NULL};
static const char *const o_set[] = {"set", "meta", NULL};
static const char *const o_if[] = {"if", "then", "else", "meta", NULL};
static const char *const o_call[] = {"call",  "in",    "out",  "loop", "withItems", "parallelWithItems",
				     "retry", "error", "name", "meta", NULL};
static const char *const o_block[] = {"block", "error", "out", "loop", "withItems", "parallelWithItems",
				      "name",  "meta",	NULL};
static const char *const o_try[] = {"try",  "error", "out", "loop", "withItems", "parallelWithItems",
				    "name", "meta",  NULL};
static const char *const o_parallel[] = {"parallel", "out", "meta", NULL};
static const char *const o_checkpoint[] = {"checkpoint", "meta", NULL};
static const char *const o_suspend[] = {"suspend", "meta", NULL};
static const char *const o_script[] = {"script", "body",	   "in",    "out",   "meta", "name", "withItems",
				       "parallelWithItems", "loop", "retry", "error", NULL};
static const char *const o_form[] = {"form", "yield", "saveSubmittedBy", "runAs", "values", "fields", "meta", NULL};

static const struct kind_def kinds[] = {
    {"task", STEP_TASK, o_task},
    {"log", STEP_LOG, o_log},
    {"logYaml", STEP_LOG_YAML, o_log_yaml},
    {"throw", STEP_THROW, o_throw},
    {"expr", STEP_EXPR, o_expr},
    {"set", STEP_SET, o_set},
    {"if", STEP_IF, o_if},
    {"switch", STEP_SWITCH, NULL},
    {"call", STEP_CALL, o_call},
    {"block", STEP_BLOCK, o_block},
    {"try", STEP_BLOCK, o_try},
    {"parallel", STEP_PARALLEL, o_parallel},
    {"checkpoint", STEP_CHECKPOINT, o_checkpoint},
    {"suspend", STEP_SUSPEND, o_suspend},
    {"form", STEP_FORM, o_form},
    {"script", STEP_SCRIPT, o_script},
};

static const char *kinds_list =
    "task, log, logYaml, throw, expr, call, form, if, switch, set, checkpoint, suspend, try, block, parallel, script";

int compile_check_keys(const struct ynode *map, const char *const *allowed, struct err *e)
{
	for (size_t i = 0; i < map->n; i++) {
		const struct ynode *k = map->kids[2 * i];
		bool ok = false;
		char expected[512];
		size_t off = 0;
		for (size_t j = 0; allowed[j] && !ok; j++)
			ok = strcmp(allowed[j], k->s) == 0;
		if (ok)
			continue;
		for (size_t j = 0; allowed[j] && off < sizeof expected; j++)
			off +=
			    (size_t)snprintf(expected + off, sizeof expected - off, "%s%s", j ? ", " : "", allowed[j]);
		return yerr(e, map,
			    "Unknown options: ['%s' [%s] @ line: %d, col: %d], expected: [%s]. Remove invalid options "
			    "and/or fix indentation",
			    k->s, ynode_type_name(map->kids[2 * i + 1]), k->line, k->col, expected);
	}
	return 0;
}

int compile_want(const struct ynode *n, enum ynode_kind kind, const char *what, struct err *e)
{
	static const char *names[] = {"a value", "a list", "a map"};
	if (n->kind == kind)
		return 0;
	return yerr(e, n, "'%s' must be %s, got %s", what, names[kind], ynode_type_name(n));
}

int compile_want_string(const struct ynode *n, const char *what, struct err *e)
{
	if (n->kind == YN_SCALAR && strcmp(ynode_type_name(n), "STRING") == 0)
		return 0;
	return yerr(e, n, "'%s' must be a string, got %s", what, ynode_type_name(n));
}

static struct step *step_new(struct model *m, const struct ynode *at, enum step_kind kind, const char *flow)
{
	struct step *s = arena_alloc(&m->arena, sizeof *s);
	s->kind = kind;
	s->file = at->file;
	s->line = at->line;
	s->col = at->col;
	s->flow = flow;
	if (m->n_steps == m->cap_steps) {
		size_t cap = m->cap_steps ? m->cap_steps * 2 : 64;
		struct step **v = arena_alloc(&m->arena, cap * sizeof *v);
		if (m->n_steps)
			memcpy(v, m->steps, m->n_steps * sizeof *v);
		m->steps = v;
		m->cap_steps = cap;
	}
	s->id = (int)m->n_steps;
	m->steps[m->n_steps++] = s;
	return s;
}

static struct steps *list_new(struct model *m, size_t n)
{
	struct steps *l = arena_alloc(&m->arena, sizeof *l);
	l->n = n;
	l->v = n ? arena_alloc(&m->arena, n * sizeof *l->v) : NULL;
	if (m->n_lists == m->cap_lists) {
		size_t cap = m->cap_lists ? m->cap_lists * 2 : 64;
		struct steps **v = arena_alloc(&m->arena, cap * sizeof *v);
		if (m->n_lists)
			memcpy(v, m->lists, m->n_lists * sizeof *v);
		m->lists = v;
		m->cap_lists = cap;
	}
	l->id = (int)m->n_lists;
	m->lists[m->n_lists++] = l;
	return l;
}

static int compile_step(struct model *m, const struct ynode *n, const char *flow, struct step **out, struct err *e);

int compile_steps(struct model *m, const struct ynode *seq, const char *flow, struct steps **out, struct err *e)
{
	struct steps *l;
	if (compile_want(seq, YN_SEQ, "steps", e) < 0)
		return -1;
	if (seq->n == 0)
		return yerr(e, seq, "a list of steps must not be empty");
	l = list_new(m, seq->n);
	for (size_t i = 0; i < seq->n; i++)
		if (compile_step(m, seq->kids[i], flow, &l->v[i], e) < 0)
			return -1;
	*out = l;
	return 0;
}

static int opt_tval(struct model *m, const struct ynode *map, const char *key, struct tval **out, struct err *e)
{
	const struct ynode *v = ynode_get(map, key);
	if (!v)
		return 0;
	*out = tval_compile(m, v, e);
	return *out ? 0 : -1;
}

static bool is_expr_string(const struct ynode *n)
{
	return n->kind == YN_SCALAR && n->len >= 3 && strncmp(n->s, "${", 2) == 0 && n->s[n->len - 1] == '}';
}

static char *names_dup(struct model *m, const struct ynode *n)
{
	return arena_strdup(&m->arena, n->s);
}

static int compile_out(struct model *m, const struct ynode *v, bool allow_list, bool allow_map, bool allow_expr,
		       struct out_spec *o, struct err *e)
{
	if (v->kind == YN_SCALAR && is_expr_string(v) && allow_expr) {
		o->kind = OUT_EXPR;
		o->map = tval_compile(m, v, e);
		return o->map ? 0 : -1;
	}
	if (v->kind == YN_SCALAR) {
		if (v->len == 0)
			return yerr(e, v, "'out' must not be empty");
		o->kind = OUT_NAME;
		o->n = 1;
		o->names = arena_alloc(&m->arena, sizeof *o->names);
		o->names[0] = names_dup(m, v);
		return 0;
	}
	if (v->kind == YN_SEQ && allow_list) {
		o->kind = OUT_LIST;
		o->n = v->n;
		o->names = arena_alloc(&m->arena, (v->n + 1) * sizeof *o->names);
		for (size_t i = 0; i < v->n; i++) {
			if (compile_want(v->kids[i], YN_SCALAR, "out", e) < 0)
				return -1;
			o->names[i] = names_dup(m, v->kids[i]);
		}
		return 0;
	}
	if (v->kind == YN_MAP && allow_map) {
		o->kind = OUT_MAP;
		o->map = tval_compile(m, v, e);
		return o->map ? 0 : -1;
	}
	return yerr(e, v, "'out' must be a string%s%s%s, got %s", allow_list ? ", a list" : "",
		    allow_map ? ", a map" : "", allow_expr ? " or an expression" : "", ynode_type_name(v));
}

static int compile_loop(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *loop = ynode_get(map, "loop"), *wi = ynode_get(map, "withItems");
	const struct ynode *pwi = ynode_get(map, "parallelWithItems");
	static const char *const keys[] = {"items", "mode", "parallelism", NULL};
	const struct ynode *mode;
	if (!!loop + !!wi + !!pwi > 1)
		return yerr(e, map, "only one of 'loop', 'withItems' and 'parallelWithItems' may be used");
	if (!loop && !wi && !pwi)
		return 0;
	s->loop = arena_alloc(&m->arena, sizeof *s->loop);
	if (wi || pwi) {
		s->loop->parallel = pwi != NULL;
		s->loop->unlimited = pwi != NULL;
		s->loop->items = tval_compile(m, wi ? wi : pwi, e);
		return s->loop->items ? 0 : -1;
	}
	if (compile_want(loop, YN_MAP, "loop", e) < 0 || compile_check_keys(loop, keys, e) < 0)
		return -1;
	if (!ynode_get(loop, "items"))
		return yerr(e, loop, "Mandatory parameter 'items' not found");
	if (opt_tval(m, loop, "items", &s->loop->items, e) < 0 ||
	    opt_tval(m, loop, "parallelism", &s->loop->parallelism, e) < 0)
		return -1;
	mode = ynode_get(loop, "mode");
	if (mode) {
		if (mode->kind != YN_SCALAR || (strcmp(mode->s, "serial") != 0 && strcmp(mode->s, "parallel") != 0))
			return yerr(e, mode, "'mode' must be 'serial' or 'parallel'");
		s->loop->parallel = strcmp(mode->s, "parallel") == 0;
	}
	return 0;
}

static int compile_retry(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	static const char *const keys[] = {"times", "delay", "in", NULL};
	const struct ynode *r = ynode_get(map, "retry");
	if (!r)
		return 0;
	if (compile_want(r, YN_MAP, "retry", e) < 0 || compile_check_keys(r, keys, e) < 0)
		return -1;
	s->retry = arena_alloc(&m->arena, sizeof *s->retry);
	if (opt_tval(m, r, "times", &s->retry->times, e) < 0 || opt_tval(m, r, "delay", &s->retry->delay, e) < 0 ||
	    opt_tval(m, r, "in", &s->retry->in, e) < 0)
		return -1;
	if (s->retry->in && ynode_get(r, "in")->kind != YN_MAP)
		return yerr(e, ynode_get(r, "in"), "'retry.in' must be a map");
	return 0;
}

static int compile_common(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *meta = ynode_get(map, "meta"), *err = ynode_get(map, "error");
	const struct ynode *ign = ynode_get(map, "ignoreErrors");
	if (opt_tval(m, map, "name", &s->name, e) < 0)
		return -1;
	if (meta) {
		if (compile_want(meta, YN_MAP, "meta", e) < 0)
			return -1;
		s->meta = compile_own(m, ynode_to_json(meta));
	}
	if (err && compile_steps(m, err, s->flow, &s->error, e) < 0)
		return -1;
	if (ign) {
		json_t *b = ynode_to_json(ign);
		bool ok = json_is_boolean(b);
		s->ignore_errors = json_is_true(b);
		json_decref(b);
		if (!ok)
			return yerr(e, ign, "'ignoreErrors' must be a boolean");
	}
	if (compile_loop(m, map, s, e) < 0 || compile_retry(m, map, s, e) < 0)
		return -1;
	return 0;
}

static int compile_task(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *t = ynode_get(map, "task"), *in = ynode_get(map, "in"), *out = ynode_get(map, "out");
	if (compile_want_string(t, "task", e) < 0)
		return -1;
	s->task = arena_strdup(&m->arena, t->s);
	if (in) {
		if (in->kind != YN_MAP && !is_expr_string(in))
			return yerr(e, in, "'in' must be a map or an expression");
		if (!(in->kind == YN_MAP ? (s->in = tval_compile(m, in, e)) : (s->arg = tval_compile(m, in, e))))
			return -1;
	}
	if (out && compile_out(m, out, false, true, false, &s->out, e) < 0)
		return -1;
	return 0;
}

/* `in:` of a call or script step: a map or an expression, into s->in. */
static int compile_in(struct model *m, const struct ynode *in, struct step *s, struct err *e)
{
	if (in->kind != YN_MAP && !is_expr_string(in))
		return yerr(e, in, "'in' must be a map or an expression");
	s->in = tval_compile(m, in, e);
	return s->in ? 0 : -1;
}

static int compile_call(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *c = ynode_get(map, "call"), *in = ynode_get(map, "in"), *out = ynode_get(map, "out");
	if (compile_want_string(c, "call", e) < 0 || !(s->arg = tval_compile(m, c, e)))
		return -1;
	if (in && compile_in(m, in, s, e) < 0)
		return -1;
	if (out && compile_out(m, out, true, true, true, &s->out, e) < 0)
		return -1;
	return 0;
}

static int compile_block(struct model *m, const struct ynode *map, const char *key, struct step *s, struct err *e)
{
	const struct ynode *out = ynode_get(map, "out");
	if (compile_steps(m, ynode_get(map, key), s->flow, &s->body, e) < 0)
		return -1;
	if (out && compile_out(m, out, true, false, false, &s->out, e) < 0)
		return -1;
	return 0;
}

static int compile_if(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *c = ynode_get(map, "if"), *t = ynode_get(map, "then"), *el = ynode_get(map, "else");
	if (!is_expr_string(c))
		return yerr(e, c, "'if' must be an expression (\"${...}\")");
	if (!t)
		return yerr(e, map, "Mandatory parameter 'then' not found");
	if (!(s->arg = tval_compile(m, c, e)) || compile_steps(m, t, s->flow, &s->body, e) < 0)
		return -1;
	if (el && compile_steps(m, el, s->flow, &s->alt, e) < 0)
		return -1;
	return 0;
}

static int compile_switch(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *v = ynode_get(map, "switch");
	size_t n = 0;
	if (compile_want(v, YN_SCALAR, "switch", e) < 0 || !(s->arg = tval_compile(m, v, e)))
		return -1;
	s->cases = arena_alloc(&m->arena, map->n * sizeof *s->cases);
	for (size_t i = 0; i < map->n; i++) {
		const struct ynode *k = map->kids[2 * i], *body = map->kids[2 * i + 1];
		if (strcmp(k->s, "switch") == 0 || strcmp(k->s, "meta") == 0)
			continue;
		if (strcmp(k->s, "default") == 0) {
			if (compile_steps(m, body, s->flow, &s->alt, e) < 0)
				return -1;
			continue;
		}
		if (!(s->cases[n].label = tval_compile(m, k, e)) ||
		    compile_steps(m, body, s->flow, &s->cases[n].body, e) < 0)
			return -1;
		n++;
	}
	s->n_cases = n;
	if (n == 0 && !s->alt)
		return yerr(e, map, "No branch labels defined");
	return 0;
}

static int compile_parallel(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *p = ynode_get(map, "parallel"), *out = ynode_get(map, "out");
	if (compile_steps(m, p, s->flow, &s->body, e) < 0)
		return -1;
	if (out && compile_out(m, out, true, true, false, &s->out, e) < 0)
		return -1;
	return 0;
}

static int compile_form_step(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *f = ynode_get(map, "form"), *fields = ynode_get(map, "fields");
	const struct ynode *y = ynode_get(map, "yield"), *sb = ynode_get(map, "saveSubmittedBy");
	struct form_call *fc = arena_alloc(&m->arena, sizeof *fc);
	s->form = fc;
	if (compile_want_string(f, "form", e) < 0 || !(s->arg = tval_compile(m, f, e)))
		return -1;
	if (!is_expr_string(f) && !strchr(f->s, '$')) {
		for (const char *c = f->s; *c; c++)
			if (!(('a' <= *c && *c <= 'z') || ('A' <= *c && *c <= 'Z') || ('0' <= *c && *c <= '9') ||
			      *c == '_' || *c == ' '))
				return yerr(e, f, "Invalid form name '%s', expected ^[A-Za-z0-9_ $]+$", f->s);
	}
	if (y || sb) {
		json_t *a = y ? ynode_to_json(y) : json_false(), *b = sb ? ynode_to_json(sb) : json_false();
		bool ok = json_is_boolean(a) && json_is_boolean(b);
		fc->yield = json_is_true(a);
		fc->save_submitted_by = json_is_true(b);
		json_decref(a);
		json_decref(b);
		if (!ok)
			return yerr(e, y ? y : sb, "'yield' and 'saveSubmittedBy' must be booleans");
	}
	if (opt_tval(m, map, "runAs", &fc->run_as, e) < 0 || opt_tval(m, map, "values", &fc->values, e) < 0)
		return -1;
	if (fields && is_expr_string(fields))
		return opt_tval(m, map, "fields", &fc->fields_expr, e);
	if (fields)
		return compile_form_fields(m, fields, f->s, &fc->inline_fields, e);
	return 0;
}

static int compile_scalar_arg(struct model *m, const struct ynode *map, const char *key, struct step *s, struct err *e)
{
	const struct ynode *v = ynode_get(map, key);
	if (s->kind == STEP_EXPR && !is_expr_string(v))
		return yerr(e, v, "'expr' must be an expression (\"${...}\")");
	if ((s->kind == STEP_SUSPEND || s->kind == STEP_CHECKPOINT) && compile_want_string(v, key, e) < 0)
		return -1;
	s->arg = tval_compile(m, v, e);
	if (!s->arg)
		return -1;
	if (s->kind == STEP_EXPR && ynode_get(map, "out") &&
	    compile_out(m, ynode_get(map, "out"), false, true, false, &s->out, e) < 0)
		return -1;
	return 0;
}

static int compile_set(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *v = ynode_get(map, "set");
	if (compile_want(v, YN_MAP, "set", e) < 0)
		return -1;
	s->arg = tval_compile(m, v, e);
	return s->arg ? 0 : -1;
}

/* `script: LANG` with `body:`, or `script: path/file.ext` (an expression too); the
 * language is resolved when the step runs (Concord: an unknown engine fails there). */
static int compile_script(struct model *m, const struct ynode *map, struct step *s, struct err *e)
{
	const struct ynode *v = ynode_get(map, "script"), *body = ynode_get(map, "body");
	const struct ynode *in = ynode_get(map, "in"), *out = ynode_get(map, "out");
	if (compile_want_string(v, "script", e) < 0 || !(s->arg = tval_compile(m, v, e)))
		return -1;
	if (body) {
		if (compile_want_string(body, "body", e) < 0)
			return -1;
		s->script_body = arena_strdup(&m->arena, body->s);
	}
	if (in && compile_in(m, in, s, e) < 0)
		return -1;
	if (out && compile_out(m, out, false, true, false, &s->out, e) < 0)
		return -1;
	return 0;
}

static int compile_kind(struct model *m, const struct ynode *map, const struct kind_def *k, struct step *s,
			struct err *e)
{
	switch (k->kind) {
	case STEP_TASK:
		return compile_task(m, map, s, e);
	case STEP_CALL:
		return compile_call(m, map, s, e);
	case STEP_BLOCK:
		return compile_block(m, map, k->key, s, e);
	case STEP_IF:
		return compile_if(m, map, s, e);
	case STEP_SWITCH:
		return compile_switch(m, map, s, e);
	case STEP_PARALLEL:
		return compile_parallel(m, map, s, e);
	case STEP_FORM:
		return compile_form_step(m, map, s, e);
	case STEP_SET:
		return compile_set(m, map, s, e);
	case STEP_SCRIPT:
		return compile_script(m, map, s, e);
	default:
		return compile_scalar_arg(m, map, k->key, s, e);
	}
}

static const struct kind_def *find_kind(const struct ynode *map)
{
	for (size_t i = 0; i < map->n; i++)
		for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++)
			if (strcmp(map->kids[2 * i]->s, kinds[j].key) == 0)
				return &kinds[j];
	return NULL;
}

static int compile_string_step(struct model *m, const struct ynode *n, const char *flow, struct step **out,
			       struct err *e)
{
	if (strcmp(n->s, "exit") == 0 || strcmp(n->s, "return") == 0) {
		*out = step_new(m, n, n->s[0] == 'e' ? STEP_EXIT : STEP_RETURN, flow);
		return 0;
	}
	if (is_expr_string(n)) {
		*out = step_new(m, n, STEP_EXPR, flow);
		(*out)->arg = tval_compile(m, n, e);
		return (*out)->arg ? 0 : -1;
	}
	return yerr(e, n,
		    "Unknown step: '%s' (a string step must be 'exit', 'return' or an expression \"${...}\"; "
		    "use 'call: %s' to call a flow)",
		    n->s, n->s);
}

static int compile_step(struct model *m, const struct ynode *n, const char *flow, struct step **out, struct err *e)
{
	const struct kind_def *k;
	struct step *s;
	if (n->kind == YN_SCALAR)
		return compile_string_step(m, n, flow, out, e);
	if (n->kind != YN_MAP || n->n == 0)
		return yerr(e, n, "a step must be a string or a map, got %s", ynode_type_name(n));
	k = find_kind(n);
	if (!k)
		return yerr(e, n, "Unknown step '%s', expected one of: %s", n->kids[0]->s, kinds_list);
	if (k->options && compile_check_keys(n, k->options, e) < 0)
		return -1;
	s = step_new(m, n, k->kind, flow);
	if (compile_common(m, n, s, e) < 0 || compile_kind(m, n, k, s, e) < 0)
		return -1;
	*out = s;
	return 0;
}
