#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/datetime.h"
#include "base/oom.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

static int sleep_execute(struct task_ctx *c, json_t *in, json_t **out, struct err *e)
{
	json_t *dur = json_object_get(in, "duration"), *until = json_object_get(in, "until");
	bool suspend = json_is_true(json_object_get(in, "suspend"));
	int64_t ms = 0, target;
	*out = NULL;
	if (dur && until)
		return err_set(e, ERR_INVALID, "'duration' and 'until' are mutually exclusive");
	if (dur) {
		if (value_to_long(dur, &ms, e) < 0 || ms < 0)
			return err_set(e, ERR_INVALID, "'duration' must be a number of seconds >= 0");
		ms *= 1000;
		vm_log(c->vm, FLOW_INFO, "Sleeping for %lldms", (long long)ms);
	} else if (until) {
		if (!json_is_string(until) || dt_parse_iso(json_string_value(until), strlen(json_string_value(until)),
							   true, &target, "until", e) < 0)
			return -1;
		ms = target - dt_now_ms();
		vm_log(c->vm, FLOW_INFO, "Sleeping until %s...", json_string_value(until));
	} else {
		return err_set(e, ERR_INVALID, "'duration' or 'until' is required");
	}
	if (suspend) {
		char id[UUID_STR_LEN], ev[UUID_STR_LEN + 40];
		uuid_v4(id);
		/* The wake-up time travels in the event name, so the server knows when to resume
		 * (task_sleep_wake_at) and the saved state needs nothing else. */
		if (str_fmt(ev, sizeof ev, "sleep-%lld-%s", (long long)(dt_now_ms() + (ms > 0 ? ms : 0)), id))
			return err_set(e, ERR_INTERNAL, "event name too long");
		c->suspend_event = strdup(ev);
		return c->suspend_event ? 0 : oom_fail(e);
	}
	vm_sleep(c->vm, c->t, ms);
	return 0;
}

int task_sleep_wake_at(const char *event, int64_t *at)
{
	const char *p = event;
	int64_t v = 0;

	if (strncmp(p, "sleep-", 6) != 0)
		return 0;
	for (p += 6; *p >= '0' && *p <= '9'; p++) {
		if (v > (INT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (*p - '0');
	}
	if (p == event + 6 || *p != '-')
		return 0;
	*at = v;
	return 1;
}

static int m_ms(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	long long ms;
	if (task_arg_int(args, 0, "ms", &ms, e) < 0)
		return -1;
	vm_sleep(c->vm, c->t, ms);
	*out = json_null();
	return 0;
}

static const struct task_method methods[] = {{"ms", m_ms, 1, 1}, {NULL, NULL, 0, 0}};

const struct task_def task_sleep = {"sleep", sleep_execute, methods, false, true};
