#ifndef ACCORD_API_PROCESS_WAIT_H
#define ACCORD_API_PROCESS_WAIT_H

/* GET /api/v1/process/{id}/waitForCompletion (process_wait.c) holds a worker thread while
 * it waits.  At shutdown, before the HTTP server waits for its handlers: ends every wait
 * at once (each answers with the process as it is) and refuses new ones.  Thread-safe. */
void api_process_waits_end(void);

#endif
