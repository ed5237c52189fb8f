#ifndef ACCORD_API_ACCESS_RULES_H
#define ACCORD_API_ACCESS_RULES_H

#include "api/api.h"
#include "auth/rbac.h"

/* Team access rules of one resource (project, secret, inventory): the whole behaviour of
 * the three endpoints every such resource exposes, so that each resource module only
 * looks its resource up and calls one of these:
 *
 *   GET  …/{resource}/access       → [{"teamId","orgName","teamName","level"}] sorted by
 *                                     team name                             (needs READER)
 *   POST …/{resource}/access       {"teamId"|"orgName"+"teamName","level"}
 *                                   → {"ok":true,"result":"UPDATED"}        (needs OWNER)
 *   POST …/{resource}/access/bulk  [entry, …] replaces every rule; [] removes them all
 *                                   → {"ok":true,"result":"UPDATED"}        (needs OWNER)
 *
 * r describes the resource exactly as for rbac_check (r->type is the resource_access
 * type, "PROJECT", "SECRET" or "INVENTORY"); it is borrowed for the call.  The caller has
 * already answered 404 for an unknown resource.  These functions check access with
 * rbac_check, read and validate the body (400 naming the field, the level or the unknown
 * team), store the rules (bulk: in one transaction, nothing changes on any error) and
 * reply.  A rule's team must belong to the resource's organization: teamId of another
 * org's team, or an orgName other than the resource's org, is 400.  Return value and
 * c->err as for any api_handler. */
int access_rules_list(struct api_call *c, const struct rbac_resource *r);
int access_rules_update(struct api_call *c, const struct rbac_resource *r);
int access_rules_replace(struct api_call *c, const struct rbac_resource *r);

#endif
