#ifndef ACCORD_POLICY_POLICY_H
#define ACCORD_POLICY_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* The policy document (docs/security.md "Policies", Concord's getting-started/policies.md):
 * what a valid one is, how documents merge, and the pieces of the checks every layer shares
 * (numbers, patterns, messages).  Pure: jansson and POSIX regular expressions only, so that
 * the API, the queue and the flow engine (task rules) all use it. */

/* Checks a rules document: an object whose keys are known rules, each of its shape.
 * ERR_INVALID naming the path and what is wrong ("rules.queue.concurrent.maxPerOrg:
 * expected a number, got a string"). */
int policy_validate(const json_t *rules, struct err *e) WUR;

/* Deep-merges over into into (objects key by key, anything else replaced), as Concord
 * merges a policy over its parent. */
void policy_rules_merge(json_t *into, const json_t *over);

/* A number of the document: an integer, or a string of digits (Concord's examples write
 * "10"); -1 when v is absent or not one. */
int64_t policy_number(const json_t *v);

/* A size of the document (the file rule's maxSize, the container rule's maxRam, a process's
 * `container.ram`): bytes, or digits with k, m, g or t (in any case, 1024-based); -1 when v
 * is not one. */
int64_t policy_size_bytes(const json_t *v);

/* Whether s matches pattern entirely (POSIX extended; a pattern that does not compile
 * matches only itself). */
bool policy_match(const char *pattern, const char *s);

/* Sets e to code with the rule's msg (its {0} and {1} replaced by a0 and a1), or dflt when
 * the rule has none, naming the policy: "<msg> (policy '<name>')".  Returns -code. */
int policy_refuse(struct err *e, enum err_code code, const char *policy, const json_t *rule, const char *dflt,
		  const char *a0, const char *a1);

/* The verdict of action rules (task, ansible, entity, file): the first matching rule of
 * allow (then nothing else applies), else of deny, else of warn. */
enum policy_verdict { POLICY_PASS, POLICY_DENY, POLICY_WARN };
typedef bool (*policy_rule_match)(const json_t *rule, void *ctx);
enum policy_verdict policy_decide(const json_t *group, policy_rule_match match, void *ctx, const json_t **rule);

/* Task rules (rules.task): the verdict for a call of task's method (a step is "execute")
 * with its input: in (the step's `in` object, params matched by name) or args (a method's
 * arguments, params matched by index).  *rule borrows the matching rule. */
enum policy_verdict policy_task_check(const json_t *rules, const char *task, const char *method, const json_t *in,
				      const json_t *args, const json_t **rule);

/* Entity rules (rules.entity): the verdict for action ("create", "update") on an entity
 * kind ("project", "secret", …) whose attributes and owner make subject
 * {"entity": {…}, "owner": {…}}; a rule's conditions match when every key of them matches
 * (objects key by key, a list when any of its values matches, a string as a pattern against
 * the text of a string, number or boolean, anything else by equality). */
enum policy_verdict policy_entity_check(const json_t *rules, const char *entity, const char *action,
					const json_t *subject, const json_t **rule);

#endif
