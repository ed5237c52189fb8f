#ifndef ACCORD_API_PROCESS_ROUTES_H
#define ACCORD_API_PROCESS_ROUTES_H

#include "api/api.h"
#include "api/process_start_req.h"
#include "base/uuid.h"
#include "http/multipart.h"

/* Handlers of /api/v1/process and /api/v2/process (route table in processes.c). */
int api_process_start(struct api_call *c); /* process_start.c */
int api_process_list(struct api_call *c);  /* process_list.c */
int api_process_count(struct api_call *c); /* process_list.c */

/* The start of POST /api/v1/process after its body is parsed, shared with the start link
 * (process_start_link.c): org/project/repository, access, parent, the staged payload
 * (the repository's checkout overlaid by mp's file parts; mp may have none), the
 * definition and the entry point, then the process stored ENQUEUED as c->who and the
 * queue woken.  id receives the instance id.  On failure nothing is stored and c->err
 * says why (400 for what the request got wrong). */
int api_process_start_req(struct api_call *c, const struct multipart *mp, struct start_req *r,
			  char id[UUID_STR_LEN]) WUR;

#endif
