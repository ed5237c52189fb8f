#include <string.h>

#include "flow/compile.h"

static const char *const field_attrs[] = {"type",      "label",		"value",       "allow",	 "pattern",
					  "inputType", "readonly",	"placeholder", "search", "min",
					  "max",       "popupPosition", NULL};
static const char *const field_types[] = {"string", "int", "decimal", "boolean", "file", "date", "dateTime", NULL};

static int parse_type(struct model *m, const struct ynode *t, struct form_field *f, struct err *e)
{
	size_t len;
	bool known = false;
	if (compile_want_string(t, "type", e) < 0)
		return -1;
	len = t->len;
	f->card = CARD_ONE;
	if (len > 0 && strchr("?+*", t->s[len - 1])) {
		char c = t->s[len - 1];
		f->card = c == '?' ? CARD_OPTIONAL : c == '+' ? CARD_ONE_OR_MORE : CARD_ANY;
		len--;
	}
	f->type = arena_strndup(&m->arena, t->s, len);
	for (size_t i = 0; field_types[i] && !known; i++)
		known = strcmp(field_types[i], f->type) == 0;
	if (!known)
		return yerr(e, t,
			    "Unknown field type '%s', expected one of: string, int, decimal, boolean, file, date, "
			    "dateTime (with an optional ?, + or * suffix)",
			    t->s);
	return 0;
}

static int compile_field(struct model *m, const struct ynode *item, struct form_field *f, struct err *e)
{
	const struct ynode *attrs, *t;
	if (item->kind != YN_MAP || item->n != 1)
		return yerr(e, item, "a form field must be a map with one key (the field name)");
	f->name = arena_strdup(&m->arena, item->kids[0]->s);
	attrs = item->kids[1];
	if (compile_want(attrs, YN_MAP, f->name, e) < 0 || compile_check_keys(attrs, field_attrs, e) < 0)
		return -1;
	t = ynode_get(attrs, "type");
	if (!t)
		return yerr(e, attrs, "Mandatory parameter 'type' not found");
	if (parse_type(m, t, f, e) < 0)
		return -1;
	f->attrs = compile_own(m, json_object());
	for (size_t i = 0; i < attrs->n; i++) {
		const struct ynode *k = attrs->kids[2 * i], *v = attrs->kids[2 * i + 1];
		struct tval **slot = strcmp(k->s, "label") == 0	  ? &f->label
				     : strcmp(k->s, "value") == 0 ? &f->value
				     : strcmp(k->s, "allow") == 0 ? &f->allow
								  : NULL;
		if (slot) {
			if (!(*slot = tval_compile(m, v, e)))
				return -1;
		} else if (strcmp(k->s, "type") != 0) {
			json_object_set_new(f->attrs, k->s, ynode_to_json(v));
		}
	}
	return 0;
}

int compile_form_fields(struct model *m, const struct ynode *seq, const char *name, struct form_def **out,
			struct err *e)
{
	struct form_def *d;
	if (compile_want(seq, YN_SEQ, "fields", e) < 0)
		return -1;
	d = arena_alloc(&m->arena, sizeof *d);
	d->name = arena_strdup(&m->arena, name);
	d->n = seq->n;
	d->fields = arena_alloc(&m->arena, (seq->n + 1) * sizeof *d->fields);
	for (size_t i = 0; i < seq->n; i++) {
		if (compile_field(m, seq->kids[i], &d->fields[i], e) < 0)
			return -1;
		for (size_t j = 0; j < i; j++)
			if (strcmp(d->fields[j].name, d->fields[i].name) == 0)
				return yerr(e, seq->kids[i], "Duplicate form field '%s'", d->fields[i].name);
	}
	*out = d;
	return 0;
}
