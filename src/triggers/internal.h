#ifndef ACCORD_TRIGGERS_INTERNAL_H
#define ACCORD_TRIGGERS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "store/triggers.h"
#include "store/users.h"
#include "triggers/triggers.h"

/* Shared by the files of src/triggers/ only. */

struct triggers {
	struct triggers_cfg cfg; /* pointers borrowed from `accord serve` */
	pthread_t thread, reread;
	bool running, rereading;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool stop, wake;   /* under mu */
	int64_t anchor_ms; /* the test clock runs faster from this real time (server_meta) */
};

/* The scheduler's clock in Unix ms: real time, or the test clock (--test-cron-minute-seconds).
 * t may be NULL (real time). */
int64_t triggers_now_ms(const struct triggers *t);
/* Wakes the scheduler so that it re-reads the next fire time (t may be NULL). */
void triggers_wake(struct triggers *t);
/* True once triggers_stop has begun. */
bool triggers_stopping(struct triggers *t);

/* reread.c: the thread that reads every repository's triggers again at start. */
void *triggers_reread_main(void *arg);

/* parse.c: the triggers of m (repository r; NULL: none): a new array of *n rows with ids, project,
 * repository and fingerprints filled; cron rows get next_fire_at, the first minute after
 * now_ms.  ERR_INVALID "triggers: <file>:<line>:<col>: …" for a bad section. */
/* The effective policy of r's org and project on the triggers v[0..n): ERR_INVALID naming
 * the policy when an entity rule denies creating one, or a cron trigger fires more often
 * than cronTrigger.minInterval (triggers/cron_policy.c). */
int triggers_cron_policy(struct store_conn *c, const struct repository *r, const struct trigger *v, size_t n,
			 int64_t now_ms, struct err *e) WUR;
int triggers_parse(const struct model *m, const struct repository *r, int64_t now_ms, struct trigger **out, size_t *n,
		   struct err *e) WUR;
/* The first minute after after_ms (Unix ms) matching a cron trigger's cfg (spec, timezone);
 * 0 when there is none.  ERR_INVALID for a bad spec or zone. */
int triggers_cron_next(const json_t *cfg, int64_t after_ms, int64_t *next_ms, struct err *e) WUR;
/* Whether an event source names a generic trigger (not cron, manual, github, oneops). */
bool triggers_is_generic(const char *event_source);

/* conditions.c: Concord's matching of a generic trigger's conditions against an event. */
bool triggers_conditions_match(const json_t *event, const json_t *conditions);
/* s with every character special to a regular expression escaped (a name that matches only
 * itself); false when it does not fit in cap. */
bool triggers_regex_quote(const char *s, char *out, size_t cap);
/* github.c: "owner/name" of a repository URL (its last two path segments, ".git" dropped). */
bool triggers_github_name(const char *url, char *out, size_t cap);
/* Checks that every string of conditions is a regular expression this server accepts. */
int triggers_conditions_check(const json_t *conditions, struct err *e) WUR;

/* run_as.c: the user a cron trigger's process runs as: the cron user, or the owner of the
 * API key in the secret of its runAs.withSecret (a DATA secret restricted to the trigger's
 * project).  ERR_NOT_FOUND / ERR_INVALID / ERR_FORBIDDEN naming the secret otherwise; the
 * secret's text never reaches a message. */
int triggers_run_as(struct triggers *t, struct store_conn *c, const struct trigger *tr, struct user *u,
		    struct err *e) WUR;

/* start.c: starts the process of trigger tr with `event` in its arguments, as the given
 * initiator; the instance id into id.  Logs nothing (the callers do). */
struct trigger_fire {
	const struct trigger *tr;
	json_t *event; /* BORROWED */
	const char *initiator_id, *initiator;
	const char *external_event_id; /* generic events: the event's id (NULL: none) */
	const char *commit_id;	       /* github useEventCommitId: this commit, not the branch's head */
	const char *exclusive_group;   /* github exclusive groupBy: branch — the event's branch */
};
int triggers_fire(struct triggers *t, struct store_conn *c, const struct trigger_fire *f, char id[UUID_STR_LEN],
		  struct err *e) WUR;

#endif
