#ifndef ACCORD_STORE_TRIGGERS_H
#define ACCORD_STORE_TRIGGERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/uuid.h"
#include "store/store.h"

/* Triggers read from repositories' definitions (schema/011_repositories.sql). */

struct trigger {
	char id[UUID_STR_LEN];
	char project_id[UUID_STR_LEN];
	char repo_id[UUID_STR_LEN];
	char event_source[129]; /* cron, manual, github or a generic event source */
	char entry_point[256];	/* "" when unset */
	json_t *arguments;	/* object, owned (NULL: none) */
	json_t *active_profiles; /* array, owned (NULL: none) */
	json_t *conditions;	/* object, owned (NULL: none) */
	json_t *cfg;		/* object, owned: the whole trigger as parsed */
	char fingerprint[65];
	int64_t next_fire_at; /* cron: 0 when none */
	int64_t last_fire_at; /* cron: 0 when never */
};

void store_trigger_cleanup(struct trigger *t);
void store_trigger_free_list(struct trigger *v, size_t n);

/* Replaces every trigger of a repository by v[0..n) in one transaction (ids, project_id,
 * repo_id and fingerprints filled by the caller); a new trigger whose fingerprint matches
 * an old one of the repository takes over its last_fire_at. */
int store_triggers_replace(struct store_conn *c, const char *repo_id, struct trigger *v, size_t n,
			   struct err *e) WUR;

/* The triggers of a repository (NULL repo_id: all), or of an event source (NULL: all),
 * with the project and repository enabled for triggers.  New array (store_trigger_free_list). */
int store_triggers_of_repo(struct store_conn *c, const char *repo_id, struct trigger **out, size_t *n,
			   struct err *e) WUR;
int store_triggers_of_source(struct store_conn *c, const char *event_source, struct trigger **out, size_t *n,
			     struct err *e) WUR;

/* Cron: the earliest next_fire_at of an enabled trigger (0 when none); the triggers due at
 * now; and the compare-and-set that claims one minute of a trigger: succeeds (1) only when
 * last_fire_at < minute, and sets last_fire_at = minute, next_fire_at = next.  0 when
 * another claim got it first (never twice for one minute, across restarts and nodes). */
int store_triggers_next_fire(struct store_conn *c, int64_t *at, struct err *e) WUR;
int store_triggers_due(struct store_conn *c, int64_t now, struct trigger **out, size_t *n, struct err *e) WUR;
int store_trigger_claim_fire(struct store_conn *c, const char *id, int64_t minute, int64_t next, struct err *e) WUR;
/* Sets next_fire_at without firing (a server that was down skips missed minutes). */
int store_trigger_set_next(struct store_conn *c, const char *id, int64_t next, struct err *e) WUR;

#endif
