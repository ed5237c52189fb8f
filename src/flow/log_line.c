#include "flow/log_line.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"

static const char *const level_names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};

void flow_log_line(FILE *out, enum flow_level level, const char *msg, const char *workdir,
		   const struct mask *sensitive)
{
	char iso[DT_ISO_LEN], *m = NULL;
	size_t wl = workdir ? strlen(workdir) : 0;
	bool changed = false;

	if (sensitive && (sensitive->n || sensitive->lost) && (m = mask_text(sensitive, msg, &changed), changed))
		msg = m ? m : MASK_TEXT;
	dt_format_iso(dt_now_ms(), iso);
	/* Concord's log time stamp: "2026-11-22T10:00:00.123+0000". */
	fprintf(out, "%.23s+0000 [%s] ", iso, level_names[level]);
	for (const char *p = msg; *p;) {
		if (wl && strncmp(p, workdir, wl) == 0) {
			fputs("$WORK_DIR", out);
			p += wl;
		} else {
			fputc(*p++, out);
		}
	}
	fputc('\n', out);
	free(m);
}
