#ifndef ACCORD_TRIGGERS_TRIGGERS_H
#define ACCORD_TRIGGERS_TRIGGERS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/model.h"
#include "queue/queue.h"
#include "repo/repo.h"
#include "store/repositories.h"
#include "store/store.h"

/* Triggers of repositories (issue 13, docs/flows.md "Triggers"):
 *   parse.c      `triggers:` of a loaded definition → trigger rows, errors with file:line:col
 *   scheduler.c  cron: one thread that sleeps until the earliest next fire time
 *   start.c      starting the process of a trigger (cron, generic event, manual)
 *   run_as.c     who a cron trigger's process runs as (the cron user, or runAs.withSecret)
 *   events.c     POST /api/v1/events/{eventSource}: generic triggers (api/ calls it) */

struct triggers;
struct masterkey;

struct triggers_cfg {
	struct store *store;
	struct queue *queue;
	struct repos *repos;
	const char *work_dir; /* start folders: tmp/ and ready/ beneath it */
	const unsigned char *session_key; /* 32 bytes */
	const struct masterkey *master_key; /* opens the secrets of runAs (NULL: runAs fails) */
	/* Test-only clock (--test-cron-minute-seconds): when > 0, the scheduler's clock runs
	 * so that one minute lasts this many real seconds, from the real time of the first
	 * start with it on this database (kept in server_meta, so that the nodes of one
	 * database share the clock).  The production path is the same code with a 60 s minute. */
	unsigned test_minute_seconds;
};

/* Starts the cron scheduler thread.  Triggers live in the store, so they work after a
 * restart as they were; repositories are read again on create, update and refresh, and at
 * start (reread.c, beside the scheduler; an unchanged trigger keeps its next minute).  Cron
 * triggers whose next minute passed while the server was down go on from now (missed
 * minutes are not replayed).  With the test clock, its anchor is read (the first time,
 * written) on the calling thread's store connection; a store error fails the start. */
struct triggers *triggers_start(const struct triggers_cfg *cfg, struct err *e);
void triggers_stop(struct triggers *t);

/* The triggers of m's definition (NULL: a repository without one, so none) for repository
 * r, stored in place of the previous ones
 * (one transaction).  A `triggers:` section that does not parse is ERR_INVALID with
 * "file:line:col" and leaves the stored triggers as they were.  Wakes the scheduler. */
int triggers_refresh(struct triggers *t, struct store_conn *c, const struct repository *r, const struct model *m,
		     struct err *e) WUR;

/* What triggers_refresh would refuse, without storing anything (repository validate):
 * ERR_INVALID "triggers: <file>:<line>:<col>: …" for a `triggers:` section that does not
 * parse, 0 otherwise.  Needs no scheduler. */
int triggers_check(const struct model *m, const struct repository *r, struct err *e) WUR;

/* Fetches r and reads its triggers again (POST …/repository/{repo}/trigger, the admins'
 * refresh of every repository, a GitHub push): the stored ones stay when it fails. */
int triggers_reread(struct triggers *t, struct store_conn *c, const struct repository *r, struct err *e) WUR;

/* GitHub events (POST /events/github/webhook, signature checked by the caller): a push
 * refreshes the repositories that follow the pushed branch, then every `github` trigger
 * (version 2) whose conditions match Concord's event of the payload starts one process;
 * *ids receives a new array of their instance ids (empty for an event Concord does not
 * handle). */
int triggers_github(struct triggers *t, struct store_conn *c, const char *event_name, const char *delivery,
		    json_t *payload, json_t **ids, struct err *e) WUR;

/* Generic events: starts one process per matching trigger of eventSource whose project the
 * caller may start processes in, with `event` = the posted object, as the caller.  *ids
 * receives a new array of the started instance ids (empty when nothing matched). */
struct principal;
int triggers_event(struct triggers *t, struct store_conn *c, const struct principal *who, const char *event_source,
		   json_t *event, json_t **ids, struct err *e) WUR;

#endif
