#ifndef ACCORD_API_PROJECTS_H
#define ACCORD_API_PROJECTS_H

#include "api/api.h"
#include "auth/rbac.h"
#include "store/projects.h"

/* Shared by projects.c and the resources beneath a project (repositories.c). */

/* The access-check view of a project. */
struct rbac_resource projects_resource(const struct project *p);

/* The org and project of the path ({org}, {project}): 404 naming whichever is unknown (a
 * PRIVATE org the caller cannot see counts as unknown), then `need` on the project. */
int projects_path(struct api_call *c, struct project *p, enum access_level need) WUR;

#endif
