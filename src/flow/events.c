#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/vm_internal.h"

/* ELEMENT event data (reference §5.8).  Task in/out values are recorded when
 * configuration.events.recordTaskInVars / recordTaskOutVars are true, with the keys of
 * inVarsBlacklist masked. */

static const char *const default_blacklist[] = {"apiKey",   "apiToken",	  "authToken",	  "bindPassword",
						"password", "privateKey", "vaultPassword"};

/* The host's answer first: without an event sink (`accord run` without --events) no step
 * looks the configuration up. */
static bool events_on(struct vm *vm)
{
	return vm->h->ops->event &&
	       !json_is_false(json_object_get(json_object_get(vm->m->configuration, "events"), "recordEvents"));
}

static json_t *base(struct vm *vm, struct thread *t, const struct step *s, const char *desc, const char *corr)
{
	json_t *d = json_object();
	if (s) {
		json_object_set_new(d, "processDefinitionId", json_string(s->flow));
		json_object_set_new(d, "fileName", json_string(s->file));
		json_object_set_new(d, "line", json_integer(s->line));
		json_object_set_new(d, "column", json_integer(s->col));
	}
	json_object_set_new(d, "description", json_string(desc));
	json_object_set_new(d, "correlationId", json_string(corr));
	if (t->id != 0)
		json_object_set_new(d, "threadId", json_integer(t->id));
	(void)vm;
	return d;
}

void events_step(struct vm *vm, struct thread *t, const struct step *s, const char *description)
{
	char corr[UUID_STR_LEN];
	json_t *d;
	if (!events_on(vm))
		return;
	uuid_v4(corr);
	d = base(vm, t, s, description, corr);
	vm->h->ops->event(vm->h->ctx, d);
	json_decref(d);
}

void events_step_about(struct vm *vm, struct thread *t, const struct step *s, const char *prefix, const char *text)
{
	char desc[1024];
	if (!events_on(vm))
		return;
	str_fmt_cut(desc, sizeof desc, "%s%s", prefix, text ? text : "");
	events_step(vm, t, s, desc);
}

static bool cfg_flag(struct vm *vm, const char *key)
{
	return json_is_true(json_object_get(json_object_get(vm->m->configuration, "events"), key));
}

/* Blacklisted keys print as "***" at any depth: a password is as secret in
 * smtpParams.password as in password. */
static void mask_keys(json_t *v, json_t *bl, int depth)
{
	const char *k;
	json_t *x;
	size_t i;
	if (depth > 32)
		return;
	if (json_is_array(v)) {
		json_array_foreach(v, i, x) mask_keys(x, bl, depth + 1);
		return;
	}
	json_object_foreach(v, k, x)
	{
		bool hit = false;
		if (json_is_array(bl)) {
			json_t *b;
			json_array_foreach(bl, i, b) hit = hit || (json_is_string(b) && strcmp(json_string_value(b), k) == 0);
		} else {
			for (i = 0; i < sizeof default_blacklist / sizeof default_blacklist[0]; i++)
				hit = hit || strcmp(default_blacklist[i], k) == 0;
		}
		if (hit)
			json_object_set_new(v, k, json_string("***"));
		else
			mask_keys(x, bl, depth + 1);
	}
}

static json_t *masked(struct vm *vm, json_t *in)
{
	json_t *copy, *bl = json_object_get(json_object_get(vm->m->configuration, "events"), "inVarsBlacklist");
	if (!json_is_object(in))
		return json_incref(in);
	copy = json_deep_copy(in);
	mask_keys(copy, bl, 0);
	return copy;
}

static json_t *task_base(struct vm *vm, struct thread *t, const char *task, const char *method, const char *phase,
			 const char *corr)
{
	char desc[256];
	json_t *d;
	str_fmt_cut(desc, sizeof desc, "Task: %s", task);
	d = base(vm, t, vm->cur, desc, corr);
	json_object_set_new(d, "phase", json_string(phase));
	json_object_set_new(d, "name", json_string(task));
	if (method)
		json_object_set_new(d, "method", json_string(method));
	return d;
}

/* A new copy of corr; NULL counted as a failed allocation (the VM fails the step). */
static char *corr_dup(const char *corr)
{
	char *s = strdup(corr);

	if (!s)
		oom_note();
	return s;
}

char *events_task_pre(struct vm *vm, struct thread *t, const char *task, const char *method, json_t *in)
{
	char corr[UUID_STR_LEN];
	json_t *d;
	uuid_v4(corr);
	if (!events_on(vm))
		return corr_dup(corr);
	d = task_base(vm, t, task, method, "pre", corr);
	if (in && cfg_flag(vm, "recordTaskInVars"))
		json_object_set_new(d, "in", masked(vm, in));
	vm->h->ops->event(vm->h->ctx, d);
	json_decref(d);
	return corr_dup(corr);
}

void events_task_post(struct vm *vm, struct thread *t, const char *task, const char *method, const char *corr,
		      int64_t duration_ms, const char *error, json_t *out)
{
	json_t *d;
	if (!events_on(vm) || !corr)
		return;
	d = task_base(vm, t, task, method, "post", corr);
	json_object_set_new(d, "duration", json_integer(duration_ms));
	if (error)
		json_object_set_new(d, "error", json_string(error));
	if (out && cfg_flag(vm, "recordTaskOutVars"))
		json_object_set(d, "out", out);
	vm->h->ops->event(vm->h->ctx, d);
	json_decref(d);
}
