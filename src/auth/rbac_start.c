/* Who may start a process where (rbac_start.h). */
#include <string.h>

#include "auth/rbac.h"
#include "auth/rbac_start.h"

#define DEFAULT_ORG_ID "0fac1b18-d179-11e7-b3e7-d7df4543ed4f"

struct rbac_resource rbac_project_res(const struct project *p)
{
	return (struct rbac_resource){.type = "PROJECT",
				      .kind = "project",
				      .id = p->id,
				      .name = p->name,
				      .org_id = p->org_id,
				      .owner_id = p->owner_id,
				      .is_public = strcmp(p->visibility, "PUBLIC") == 0};
}

/* Raw payloads into a project follow its rawPayloadMode, out variables its
 * outVariablesMode; what: "raw payloads" or "custom out variables". */
static int mode_ok(struct store_conn *c, const struct principal *p, const struct org *o, const struct project *pr,
		   const char *mode, const char *what, struct err *e)
{
	struct rbac_resource res = rbac_project_res(pr);
	enum access_level need;

	if (strcmp(mode, "EVERYONE") == 0)
		return 0;
	if (strcmp(mode, "ORG_MEMBERS") == 0)
		return rbac_org_user(c, p, o, RBAC_ORG_MEMBER, e)
			   ? err_set(e, ERR_FORBIDDEN, "The project accepts %s from members of %s only: %s", what,
				     o->name, pr->name)
			   : 0;
	if (strcmp(mode, "OWNERS") != 0 && strcmp(mode, "TEAM_MEMBERS") != 0) /* DISABLED */
		return err_set(e, ERR_INVALID, "The project is not accepting %s: %s", what, pr->id);
	need = strcmp(mode, "OWNERS") == 0 ? ACCESS_OWNER : ACCESS_WRITER;
	if (rbac_check(c, p, &res, need, e))
		return err_set(e, ERR_FORBIDDEN, "The project accepts %s from its %s only: %s", what,
			       need == ACCESS_OWNER ? "owners" : "team members", pr->name);
	return 0;
}

int rbac_process_out_vars(struct store_conn *c, const struct principal *p, const struct org *o,
			  const struct project *pr, struct err *e)
{
	return pr ? mode_ok(c, p, o, pr, pr->out_variables_mode, "custom out variables", e) : 0;
}

int rbac_process_start(struct store_conn *c, const struct principal *p, const struct org *o, const struct project *pr,
		       bool raw_payload, struct err *e)
{
	/* The cron user stands for one project's triggers at a time (principal.h): a process it
	 * started would act for the project it lands in, so it starts in its own only. */
	if (!principal_acts_in(p, pr ? pr->id : NULL))
		return err_set(e, ERR_FORBIDDEN,
			       "The current user (%s) acts for the project of its own process only: it cannot start "
			       "processes in %s%s",
			       p->user.username, pr ? "project " : "organization ", pr ? pr->name : o->name);
	if (pr) {
		struct rbac_resource res = rbac_project_res(pr);
		if (rbac_check(c, p, &res, ACCESS_READER, e))
			return -1;
		return raw_payload ? mode_ok(c, p, o, pr, pr->raw_payload_mode, "raw payloads", e) : 0;
	}
	/* An org without a project: its members may run one-off processes there (anyone in
	 * Default) — within a scoped key's narrowing. */
	if (rbac_org_reach(p, o->id, o->name, e))
		return -ERR_FORBIDDEN;
	if (strcmp(o->id, DEFAULT_ORG_ID) != 0)
		return rbac_org(c, p, o, RBAC_ORG_MEMBER, e);
	return 0;
}
