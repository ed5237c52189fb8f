/* Folders handed off by starts (start_staged.h: <work>/ready/<id>) that no supervisor of this
 * node will take: the process was claimed by another node (which unpacked its stored
 * payload), or ended, or is gone.  queue_process_ended drops the folder only on the node
 * where the process ended, so with several nodes the node that stored it looks at its
 * folders now and then (internal.h queue_ready_sweep): one read of the store per folder. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/uuid.h"
#include "queue/internal.h"
#include "queue/start_staged.h"

/* A folder whose process is not stored yet is left this long: a start hands its folder off
 * just before it stores the process. */
#define UNSTORED_GRACE_MS 60000

/* Whether ready/<id> (changed at changed_ms) is of no use any more on this node. */
static bool stale(struct queue *q, struct store_conn *c, const char *id, int64_t changed_ms)
{
	struct process p;
	struct err e;
	unsigned st;

	if (store_process_get(c, id, &p, &e))
		return e.code == ERR_NOT_FOUND && dt_now_ms() - changed_ms > UNSTORED_GRACE_MS;
	st = PS_BIT(p.status);
	store_process_cleanup(&p);
	/* Waiting for a claim: this node may be the one.  Claimed here: its supervisor (which
	 * registers before this thread, the dispatcher's, looks) takes the folder. */
	if (st & (PS_BIT(PS_NEW) | PS_BIT(PS_PREPARING) | PS_BIT(PS_ENQUEUED) | PS_BIT(PS_WAITING)))
		return false;
	return !queue_holds(q, id);
}

void queue_ready_sweep(struct queue *q, struct store_conn *c)
{
	char path[4096];
	struct dirent *de;
	struct err e;
	DIR *d;

	/* Alone, this node claims everything it stored, and ends drop their folders here. */
	if (!q->listener || dt_now_ms() < q->next_sweep)
		return;
	q->next_sweep = dt_now_ms() + q->cfg.node_dead_after_ms;
	if (start_ready_path(q->work_dir, "", path, sizeof path, &e) || !(d = opendir(path))) {
		if (errno != ENOENT)
			LOG_W("cannot read the handed-off folders in %s: %s", q->work_dir, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		struct stat sb;
		if (!uuid_valid(de->d_name, strlen(de->d_name)) ||
		    fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (stale(q, c, de->d_name, (int64_t)sb.st_ctim.tv_sec * 1000 + sb.st_ctim.tv_nsec / 1000000)) {
			LOG_I("process %s: its handed-off folder is of no use on this node any more: removed",
			      de->d_name);
			start_ready_drop(q->work_dir, de->d_name);
		}
	}
	closedir(d);
}
