#include "flow/procdir.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jsonx.h"
#include "base/oom.h"
#include "base/path.h"

static char *state_path(const char *workdir, const char *rel)
{
	char *s = NULL;
	if (asprintf(&s, "%s/_attachments/_state%s%s", workdir, rel ? "/" : "", rel ? rel : "") < 0)
		return NULL;
	return s;
}

static json_t *read_json(const char *path, struct err *e)
{
	size_t len;
	char *text = path_read_file(path, 256u * 1024 * 1024, &len, e);
	json_t *v;
	if (!text)
		return NULL;
	v = jsonx_parse(text, len, 100000, e);
	free(text);
	return v;
}

static int write_json_file(const char *path, json_t *v, struct err *e)
{
	char *text = json_dumps(v, JSON_INDENT(2));
	int rc;
	if (!text)
		return oom_fail(e);
	rc = path_write_file(path, text, strlen(text), 0600, e);
	free(text);
	return rc;
}

/* "@id" tells the engine's own error objects apart (a rethrow); not for users: removed from
 * an error and the errors inside it (a parallel failure's exceptions, a cause), never
 * from a payload the flow threw with. */
static void strip_ids(json_t *err)
{
	size_t i;
	json_t *v;

	if (!json_is_object(err))
		return;
	json_object_del(err, "@id");
	strip_ids(json_object_get(err, "cause"));
	json_array_foreach(json_object_get(err, "exceptions"), i, v) strip_ids(v);
}

int procdir_write_out(const char *workdir, struct vm *vm, const struct mask *sensitive, json_t *cfg_out,
		      json_t *extra_out, bool failed, struct err *e)
{
	uint64_t allocs_failed = oom_count();
	json_t *names = json_array(), *out, *old;
	char *dir = NULL, *file = NULL;
	int rc = 0;

	if (json_is_array(cfg_out))
		json_array_extend(names, cfg_out);
	if (json_is_array(extra_out))
		json_array_extend(names, extra_out);
	out = vm_out_vars(vm, names);
	if (failed && vm_last_error(vm)) {
		json_t *le = json_deep_copy(vm_last_error(vm));
		strip_ids(le);
		json_object_set_new(out, "lastError", le);
	}
	if (json_object_size(out) == 0) /* nothing to report: no file, as in Concord */
		goto done;
	if (sensitive && (sensitive->n || sensitive->lost)) { /* a copy: vm_out_vars shares the VM's values, which stay */
		json_t *copy = json_deep_copy(out);
		json_decref(out);
		if (!(out = copy)) {
			rc = oom_fail(e);
			goto done;
		}
		mask_json(sensitive, out);
	}
	if (asprintf(&dir, "%s/_attachments", workdir) < 0 || asprintf(&file, "%s/out.json", dir) < 0) {
		rc = oom_fail(e);
		goto done;
	}
	if ((rc = path_mkdirs(dir, 0700, e)) < 0)
		goto done;
	if (access(file, R_OK) == 0 && (old = read_json(file, e))) {
		json_object_update(old, out);
		json_decref(out);
		out = old;
	}
	/* jansson's setters drop a value silently when an allocation fails: never half a file */
	if (oom_count() != allocs_failed) {
		rc = err_set(e, ERR_INTERNAL, "Out of memory: the out variables could not be written whole");
		goto done;
	}
	rc = write_json_file(file, out, e);
done:
	free(dir);
	free(file);
	json_decref(names);
	json_decref(out);
	return rc;
}

static int write_forms(const char *fdir, json_t *forms, struct err *e)
{
	const char *name;
	json_t *form;

	json_object_foreach(forms, name, form)
	{
		char *ff = path_join_safe(fdir, name, e);
		int rc = ff ? write_json_file(ff, form, e) : -1;
		free(ff);
		if (rc < 0)
			return -1;
	}
	return 0;
}

int procdir_write_suspended(const char *workdir, struct vm *vm, FILE *report, struct err *e)
{
	uint64_t allocs_failed = oom_count();
	json_t *state = vm_save(vm), *events = vm_waiting_events(vm), *forms = vm_pending_forms(vm), *ev;
	char *fdir = state_path(workdir, "V2forms"), *file = NULL;
	const char *name;
	json_t *form;
	struct buf b;
	size_t i;
	int rc = -1;

	buf_init(&b, 0);
	if (oom_count() != allocs_failed) { /* a state missing a value would resume wrong */
		err_set(e, ERR_INTERNAL, "Out of memory: the process state could not be saved whole");
		goto out;
	}
	/* Only the forms still pending: a form submitted by this resume is gone. */
	if (!fdir || path_remove_tree(fdir, e) < 0 || path_mkdirs(fdir, 0700, e) < 0 ||
	    !(file = state_path(workdir, "instance")) || write_json_file(file, state, e) < 0)
		goto out;
	json_array_foreach(events, i, ev) if (buf_printf(&b, e, "%s\n", json_string_value(ev)) < 0) goto out;
	free(file);
	if (!(file = state_path(workdir, "_suspend")) || path_write_file(file, b.data, b.len, 0600, e) < 0 ||
	    write_forms(fdir, forms, e) < 0)
		goto out;
	if (report) {
		for (i = 0; i + 1 < b.len; i++)
			if (b.data[i] == '\n')
				b.data[i] = ' ';
		fprintf(report, "Process suspended, waiting for: %.*s\n", b.len ? (int)b.len - 1 : 0, b.data);
		json_object_foreach(forms, name, form) fprintf(report, "Pending form: %s\n", name);
	}
	rc = 0;
out:
	if (rc < 0 && e->code == ERR_OK)
		err_set(e, ERR_INTERNAL, "cannot save the process state in %s", workdir);
	buf_cleanup(&b);
	free(fdir);
	free(file);
	json_decref(state);
	json_decref(events);
	json_decref(forms);
	return rc;
}

int procdir_drop_state(const char *workdir, struct err *e)
{
	char *files[] = {state_path(workdir, "instance"), state_path(workdir, "_suspend"),
			 state_path(workdir, "V2forms")};
	int rc = 0;

	for (size_t i = 0; i < 3; i++) {
		if (!files[i] || path_remove_tree(files[i], e) < 0)
			rc = -1;
		free(files[i]);
	}
	return rc;
}

static bool waits_for(json_t *st, const char *event)
{
	size_t i;
	json_t *t;

	json_array_foreach(json_object_get(st, "threads"), i, t)
	{
		const char *ev = json_string_value(json_object_get(t, "event"));
		if (ev && strcmp(ev, event) == 0)
			return true;
	}
	return json_object_get(json_object_get(st, "forms"), event) != NULL;
}

json_t *procdir_saved_state(const char *workdir, const char *event, bool *checkpoint, struct err *e)
{
	char *instance = state_path(workdir, "instance");
	json_t *st = NULL, *cp;

	*checkpoint = false;
	if (instance && access(instance, R_OK) == 0 && (st = read_json(instance, e)) && waits_for(st, event))
		goto out;
	/* Not waited for: a checkpoint of that name, else the state as it is (vm_resume then
	 * says what the process waits for). */
	if ((cp = procdir_checkpoint_state(workdir, event, e))) {
		json_decref(st);
		st = cp;
		*checkpoint = true;
	}
out:
	free(instance);
	if (!st)
		err_set(e, ERR_NOT_FOUND, "the process in %s does not wait for '%s'", workdir, event);
	return st;
}

json_t *procdir_checkpoint_state(const char *workdir, const char *name, struct err *e)
{
	char *cp = NULL, *full = NULL;
	json_t *st = NULL;
	bool plain = !strchr(name, '/');

	if (plain && asprintf(&cp, "checkpoints/%s", name) < 0) {
		cp = NULL; /* undefined after a failure */
		oom_fail(e);
	} else if (plain && !(full = state_path(workdir, cp)))
		oom_fail(e);
	else if (plain && access(full, R_OK) == 0)
		st = read_json(full, e);
	else
		err_set(e, ERR_NOT_FOUND, "the process in %s has no checkpoint '%s'", workdir, name);
	free(cp);
	free(full);
	return st;
}

int procdir_write_checkpoint(const char *workdir, const char *name, json_t *state, struct err *e)
{
	char *dir = state_path(workdir, "checkpoints"), *file = NULL, *text = NULL;
	int rc = -1;

	if (!dir)
		return oom_fail(e);
	if (path_mkdirs(dir, 0700, e) < 0)
		goto out;
	file = path_join_safe(dir, name, e);
	text = json_dumps(state, JSON_COMPACT);
	if (file && text)
		rc = path_write_file(file, text, strlen(text), 0600, e);
	else if (file)
		rc = oom_fail(e);
out:
	free(dir);
	free(file);
	free(text);
	return rc;
}
