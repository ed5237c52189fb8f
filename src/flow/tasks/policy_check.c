/* The task rules of the process's policy (task.h task_policy_check; docs/security.md
 * "Policies"): checked before a task step or a task's method runs. */
#include <string.h>

#include "flow/tasks/task.h"
#include "flow/vm_internal.h"
#include "policy/policy.h"

int task_policy_check(struct vm *vm, const char *task, const char *method, const json_t *in, const json_t *args,
		      struct err *e)
{
	const json_t *pol = vm->h ? vm->h->policy : NULL, *rule;
	const char *name = json_string_value(json_object_get(pol, "policy"));
	struct err warn;

	switch (policy_task_check(json_object_get(pol, "rules"), task, method, in, args, &rule)) {
	case POLICY_DENY:
		return policy_refuse(e, ERR_FORBIDDEN, name ? name : "?", rule,
				     "Task '{0}' ({1}) is forbidden by the task policy", task,
				     method ? method : "execute");
	case POLICY_WARN:
		policy_refuse(&warn, ERR_FORBIDDEN, name ? name : "?", rule, "Task '{0}' ({1}) is not recommended",
			      task, method ? method : "execute");
		vm_log(vm, FLOW_WARN, "%s", warn.msg);
		return 0;
	default:
		return 0;
	}
}
