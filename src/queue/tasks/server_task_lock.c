/* The lock and unlock tasks (Concord's lock-tasks plugin; docs/flows.md "lock"):
 *
 *   - task: lock            in: {name, scope: PROJECT (default) | ORG}
 *   - task: unlock          in: {name, scope}
 *   ${lock.lock(name, scope)}   ${lock.unlock(name, scope)}   ${unlock.unlock(name, scope)}
 *
 * A lock belongs to the calling process's project (PROJECT) or organization (ORG).  A
 * `lock` step that cannot take it suspends its process (no runner, no worker slot) until
 * the lock is handed to it: by an unlock, or the end of its holder (queue/tasks/locks.c).  In an
 * expression a lock cannot wait: it is taken at once or the call fails.  Unlocking a lock
 * the process does not hold does nothing, as in Concord. */
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "queue/tasks/locks.h"
#include "queue/tasks/server_tasks.h"
#include "store/process_locks.h"

/* The lock a call names (name, scope: the `in` object's keys, or the method's arguments). */
static int lock_key(struct task_call *tc, json_t *name, json_t *scope, struct lock_key *k, struct err *e)
{
	const struct process *p = &tc->r->p;
	const char *s = json_is_string(scope) ? json_string_value(scope) : NULL;

	if (!json_is_string(name) || !*json_string_value(name))
		return err_set(e, ERR_INVALID, "Mandatory variable 'name' is required");
	if (strlen(json_string_value(name)) > LOCK_NAME_MAX)
		return err_set(e, ERR_INVALID, "Lock name too long (at most %d bytes): '%.64s…'", LOCK_NAME_MAX,
			       json_string_value(name));
	if (scope && !json_is_null(scope) && !json_is_string(scope))
		return err_set(e, ERR_INVALID, "'scope' must be a string (ORG or PROJECT)");
	if (!(s = lock_scope_name(s)))
		return err_set(e, ERR_INVALID, "Unknown scope '%.64s', expected: org or project",
			       json_string_value(scope));
	if (strcmp(s, "PROJECT") == 0 && !p->project_id[0])
		return err_set(e, ERR_INVALID, "Lock '%.64s' with scope PROJECT needs a process of a project: use scope ORG",
			       json_string_value(name));
	*k = (struct lock_key){s, s[0] == 'O' ? p->org_id : p->project_id, json_string_value(name)};
	return 0;
}

enum take_mode { TAKE_WAIT, TAKE_NOW, TAKE_RESUMED };

static int take(struct task_call *tc, const struct lock_key *k, enum take_mode mode, struct err *e)
{
	struct lock_owner o = {tc->r->p.instance_id, tc->r->p.org_id, tc->r->p.project_id};
	char holder[UUID_STR_LEN], ev[64], uid[UUID_STR_LEN];
	int rc;

	uuid_v4(uid);
	if (str_fmt(ev, sizeof ev, "lock-%s", uid))
		return err_set(e, ERR_INTERNAL, "event name too long");
	if ((rc = store_lock_take(tc->c, k, &o, mode == TAKE_WAIT ? ev : NULL, holder, e)) < 0)
		return -1;
	if (rc == 1)
		return 0;
	if (mode == TAKE_RESUMED) /* resumed by hand with the lock's event, not handed the lock */
		return err_set(e, ERR_CONFLICT, "Process resumed without lock '%s', which process %s holds", k->name,
			       holder);
	if (mode == TAKE_NOW)
		return err_set(e, ERR_CONFLICT,
			       "Lock '%s' is held by process %s: an expression cannot wait for it, use the lock "
			       "task as a step",
			       k->name, holder);
	queue_log_line(tc->c, tc->r->p.instance_id, "INFO", "Waiting for lock '%s' (scope %s) held by process %s",
		       k->name, k->scope, holder);
	/* The step gets this back when the process resumes, the lock handed to it. */
	tc->out = json_pack("{s:s, s:s}", "name", k->name, "scope", k->scope);
	if (!(tc->suspend = strdup(ev)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

static int release(struct task_call *tc, const struct lock_key *k, struct err *e)
{
	json_t *handed = NULL;

	if (store_lock_release(tc->c, k, tc->r->p.instance_id, &handed, e))
		return -1;
	locks_resume_handed(tc->r->q, tc->c, handed);
	json_decref(handed);
	return 0;
}

/* The lock step that waited, its process resumed ({name, scope}: what take gave it): it
 * holds the lock now, handed to it; else it takes it if free, or fails. */
static int resumed(struct task_call *tc, json_t *payload, struct err *e)
{
	struct lock_key k;

	if (!json_is_object(payload))
		return err_set(e, ERR_INVALID, "lock.resume: not a waiting lock step's state");
	if (lock_key(tc, json_object_get(payload, "name"), json_object_get(payload, "scope"), &k, e))
		return -1;
	return take(tc, &k, TAKE_RESUMED, e);
}

static int run(struct task_call *tc, bool unlock, struct err *e)
{
	json_t *name, *scope;
	struct lock_key k;

	if (tc->method) {
		bool m_unlock = strcmp(tc->method, "unlock") == 0, m_lock = !unlock && strcmp(tc->method, "lock") == 0;
		if (!unlock && strcmp(tc->method, "resume") == 0) /* the step that waited */
			return resumed(tc, json_array_get(tc->args, 0), e);
		if (!m_unlock && !m_lock)
			return err_set(e, ERR_INVALID, "Method not found: %s.%s", tc->task, tc->method);
		if (json_array_size(tc->args) < 1 || json_array_size(tc->args) > 2)
			return err_set(e, ERR_INVALID, "%s.%s(name, scope) takes 1 or 2 arguments, got %zu", tc->task,
				       tc->method, json_array_size(tc->args));
		unlock = m_unlock;
		name = json_array_get(tc->args, 0);
		scope = json_array_get(tc->args, 1);
	} else {
		if (!json_is_object(tc->args))
			return err_set(e, ERR_INVALID, "%s: 'in' must be an object", tc->task);
		name = json_object_get(tc->args, "name");
		scope = json_object_get(tc->args, "scope");
	}
	if (lock_key(tc, name, scope, &k, e))
		return -1;
	return unlock ? release(tc, &k, e) : take(tc, &k, tc->method ? TAKE_NOW : TAKE_WAIT, e);
}

int server_task_lock(struct task_call *tc, struct err *e)
{
	return run(tc, false, e);
}

int server_task_unlock(struct task_call *tc, struct err *e)
{
	return run(tc, true, e);
}
