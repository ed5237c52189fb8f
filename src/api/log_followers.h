#ifndef ACCORD_API_LOG_FOLLOWERS_H
#define ACCORD_API_LOG_FOLLOWERS_H

#include "base/err.h"

/* Admission of live-log followers (GET /api/v1/process/{id}/log?follow=true).  A follower
 * holds a connection for as long as its process writes, so without a bound one user could
 * take every connection of the server.  At most limits.log_followers follow in the whole
 * server (by default half the connections: the rest stay for other requests),
 * limits.log_followers_per_user for one user and limits.log_followers_per_process for one
 * process; one more is refused at once (ERR_TOO_MANY, 429, a message naming the limit).
 * Thread-safe. */

/* Takes a follower's slot for user_id on process_id (both borrowed).  0, ERR_TOO_MANY, or
 * ERR_INTERNAL out of memory. */
int log_followers_enter(const char *user_id, const char *process_id, struct err *e) WUR;
/* Gives back the slot of a successful log_followers_enter with the same ids. */
void log_followers_leave(const char *user_id, const char *process_id);

#endif
