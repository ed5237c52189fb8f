#ifndef ACCORD_API_APIKEY_SCOPES_H
#define ACCORD_API_APIKEY_SCOPES_H

#include <jansson.h>

#include "api/api.h"
#include "store/apikeys.h"

/* The scopes and rate limit of a new API key (docs/security.md "Scoped API keys"), from
 * the create request's "scopes" (a list of strings) and "rateLimit" ("N/s", "N/min"):
 * parsed, their org/project narrowing resolved to ids (each must exist and be visible to
 * the key's user u), into k->scopes, k->rate_count and k->rate_window_ms.  A caller who
 * uses a scoped or rate-limited key may create keys with scopes it holds and a limit no
 * looser than its own only.  400 for what does not parse or resolve, 403 for more than the
 * caller holds; nothing is stored either way. */
int api_apikey_scopes(struct api_call *c, json_t *body, const struct user *u, struct apikey *k) WUR;

/* Notes the key's scopes (their texts, comma-separated) and rate limit for the audit entry
 * of its creation, when it has them. */
void api_apikey_scopes_audit(struct api_call *c, const struct apikey *k);

/* Adds "scopes" and "rateLimit" of k to the key's JSON v when it has them. */
void api_apikey_scopes_json(const struct apikey *k, json_t *v);

#endif
