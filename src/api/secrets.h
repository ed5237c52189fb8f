#ifndef ACCORD_API_SECRETS_H
#define ACCORD_API_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api.h"
#include "auth/rbac.h"
#include "crypto/keypair.h"
#include "http/multipart.h"
#include "store/orgs.h"
#include "store/secrets.h"

/* /api/v1/org/{org}/secret…: the secrets resource, split over
 *   secrets.c         routes, start-up (crypto/server_key.h), read, export, delete, list, access rules
 *   secrets_form.c    create: multipart parts → metadata and plaintext (key generation)
 *   secrets_update.c  update and move (v1 JSON, v2 multipart)
 * The functions below are shared by these files only. */

/* Opens the master key into app->secrets_key (crypto/server_key.h: loaded, checked against
 * the database, rotated) and starts the generator of RSA key pairs ahead of demand
 * (ACCORD_KEYPAIR_POOL pairs, default 2; crypto/keypool.h).  Called once by `accord serve`
 * before serving; api_secrets_cleanup stops the generator and wipes the key. */
int api_secrets_init(struct app *app, struct err *e) WUR;
void api_secrets_cleanup(struct app *app);

/* The org of the path ({org}: 404 when unknown) with the caller's membership checked
 * (403 for outsiders; admins, global readers/writers and org owners pass). */
int secrets_org(struct api_call *c, struct org *o) WUR;

/* The org and the secret of the path, with `need` checked on the secret (404, 403). */
int secrets_load(struct api_call *c, struct org *o, struct secret *s, enum access_level need) WUR;

/* rbac_check for a secret row. */
int secrets_check(struct api_call *c, const struct secret *s, enum access_level need) WUR;

/* Opens the envelope of s with the store password (NULL for none).  400 with Concord's
 * messages when a password is missing, not expected or wrong.  *pt is released with
 * payload_free(*pt, *pt_len). */
int secrets_open(struct api_call *c, const struct secret *s, const char *password, unsigned char **pt,
		 size_t *pt_len) WUR;

/* Seals plaintext for the binding (org id, name) with password or the master key. */
int secrets_seal(struct api_call *c, const char *org_id, const char *name, const char *password,
		 const unsigned char *pt, size_t pt_len, unsigned char **env, size_t *env_len) WUR;

/* A project of the org by id or name, READER checked (400 "Project not found: x" when
 * unknown). */
int secrets_project(struct api_call *c, const char *org_id, const char *id, const char *name, struct project *p) WUR;

/* The projects a request restricts a secret to.  given: the request names projects (an
 * empty list is not "given"); items from the request arena. */
struct secret_projects_req {
	bool given;
	struct secret_project *items;
	size_t n;
};
/* Resolves ref (a project id when by_id, else a name; trimmed) with secrets_project and
 * adds it to l unless it is there already; 400 past SECRET_PROJECTS_MAX. */
int secrets_projects_add(struct api_call *c, const char *org_id, struct str ref, bool by_id,
			 struct secret_projects_req *l) WUR;

/* The plaintext of a new secret value from the parts of a create or v2 update: `data`;
 * `username`+`password`; `public`+`private`, or `public` omitted → a generated pair
 * (keyType rsa|ed25519), whose public key is returned in *public_key (new string, else
 * NULL).  400 naming the missing part, 413 past limits.secret_bytes, 503 when too many
 * key pairs are being generated at once.  *pt is released with payload_free. */
int secrets_form_value(struct api_call *c, const struct multipart *mp, enum secret_type type, unsigned char **pt,
		       size_t *pt_len, char **public_key) WUR;

/* Refuses (400, naming it and the known ones) a part whose name is not in known (NULL-
 * terminated): a misspelt or unsupported restriction must not create an unrestricted
 * secret silently. */
int secrets_form_known_parts(struct api_call *c, const struct multipart *mp, const char *const *known) WUR;
/* The projects of a form: the first non-empty part of projectIds, projectNames, projects,
 * projectId, project (comma lists of ids or names, as Concord's clients send them), each
 * resolved in org_id with secrets_projects_add. */
int secrets_form_projects(struct api_call *c, const struct multipart *mp, const char *org_id,
			  struct secret_projects_req *l) WUR;

/* visibility part: PUBLIC or PRIVATE, case-sensitive like Concord (else 400); absent
 * leaves *is_public unchanged. */
int secrets_form_visibility(struct api_call *c, const struct multipart *mp, bool *is_public) WUR;

/* A NUL-terminated copy of a text part value (trimmed, empty = absent → NULL), from the
 * request arena.  Passwords copied this way are wiped by secrets_wipe_text. */
char *secrets_text(struct api_call *c, const struct multipart *mp, const char *name);
void secrets_wipe_text(char *s);

/* The request body as multipart/form-data (415 for another content type, 400 when
 * malformed). */
int secrets_multipart(struct api_call *c, struct multipart *mp) WUR;

/* Handlers of secrets_form.c and secrets_update.c. */
int secrets_create(struct api_call *c);
int secrets_update_v1(struct api_call *c);
int secrets_update_v2(struct api_call *c);

#endif
