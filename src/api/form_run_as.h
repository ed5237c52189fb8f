#ifndef ACCORD_API_FORM_RUN_AS_H
#define ACCORD_API_FORM_RUN_AS_H

#include <jansson.h>
#include <stdbool.h>

#include "api/api.h"
#include "store/processes.h"

/* A form's `runAs` (docs/api.md "Forms", Concord's FormAccessManager): who may read and
 * submit the pending form `name` of process p.  runAs.username (a name or a list) names
 * users; runAs.ldap names directory groups in Concord's three spellings — {group: "g"},
 * {group: ["g", …]} and [{group: "g"}, …] — matched against the groups the user's last
 * directory login read (auth/ldap_group_match.h); any one group suffices.  Given both, the
 * caller must pass both.  Admins always pass.
 *
 * *restricted is set when runAs names users or groups (the caller then needs nothing else);
 * 0 when the caller may, or when nothing is restricted; ERR_FORBIDDEN in Concord's words
 * otherwise ("The current user (u) doesn't have the necessary permissions to access the
 * form." / "… to resume process. Expected LDAP group(s) '[g, …]'"). */
int api_form_run_as_check(struct api_call *c, const struct process *p, const json_t *form, bool *restricted) WUR;

#endif
