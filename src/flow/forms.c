#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

static const char *card_suffix[] = {"", "?", "+", "*"};

static json_t *eval_opt(struct vm *vm, struct thread *t, const struct tval *tv, struct err *e)
{
	struct scope sc;
	json_t *v;
	if (!tv)
		return json_null();
	scope_init(&sc, vm, t);
	v = scope_eval(&sc, tv, e);
	scope_cleanup(&sc);
	return v;
}

static json_t *field_json(struct vm *vm, struct thread *t, const struct form_field *f, struct err *e)
{
	json_t *d = json_deep_copy(f->attrs), *v;
	char type[64];
	snprintf(type, sizeof type, "%s%s", f->type, card_suffix[f->card]);
	json_object_set_new(d, "name", json_string(f->name));
	json_object_set_new(d, "type", json_string(type));
	const struct tval *opts[] = {f->label, f->value, f->allow};
	const char *names[] = {"label", "value", "allow"};
	for (size_t i = 0; i < 3; i++) {
		if (!opts[i])
			continue;
		if (!(v = eval_opt(vm, t, opts[i], e))) {
			json_decref(d);
			return NULL;
		}
		json_object_set_new(d, names[i], v);
	}
	return d;
}

/* fields: ${…} gives a list of single-key maps {name: {type, label, …}}. */
static json_t *fields_from_value(json_t *v, struct err *e)
{
	json_t *out = json_array(), *item;
	size_t i;
	if (!json_is_array(v)) {
		json_decref(out);
		err_set(e, ERR_INVALID, "form 'fields' must evaluate to a list");
		return NULL;
	}
	json_array_foreach(v, i, item)
	{
		const char *k;
		json_t *attrs;
		if (!json_is_object(item) || json_object_size(item) != 1)
			goto bad;
		json_object_foreach(item, k, attrs)
		{
			if (!json_is_object(attrs) || !json_is_string(json_object_get(attrs, "type")))
				goto bad;
			json_t *d = json_copy(attrs);
			json_object_set_new(d, "name", json_string(k));
			json_array_append_new(out, d);
		}
	}
	return out;
bad:
	json_decref(out);
	err_set(e, ERR_INVALID, "form field %zu must be a map {name: {type: …}}", i);
	return NULL;
}

static json_t *form_fields(struct vm *vm, struct thread *t, const struct step *s, const char *name, struct err *e)
{
	const struct form_def *d = s->form->inline_fields ? s->form->inline_fields : model_form(vm->m, name);
	json_t *fields, *f;
	if (s->form->fields_expr) {
		json_t *v = eval_opt(vm, t, s->form->fields_expr, e);
		if (!v)
			return NULL;
		fields = fields_from_value(v, e);
		json_decref(v);
		return fields;
	}
	if (!d) {
		err_set(e, ERR_NOT_FOUND, "Form not found: %s", name);
		return NULL;
	}
	fields = json_array();
	for (size_t i = 0; i < d->n; i++) {
		if (!(f = field_json(vm, t, &d->fields[i], e))) {
			json_decref(fields);
			return NULL;
		}
		json_array_append_new(fields, f);
	}
	return fields;
}

void forms_call(struct vm *vm, struct thread *t, const struct step *s)
{
	struct err e;
	char *name = NULL, ev[UUID_STR_LEN], desc[512];
	json_t *n = eval_opt(vm, t, s->arg, &e), *fields = NULL, *values = NULL, *run_as = NULL, *form;
	if (!n || !(name = task_text(n)))
		goto fail;
	snprintf(desc, sizeof desc, "Form call: %s", name);
	events_step(vm, t, s, desc);
	if (!(fields = form_fields(vm, t, s, name, &e)) || !(values = eval_opt(vm, t, s->form->values, &e)) ||
	    !(run_as = eval_opt(vm, t, s->form->run_as, &e)))
		goto fail;
	if (!json_is_object(values)) {
		json_decref(values);
		values = json_object();
	}
	uuid_v4(ev);
	form = json_pack("{s:s, s:s, s:O, s:O, s:{s:b, s:b, s:O}, s:i}", "name", name, "eventName", ev, "fields",
			 fields, "values", values, "options", "yield", s->form->yield, "saveSubmittedBy",
			 s->form->save_submitted_by, "runAs", run_as, "threadId", t->id);
	json_object_set_new(vm->forms, name, form);
	free(t->event);
	t->event = strdup(ev);
	t->state = TH_SUSPENDED;
	goto out;
fail:
	vm_raise(vm, t, s, e.msg, NULL);
out:
	json_decref(n);
	json_decref(fields);
	json_decref(values);
	json_decref(run_as);
	free(name);
}

static int coerce_one(const char *form, const char *field, const char *type, json_t *v, json_t **out, struct err *e)
{
	char *text = json_is_string(v) ? strdup(json_string_value(v)) : value_to_cstr(v, NULL);
	int rc = 0;
	if (!text)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (strcmp(type, "int") == 0) {
		int64_t n;
		rc = json_is_integer(v) ? (*out = json_incref(v), 0)
					: str_to_i64(str_from(text), INT64_MIN, INT64_MAX, &n, field, e);
		if (rc == 0 && !json_is_integer(v))
			*out = json_integer(n);
	} else if (strcmp(type, "decimal") == 0) {
		double d;
		struct err ignore;
		rc = value_to_double(v, &d, &ignore) < 0 ? -1 : 0;
		if (rc == 0)
			*out = json_real(d);
	} else if (strcmp(type, "boolean") == 0) {
		bool b = cstr_ieq(text, "true");
		rc = json_is_boolean(v) || b || cstr_ieq(text, "false") ? 0 : -1;
		if (rc == 0)
			*out = json_is_boolean(v) ? json_incref(v) : json_boolean(b);
	} else if (strcmp(type, "date") == 0 || strcmp(type, "dateTime") == 0) {
		int64_t ms;
		char iso[DT_ISO_LEN];
		rc = dt_parse_iso(text, strlen(text), false, &ms, field, e);
		if (rc == 0) {
			dt_format_iso(ms, iso);
			*out = json_string(iso);
		}
	} else {
		*out = json_string(text);
	}
	if (rc < 0)
		rc = err_set(e, ERR_INVALID, "Form '%s': invalid value '%s' for field '%s' (expected %s)", form, text,
			     field, type);
	free(text);
	return rc;
}

static int check_allowed(const char *form, json_t *f, json_t *v, struct err *e)
{
	json_t *allow = json_object_get(f, "allow"), *min = json_object_get(f, "min"), *max = json_object_get(f, "max");
	const char *pattern = json_string_value(json_object_get(f, "pattern"));
	const char *name = json_string_value(json_object_get(f, "name"));
	double d;
	struct err ignore;
	if (json_is_array(allow) && json_array_size(allow) > 0) {
		bool ok = false;
		size_t i;
		json_t *a;
		json_array_foreach(allow, i, a) ok =
		    ok || value_equals(a, v) ||
		    (json_is_string(v) && json_is_string(a) && strcmp(json_string_value(a), json_string_value(v)) == 0);
		if (!ok)
			return err_set(e, ERR_INVALID, "Form '%s': value not allowed for field '%s'", form, name);
	}
	if (pattern && json_is_string(v)) {
		regex_t re;
		bool ok = false;
		if (regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB) == 0) {
			ok = regexec(&re, json_string_value(v), 0, NULL, 0) == 0;
			regfree(&re);
		}
		if (!ok)
			return err_set(e, ERR_INVALID, "Form '%s': value of field '%s' does not match '%s'", form, name,
				       pattern);
	}
	if (json_is_number(v) && value_to_double(v, &d, &ignore) == 0) {
		if ((json_is_number(min) && d < json_number_value(min)) ||
		    (json_is_number(max) && d > json_number_value(max)))
			return err_set(e, ERR_INVALID, "Form '%s': value of field '%s' is out of range", form, name);
	}
	return 0;
}

static int submit_field(const char *form, json_t *f, json_t *given, json_t *dflt, json_t **out, struct err *e)
{
	char type[64];
	const char *t = json_string_value(json_object_get(f, "type"));
	const char *name = json_string_value(json_object_get(f, "name"));
	size_t len = strlen(t);
	char card = len && strchr("?+*", t[len - 1]) ? t[len - 1] : 0;
	json_t *v = json_is_true(json_object_get(f, "readonly")) || !given || json_is_null(given) ? dflt : given;
	json_t *res, *x;
	size_t i;
	snprintf(type, sizeof type, "%.*s", (int)(card ? len - 1 : len), t);
	if (!v || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0)) {
		if (card == '?' || card == '*') {
			*out = card == '*' ? json_array() : json_null();
			return 0;
		}
		return err_set(e, ERR_INVALID, "Form '%s': field '%s' is required", form, name);
	}
	if (!card || card == '?') {
		if (json_is_array(v))
			v = json_array_get(v, 0);
		if (coerce_one(form, name, type, v, &res, e) < 0)
			return -1;
		if (check_allowed(form, f, res, e) < 0) {
			json_decref(res);
			return -1;
		}
		*out = res;
		return 0;
	}
	*out = json_array();
	if (!json_is_array(v)) {
		if (coerce_one(form, name, type, v, &res, e) < 0 || check_allowed(form, f, res, e) < 0)
			goto fail;
		json_array_append_new(*out, res);
		return 0;
	}
	json_array_foreach(v, i, x)
	{
		res = NULL;
		if (coerce_one(form, name, type, x, &res, e) < 0 || check_allowed(form, f, res, e) < 0)
			goto fail;
		json_array_append_new(*out, res);
	}
	return 0;
fail:
	json_decref(res);
	json_decref(*out);
	return -1;
}

int forms_submit(struct vm *vm, const char *name, json_t *args, json_t **result, struct err *e)
{
	json_t *form = json_object_get(vm->forms, name), *fields = json_object_get(form, "fields");
	json_t *values = json_object_get(form, "values"), *given = json_object_get(args, name), *f;
	size_t i;
	if (!json_is_object(given))
		given = args;
	*result = json_object();
	json_array_foreach(fields, i, f)
	{
		const char *fname = json_string_value(json_object_get(f, "name"));
		json_t *dflt = json_object_get(values, fname), *v = NULL;
		if (!dflt)
			dflt = json_object_get(f, "value");
		if (submit_field(name, f, json_object_get(given, fname), dflt, &v, e) < 0) {
			json_decref(*result);
			*result = NULL;
			return -1;
		}
		json_object_set_new(*result, fname, v);
	}
	if (json_is_true(json_object_get(json_object_get(form, "options"), "saveSubmittedBy")))
		json_object_set_new(*result, "submittedBy", json_pack("{s:s}", "username", "local"));
	return 0;
}
