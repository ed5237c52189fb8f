#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/oom.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/form_messages.h"
#include "flow/form_validate.h"
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
	if (str_fmt(type, sizeof type, "%s%s", f->type, card_suffix[f->card])) {
		json_decref(d);
		err_set(e, ERR_INVALID, "form field '%s': type '%.64s' too long (limit %zu bytes)", f->name, f->type,
			sizeof type - 1);
		return NULL;
	}
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
	json_t *n = eval_opt(vm, t, s->arg, &e), *fields = NULL, *values = NULL, *run_as = NULL, *messages = NULL,
	       *form;
	if (!n || !(name = task_text(n)))
		goto fail;
	str_fmt_cut(desc, sizeof desc, "Form call: %s", name);
	events_step(vm, t, s, desc);
	if (!(fields = form_fields(vm, t, s, name, &e)) || !(values = eval_opt(vm, t, s->form->values, &e)) ||
	    !(run_as = eval_opt(vm, t, s->form->run_as, &e)))
		goto fail;
	if (!json_is_object(values)) {
		json_decref(values);
		values = json_object();
	}
	e.code = ERR_OK;
	if (!(messages = form_messages_load(vm->h, name, &e)) && e.code != ERR_OK)
		goto fail;
	uuid_v4(ev);
	form = json_pack("{s:s, s:s, s:O, s:O, s:{s:b, s:b, s:O}, s:i}", "name", name, "eventName", ev, "fields",
			 fields, "values", values, "options", "yield", s->form->yield, "saveSubmittedBy",
			 s->form->save_submitted_by, "runAs", run_as, "threadId", t->id);
	if (form && messages) /* its own error messages travel with the pending form */
		json_object_set(form, "messages", messages);
	json_object_set_new(vm->forms, name, form);
	free(t->event);
	if (!(t->event = strdup(ev)))
		oom_note(); /* the VM fails the step (vm.c check_memory) */
	t->state = TH_SUSPENDED;
	goto out;
fail:
	vm_raise(vm, t, s, e.msg, NULL);
out:
	json_decref(n);
	json_decref(fields);
	json_decref(values);
	json_decref(run_as);
	json_decref(messages);
	free(name);
}

/* One message for `accord run` and the runner: every field's error, in field order. */
static int submit_errors(const char *form, json_t *errors, struct err *e)
{
	char msg[ERR_MSG_MAX];
	size_t len = (size_t)snprintf(msg, sizeof msg, "Form '%s': ", form);
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach(errors, k, v)
	{
		if (len < sizeof msg)
			len += (size_t)snprintf(msg + len, sizeof msg - len, "%s%s", first ? "" : "; ",
						json_string_value(v));
		first = false;
	}
	return err_set(e, ERR_INVALID, "%s", msg);
}

int forms_submit(struct vm *vm, const char *name, json_t *args, json_t **result, struct err *e)
{
	json_t *form = json_object_get(vm->forms, name), *given = json_object_get(args, name), *out = NULL;
	int rc;
	if (!json_is_object(given))
		given = args;
	*result = NULL;
	if ((rc = form_validate(form, given, &out, e)) < 0)
		return rc;
	if (rc == FORM_INVALID) {
		rc = submit_errors(name, out, e);
		json_decref(out);
		return rc;
	}
	/* On the server the form API validated the values already and names the submitter. */
	if (json_is_true(json_object_get(json_object_get(form, "options"), "saveSubmittedBy"))) {
		json_t *by = json_object_get(given, "submittedBy");
		json_object_set_new(out, "submittedBy",
				    json_is_object(by) ? json_incref(by) : json_pack("{s:s}", "username", "local"));
	}
	*result = out;
	return 0;
}
