/* Checkpoints on the server (issue 9): the runner has written the checkpoint state into
 * the working directory and waits while its supervisor snapshots it. */
#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/log.h"
#include "base/pack.h"
#include "queue/queue.h"
#include "queue/state_policy.h"
#include "queue/supervise/supervise.h"
#include "store/process_checkpoints.h"
#include "store/process_events.h"

/* Concord's rule: ^[0-9a-zA-Z][0-9a-zA-Z_@.\-~ ]{1,128}$, at most what a resume event holds. */
static bool valid_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 2 || n > QUEUE_CHECKPOINT_NAME_MAX || !isalnum((unsigned char)name[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_@.-~ ", name[i]))
			return false;
	return true;
}

static int store_snapshot(struct store_conn *c, const char *id, const char *name, const void *tar, size_t len,
			  char cp_id[UUID_STR_LEN], struct err *e)
{
	json_t *data;
	int rc;

	if (store_tx_begin_rows(c, e))
		return -1;
	if (store_process_checkpoint_add(c, id, name, tar, len, cp_id, e))
		goto fail;
	data = json_pack("{s:s, s:s}", "id", cp_id, "name", name);
	rc =
	    data ? store_process_event_add(c, id, "CHECKPOINT", data, 0, e) : err_set(e, ERR_INTERNAL, "out of memory");
	json_decref(data);
	if (rc)
		goto fail;
	return store_tx_commit(c, e);
fail:
	store_tx_rollback(c);
	return -1;
}

json_t *supervise_checkpoint(struct store_conn *c, const char *id, const char *workdir, json_t *frame)
{
	const char *name = json_string_value(json_object_get(frame, "name"));
	json_t *ans = json_pack("{s:s, s:O}", "type", "checkpoint_done", "id",
				json_object_get(frame, "id") ? json_object_get(frame, "id") : json_null());
	char cp_id[UUID_STR_LEN];
	void *tar = NULL;
	size_t len = 0;
	struct err e = {0};

	if (!ans)
		return NULL;
	if (!valid_name(name)) {
		err_set(&e, ERR_INVALID,
			"invalid checkpoint name: it must start with a letter or a digit, contain only letters,"
			" digits, spaces and _ @ . - ~, and have 2 to %zu characters",
			QUEUE_CHECKPOINT_NAME_MAX);
	} else if (state_policy_saved(c, id, workdir, &e) == 0 &&
		   pack_dir(workdir, limits.archive_bytes, &tar, &len, &e) == 0 &&
		   store_snapshot(c, id, name, tar, len, cp_id, &e) == 0) {
		json_object_set_new(ans, "checkpointId", json_string(cp_id));
		free(tar);
		return ans;
	}
	free(tar);
	LOG_W("process %s: checkpoint not stored: %s", id, e.msg);
	json_object_set_new(ans, "error", json_string(e.msg));
	return ans;
}
