#include <stdlib.h>
#include <string.h>

#include "flow/compile.h"
#include "flow/el/el.h"

static void *grow(struct model *m, void *v, size_t n, size_t *cap, size_t size)
{
	void *nv;
	if (n < *cap)
		return v;
	*cap = *cap ? *cap * 2 : 32;
	nv = arena_alloc(&m->arena, *cap * size);
	if (n)
		memcpy(nv, v, n * size);
	return nv;
}

json_t *compile_own(struct model *m, json_t *v)
{
	m->owned_json = grow(m, m->owned_json, m->n_owned_json, &m->cap_owned_json, sizeof *m->owned_json);
	m->owned_json[m->n_owned_json++] = v;
	return v;
}

static void own_expr(struct model *m, struct el_expr *x)
{
	m->owned_expr = grow(m, m->owned_expr, m->n_owned_expr, &m->cap_owned_expr, sizeof *m->owned_expr);
	m->owned_expr[m->n_owned_expr++] = x;
}

struct tval *tval_lit(struct model *m, json_t *v)
{
	struct tval *t = arena_alloc(&m->arena, sizeof *t);
	t->kind = TV_LIT;
	t->lit = compile_own(m, json_incref(v));
	return t;
}

static struct tval *compile_scalar(struct model *m, const struct ynode *n, struct tval *t, struct err *e)
{
	if (!n->plain || strcmp(ynode_type_name(n), "STRING") == 0) {
		if (el_has_template(n->s, n->len)) {
			struct err pe;
			t->kind = TV_EXPR;
			t->text = arena_strndup(&m->arena, n->s, n->len);
			t->expr = el_parse_template(n->s, n->len, &pe);
			if (!t->expr && pe.code == ERR_LIMIT) {
				yerr(e, n, "%s", pe.msg);
				e->code = ERR_LIMIT;
				return NULL;
			}
			if (!t->expr) {
				/* As in Concord, a syntax error fails the step that evaluates the
				 * expression, at run time, not the whole definition. */
				t->error = arena_strdup(&m->arena, pe.msg);
				return t;
			}
			own_expr(m, t->expr);
			return t;
		}
	}
	t->kind = TV_LIT;
	t->lit = compile_own(m, ynode_to_json(n));
	return t;
}

struct tval *tval_compile(struct model *m, const struct ynode *n, struct err *e)
{
	struct tval *t = arena_alloc(&m->arena, sizeof *t);
	bool all_lit = true;
	size_t count;
	t->line = n->line;
	t->col = n->col;
	if (n->kind == YN_SCALAR)
		return compile_scalar(m, n, t, e);
	count = n->n;
	t->kind = n->kind == YN_SEQ ? TV_LIST : TV_MAP;
	t->n = count;
	t->items = arena_alloc(&m->arena, (count + 1) * sizeof *t->items);
	if (t->kind == TV_MAP)
		t->keys = arena_alloc(&m->arena, (count + 1) * sizeof *t->keys);
	for (size_t i = 0; i < count; i++) {
		const struct ynode *v = n->kind == YN_SEQ ? n->kids[i] : n->kids[2 * i + 1];
		if (t->kind == TV_MAP) {
			t->keys[i] = n->kids[2 * i]->s;
			if (strchr(t->keys[i], '.'))
				t->dotted = true;
		}
		t->items[i] = tval_compile(m, v, e);
		if (!t->items[i])
			return NULL;
		all_lit = all_lit && t->items[i]->kind == TV_LIT;
	}
	if (all_lit && !t->dotted) {
		t->kind = TV_LIT;
		t->lit = compile_own(m, ynode_to_json(n));
	}
	return t;
}
