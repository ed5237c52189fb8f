#ifndef ACCORD_STORE_POLICIES_H
#define ACCORD_STORE_POLICIES_H

#include <stdint.h>

#include <jansson.h>

#include "base/uuid.h"
#include "store/store.h"

/* Policies (schema 039, docs/security.md "Policies"): named rule documents, their links to
 * the server, orgs, projects and users, and the effective policy of a place.  The store
 * keeps rules as JSON text; policy/policy.h says what a valid document is. */

#define POLICY_NAME_MAX 128

struct policy_place {
	const char *org_id, *project_id, *user_id; /* NULL: not part of the place */
};

/* Creates the policy name or replaces its parent and rules: *created tells which; id
 * receives its id.  parent_id NULL: none; an unknown parent or one that has the policy among
 * its ancestors (a cycle) is ERR_INVALID. */
int store_policy_put(struct store_conn *c, const char *name, const char *parent_id, const char *rules,
		     char id[UUID_STR_LEN], bool *created, struct err *e) WUR;
/* {"id", "name", "parentId"?, "rules"}: a new object in *out; ERR_NOT_FOUND "Policy not
 * found: <name>". */
int store_policy_get(struct store_conn *c, const char *name, json_t **out, struct err *e) WUR;
/* Every policy, by name, as store_policy_get has one, with "links": [{orgId?, projectId?,
 * userId?, orgName?, projectName?, userName?}, …] (orgName of a project's link: its org's):
 * a new array in *out. */
int store_policy_list(struct store_conn *c, json_t **out, struct err *e) WUR;
int store_policy_delete(struct store_conn *c, const char *name, struct err *e) WUR;

/* Links the policy to the place (all NULL: the server), replacing the policy linked there. */
int store_policy_link(struct store_conn *c, const char *policy_id, const struct policy_place *at, struct err *e) WUR;
/* ERR_NOT_FOUND when the policy is not linked there. */
int store_policy_unlink(struct store_conn *c, const char *policy_id, const struct policy_place *at, struct err *e) WUR;

/* The effective policy of a place, as Concord picks it: the policy linked to the user
 * within the project, else within the org, else to the user, else to the project, else to
 * the org, else to the server; its rules merged over those of its ancestors (the oldest
 * first, objects deep-merged).  *rules a new object (NULL: no policy applies), name the
 * linked policy's name. */
int store_policy_effective(struct store_conn *c, const struct policy_place *at, json_t **rules,
			   char name[POLICY_NAME_MAX + 1], struct err *e) WUR;

/* What a process keeps of its effective policy (see schema 039): max_* < 0 for none, rules
 * (JSON text, NULL: none). */
int store_process_policy_put(struct store_conn *c, const char *instance_id, const char *policy_name,
			     int64_t max_per_org, int64_t max_per_project, const char *rules, struct err *e) WUR;
/* {"policy": name, "rules": {…}} of a process: a new object, NULL when it has none. */
int store_process_policy_get(struct store_conn *c, const char *instance_id, json_t **out, struct err *e) WUR;
/* Whether any policy may apply (a link or a process's policy exists; on PostgreSQL always):
 * false lets a caller skip its policy reads. */
int store_policy_any(struct store_conn *c, bool *any, struct err *e) WUR;

/* Processes of the org (or project, or all when both NULL) whose status is status. */
int store_policy_count_processes(struct store_conn *c, const char *org_id, const char *project_id, const char *status,
				 int64_t *n, struct err *e) WUR;
/* Inside a transaction that counts processes and then stores one: makes such transactions
 * take turns on every node (PostgreSQL: a transaction-scoped advisory lock; SQLite's write
 * transactions take turns anyway). */
int store_policy_count_turn(struct store_conn *c, struct err *e) WUR;
/* The number of ancestors of the process id (its parent, the parent's parent, …). */
int store_policy_fork_depth(struct store_conn *c, const char *id, int64_t *n, struct err *e) WUR;

#endif
