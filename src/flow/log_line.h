#ifndef ACCORD_FLOW_LOG_LINE_H
#define ACCORD_FLOW_LOG_LINE_H

#include <stdio.h>

#include "flow/host.h"
#include "flow/mask.h"

/* One flow log line as both hosts print it (`accord run`, `accord runner`): Concord's time
 * stamp and padded level, the sensitive values masked as ******, the working directory
 * shown as $WORK_DIR.  workdir and sensitive may be NULL. */
void flow_log_line(FILE *out, enum flow_level level, const char *msg, const char *workdir,
		   const struct mask *sensitive);

#endif
