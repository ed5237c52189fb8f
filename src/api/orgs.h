#ifndef ACCORD_API_ORGS_H
#define ACCORD_API_ORGS_H

#include <jansson.h>

#include "store/orgs.h"

/* Concord's OrganizationEntry of o (id, name, visibility, owner): new reference.  Shared
 * by orgs.c and the console's whoami. */
json_t *org_json(const struct org *o);

#endif
