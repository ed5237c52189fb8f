#ifndef ACCORD_BASE_NAMES_H
#define ACCORD_BASE_NAMES_H

#include <stdbool.h>

#include "base/err.h"

/* Resource names (orgs, teams, projects, secrets, inventories, queries, API keys):
 * 3–128 characters of letters, digits and `_ @ . - ~`, starting with a letter or digit
 * (Concord's ConcordKey pattern).  API-key names may also contain `#`. */
enum name_kind { NAME_PLAIN, NAME_APIKEY };

bool name_valid(const char *s, enum name_kind kind);
/* ERR_INVALID "Invalid <what> name '<s>': …the rule…" when not valid. */
int name_check(const char *s, const char *what, enum name_kind kind, struct err *e) WUR;

#endif
