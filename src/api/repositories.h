#ifndef ACCORD_API_REPOSITORIES_H
#define ACCORD_API_REPOSITORIES_H

#include <jansson.h>

#include "api/api.h"
#include "store/projects.h"
#include "store/repositories.h"

/* Repositories of a project (issue 13, docs/api.md "Repositories"), in three files:
 *   repositories.c       routes: create/update, list, get, delete, refresh, validate
 *   repository_body.c    a create/update body → struct repository, with every check
 *   repository_load.c    fetch, checkout into a staging folder and load the definition
 * Shared by those files, projects.c (the `repositories` map) and process_start.c. */

/* The repository JSON of Concord's RepositoryEntry (meta: a JSON object text or NULL). */
json_t *repository_json(const struct repository *r, const char *meta);

/* {name → RepositoryEntry} of every repository of project p (the project record). */
int repositories_map(struct api_call *c, const struct project *p, json_t **out) WUR;

/* Applies a create/update body to r (an existing repository, or zeroed with project and
 * org filled for a new one): name, url, branch/commitId, path, secretId/secretName,
 * disabled, triggersDisabled; *meta receives the body's `meta` as JSON text (new string,
 * NULL when absent).  400 with a message for every invalid field; the secret must be in
 * the project's org, usable by the project, readable by the caller, of type KEY_PAIR or
 * USERNAME_PASSWORD matching the URL, and not protected by a password. */
int repository_body(struct api_call *c, json_t *body, struct repository *r, char **meta) WUR;

/* The URL check alone (also for POST /api/v1/repository/validate). */
int repository_url_check(struct api_call *c, const char *url) WUR;

/* Fetches r (repo_fetch) and loads its definition at the fetched commit: *m receives the
 * model (NULL when the repository has no definition file, which is fine), *commit the
 * commit.  Git errors, unknown branches and definitions that do not load are 400 with
 * their message; nothing is stored but the clone and the fetch time. */
struct model;
struct repo_commit;
int repository_load(struct api_call *c, const struct repository *r, struct repo_commit *commit, struct model **m) WUR;

/* Concord's `repositories` map of a project create/update body ({name: RepositoryEntry}),
 * in two steps so that a bad entry stores nothing: repositories_map_prepare checks every
 * entry against project p (which need not be stored yet: a new project's id is enough) as
 * POST …/repository would — 400 naming the entry — and fetches each and loads its
 * definition; repositories_map_store then creates or updates them with their triggers and,
 * with replace (an update, as Concord replaces the list), deletes the project's
 * repositories the map does not name.  An entry's key is its name unless it has `name` or
 * `id`.  At most REPOSITORIES_MAP_MAX entries.  Free with repositories_map_free. */
#define REPOSITORIES_MAP_MAX 100
struct repo_map;
int repositories_map_prepare(struct api_call *c, const struct project *p, json_t *map, struct repo_map **out) WUR;
int repositories_map_store(struct api_call *c, const struct project *p, const struct repo_map *map, bool replace) WUR;
void repositories_map_free(struct repo_map *map);

/* 503 when this server has no repository support configured (app->repos NULL). */
int repository_available(struct api_call *c) WUR;

#endif
