#include "api/process_access.h"

#include <string.h>

#include "auth/rbac.h"
#include "base/str.h"
#include "base/uuid.h"
#include "store/orgs.h"

static int denied(struct api_call *c, const struct process *p, enum proc_need need)
{
	if (need == PROC_KILL)
		return api_fail(c, ERR_FORBIDDEN,
				"The current user (%s) does not have permissions to kill or disable the process: %s",
				c->who.user.username, p->instance_id);
	return api_fail(c, ERR_FORBIDDEN, "The current user (%s) doesn't have the necessary permissions to access process: %s",
			c->who.user.username, p->instance_id);
}

int api_process_reach(struct api_call *c, const struct process *p)
{
	char what[UUID_STR_LEN + 16];

	if (!c->who.scopes.n || !c->who.need.set)
		return 0;
	str_fmt_cut(what, sizeof what, "process: %s", p->instance_id);
	if (scope_reaches(&c->who.scopes, &c->who.need, SCOPE_AT_PROJECT, p->org_id,
			  p->project_id[0] ? p->project_id : NULL, what, &c->err))
		return 0;
	return -ERR_FORBIDDEN;
}

int api_process_check(struct api_call *c, const struct process *p, enum proc_need need)
{
	const struct principal *who = &c->who;
	struct project pr;
	struct rbac_resource res;
	struct err ignored;

	if (api_process_reach(c, p))
		return -ERR_FORBIDDEN;
	if (principal_is_admin(who))
		return 0;
	if (who->method == AUTH_SESSION && strcmp(who->session_process, p->instance_id) == 0)
		return 0;
	if (principal_initiated(who, p->initiator_id, p->project_id))
		return 0;
	if (need == PROC_READ && (who->user.roles & (ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER)))
		return 0;
	if (!p->project_id[0] || store_project_get(c->db, p->project_id, &pr, &ignored))
		return denied(c, p, need);
	res = (struct rbac_resource){.type = "PROJECT",
				     .kind = "project",
				     .id = pr.id,
				     .name = pr.name,
				     .org_id = pr.org_id,
				     .owner_id = pr.owner_id,
				     .is_public = strcmp(pr.visibility, "PUBLIC") == 0};
	if (need == PROC_KILL) /* rbac's refusal is Concord's ProjectAccessManager text */
		return rbac_check(c->db, who, &res, ACCESS_WRITER, &c->err);
	if (rbac_check(c->db, who, &res, need == PROC_READ ? ACCESS_READER : ACCESS_WRITER, &ignored))
		return denied(c, p, need);
	return 0;
}

int api_process_load(struct api_call *c, const char *id, enum proc_need need, struct process *p)
{
	int rc;

	memset(p, 0, sizeof *p);
	if (!id || !uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_NOT_FOUND, "Process instance not found: %.64s", id ? id : "");
	if ((rc = store_process_get(c->db, id, p, &c->err)))
		return rc;
	if ((rc = api_process_check(c, p, need))) {
		store_process_cleanup(p);
		return rc;
	}
	return 0;
}
