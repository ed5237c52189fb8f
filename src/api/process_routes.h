#ifndef ACCORD_API_PROCESS_ROUTES_H
#define ACCORD_API_PROCESS_ROUTES_H

#include "api/api.h"

/* Handlers of /api/v1/process and /api/v2/process (route table in processes.c). */
int api_process_start(struct api_call *c); /* process_start.c */
int api_process_list(struct api_call *c);  /* process_list.c */
int api_process_count(struct api_call *c); /* process_list.c */

#endif
