/* Dry-run mode (flow/host.h): which tasks may run, as Concord's @DryRunReady annotation and
 * a step's `meta.dryRunReady` decide. */
#include <string.h>
#include <strings.h>

#include "flow/el/el.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

/* Tasks without side effects outside the process (or that handle dry-run themselves:
 * http skips non-GET requests, concord starts its children in dry-run mode too,
 * concordSecrets changes nothing, github skips the actions that change something). */
static const char *const ready[] = {"log",  "throw", "sleep", "resource", "datetime", "base64",	      "files",
				    "env",  "vars",  "misc",  "http",	  "concord",  "crypto", "concordSecrets",
				    "github"};

static bool task_ready(const char *task)
{
	for (size_t i = 0; i < sizeof ready / sizeof ready[0]; i++)
		if (strcmp(ready[i], task) == 0)
			return true;
	return false;
}

int task_dry_run_step_ready(struct vm *vm, struct thread *t, const struct step *s, bool *out, struct err *e)
{
	json_t *v = json_object_get(s->meta, "dryRunReady"), *r = NULL;
	struct scope sc;
	struct el_env env;
	int rc;

	*out = false;
	if (!v || json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	scope_init(&sc, vm, t);
	scope_env(&sc, &env);
	rc = el_json_eval_value(v, 0, &env, &r, e);
	scope_cleanup(&sc);
	if (rc < 0)
		return rc;
	*out = json_is_true(r) || (json_is_string(r) && strcasecmp(json_string_value(r), "true") == 0);
	json_decref(r);
	return 0;
}

int task_dry_run_check(struct vm *vm, struct thread *t, const struct step *s, const char *task, struct err *e)
{
	bool ok;

	if (!vm->h->dry_run || task_ready(task))
		return 0;
	if (s && task_dry_run_step_ready(vm, t, s, &ok, e) < 0)
		return -1;
	if (s && ok)
		return 0;
	return err_set(e, ERR_INVALID, "Dry-run mode is not supported for '%s' task (yet)", task);
}
