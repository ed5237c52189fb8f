/* One running process (DESIGN.md §2): prepares its working directory from the stored
 * payload, starts `accord runner` in it, stores what the runner produces (log chunks,
 * events, out variables, attachments), enforces processTimeout, the log limit and stop
 * requests, records the final status and removes the working directory. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/frame.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/spawn.h"
#include "base/str.h"
#include "crypto/session.h"
#include "queue/end/children.h"
#include "queue/internal.h"
#include "queue/tasks/locks.h"
#include "queue/supervise/logwatch.h"
#include "queue/main_json.h"
#include "queue/resume_files.h"
#include "queue/tasks/server_tasks.h"
#include "queue/start_staged.h"
#include "queue/supervise/supervise.h"
#include "queue/tasks/task_jobs.h"
#include "queue/zygote.h"
#include "store/audit.h"
#include "store/process_events.h"
#include "store/process_logs.h"
#include "store/project_storage.h"

#define FLUSH_BYTES (64 * 1024)
#define FLUSH_EVENTS 256
#define FLUSH_MS 50
#define WAITS_MS 1000
/* While the database is out of reach: what a process keeps unstored, how often it tries
 * again, and for how long its start and its end wait for the database (database_wait). */
#define KEEP_UNSTORED_BYTES (16 * 1024 * 1024)
#define KEEP_UNSTORED_EVENTS 65536
#define UNAVAILABLE_RETRY_MS 1000
#define END_WAIT_TRIES 600

struct sup {
	struct running *r;
	struct queue *q;
	const char *id;
	struct store_conn *db;
	char workdir[4096];
	/* with in_memory: the payload the runner gets in its start frame, the working
	 * directory left empty until the runner writes it (queue/start_staged.h) */
	struct memdir files;
	bool in_memory;
	struct stat handed; /* with in_memory: the empty folder as handed out (workdir_pool.h) */
	pid_t pid;
	struct zygote_child *zc; /* the runner came from the zygote: its exit status comes from there */
	bool reaped;		 /* the runner's exit status was collected */
	int log_fd, ipc_fd;
	struct frame_reader frames;
	struct buf log;	 /* log bytes not yet stored */
	json_t *events;	 /* [ {type, data, date} ] not yet stored */
	int64_t flush_at; /* ms; 0 when nothing is buffered */
	uint64_t log_total;
	uint64_t project_room; /* --limit-project-storage-bytes: what the project had left at the last read … */
	uint64_t since_room;   /* … and the log bytes taken since */
	bool running, log_full, quota_full, ipc_closed, log_closed;
	const char *done; /* the runner's final status ("FINISHED", …) or NULL */
	int64_t wake_at;  /* SUSPENDED in `sleep`: when to resume it, with wake_event */
	char wake_event[128];
	json_t *wait_events, *forms; /* SUSPENDED: what its threads wait for, its pending forms */
	int64_t deadline; /* processTimeout, ms; 0: none */
	int64_t claimed_at, running_at; /* ms (metrics); 0: not yet */
	bool timed_out;
	int64_t kill_at; /* SIGKILL after SIGTERM; 0: not signalled */
	json_t *waits;	  /* [{id, wait}]: task calls answered once processes end (children.h) */
	int64_t waits_at; /* ms: when to re-check them (processes on other nodes); 0: none */
	struct task_jobs jobs; /* task calls answered when a container ends (task_jobs.h) */
	bool suspended;	  /* stored SUSPENDED */
	bool unstored;	  /* log or events kept while the database is out of reach */
	bool lost;	  /* log or events that could not be stored were dropped (disk full, …) */
	struct process next; /* with has_next: claimed for this slot in the end's transaction */
	bool has_next;
};

/* ---- storing what the runner produces --------------------------------------------- */

/* The project's storage room as stored now (other processes of the project write too). */
static void read_room(struct sup *s)
{
	struct err e;
	uint64_t room;

	if (store_project_storage_room(s->db, s->id, &room, &e)) {
		LOG_W("process %s: cannot read its project's stored bytes: %s", s->id, e.msg);
		return;
	}
	s->project_room = room;
	s->since_room = 0;
}

/* The log and events in one transaction on s->db. */
static int store_buffered(struct sup *s, struct err *e)
{
	size_t i;
	json_t *ev;

	if (store_tx_begin_rows(s->db, e))
		return -1;
	if (s->log.len && store_process_log_append(s->db, s->id, s->log.data, s->log.len, NULL, e))
		goto fail;
	json_array_foreach(s->events, i, ev) if (store_process_event_add(s->db, s->id,
									   json_string_value(json_object_get(ev, "type")),
									   json_object_get(ev, "data"),
									   json_integer_value(json_object_get(ev, "date")),
									   e)) goto fail;
	queue_log_grew(s->q, s->db, s->id);
	return store_tx_commit(s->db, e);
fail:
	store_tx_rollback(s->db);
	return -1;
}

/* Through the store's writer connection (group commit with the other processes' writes). */
static void flush(struct sup *s)
{
	struct store_conn *own = s->db;
	struct err e;
	int rc = -1;

	if (s->log.len == 0 && json_array_size(s->events) == 0)
		return;
	if ((s->db = store_writer_enter(own, &e)))
		rc = store_writer_leave(own, s->db, store_buffered(s, &e), &e);
	s->db = own;
	if (rc == 0) {
		buf_reset(&s->log);
		json_array_clear(s->events);
		s->flush_at = 0;
		s->unstored = false;
		logwatch_notify(s->id);
		read_room(s);
		return;
	}
	/* The database out of reach (PostgreSQL restarting): keep them for the next flush, up
	 * to a bound. */
	if (e.code == ERR_UNAVAILABLE && s->log.len < KEEP_UNSTORED_BYTES &&
	    json_array_size(s->events) < KEEP_UNSTORED_EVENTS) {
		if (!s->unstored)
			LOG_W("process %s: cannot store its log and events now, kept for later: %s", s->id, e.msg);
		s->unstored = true;
		s->flush_at = dt_now_ms() + UNAVAILABLE_RETRY_MS;
		return;
	}
	LOG_E("process %s: cannot store its log and events: %s", s->id, e.msg);
	s->lost = true; /* a process whose log is incomplete does not end FINISHED */
	buf_reset(&s->log);
	json_array_clear(s->events);
	s->flush_at = 0;
}

static void buffered(struct sup *s)
{
	if (!s->flush_at)
		s->flush_at = dt_now_ms() + FLUSH_MS;
	if (s->log.len >= FLUSH_BYTES || json_array_size(s->events) >= FLUSH_EVENTS)
		flush(s);
}

static void signal_group(struct sup *s, int sig)
{
	if (s->pid > 0 && kill(-s->pid, sig) < 0 && errno != ESRCH)
		LOG_W("process %s: kill(%d): %s", s->id, sig, strerror(errno));
}

static void begin_kill(struct sup *s)
{
	if (s->kill_at)
		return;
	signal_group(s, SIGTERM);
	s->kill_at = dt_now_ms() + s->q->cfg.stop_grace_ms;
	task_jobs_kill(&s->jobs);
}

static void server_line(struct sup *s, const char *level, const char *msg)
{
	char iso[DT_ISO_LEN];
	struct err e;

	dt_format_iso(dt_now_ms(), iso);
	if (buf_printf(&s->log, &e, "%.23s+0000 [%-5s] %s\n", iso, level, msg))
		LOG_E("process %s: %s", s->id, e.msg);
	buffered(s);
}

/* An ERROR line "<what>: <why>": the reason of an error the flow caused (a limit). */
static void server_line_why(struct sup *s, const char *what, const struct err *why)
{
	char line[1024];

	str_fmt_cut(line, sizeof line, "%s: %s", what, why->msg);
	server_line(s, "ERROR", line);
}

static void on_log(struct sup *s, const char *p, size_t n)
{
	struct err e;
	uint64_t room = limits.process_log_bytes > s->log_total ? limits.process_log_bytes - s->log_total : 0;
	uint64_t project = s->project_room > s->since_room ? s->project_room - s->since_room : 0;

	if (s->log_full)
		return;
	if (n > room || n > project) {
		s->quota_full = project < room;
		n = (size_t)(s->quota_full ? project : room);
		s->log_full = true;
	}
	if (n && buf_append(&s->log, p, n, &e) == 0) {
		s->log_total += n;
		s->since_room += n;
	}
	buffered(s);
	if (s->log_full) {
		char msg[160];
		if (s->quota_full)
			str_fmt_cut(msg, sizeof msg,
				    "Project storage quota reached (%llu bytes of logs and attachments, "
				    "limit-project-storage-bytes): stopping the process",
				    (unsigned long long)limits.project_storage_bytes);
		else
			str_fmt_cut(msg, sizeof msg,
				    "Maximum log size reached (%llu bytes, limit-process-log-bytes): stopping the process",
				    (unsigned long long)limits.process_log_bytes);
		server_line(s, "ERROR", msg);
		begin_kill(s);
	}
}

/* A line of a container's output (docker_job.h), counted against the log limit. */
static void job_line(void *ctx, const char *text)
{
	struct sup *s = ctx;
	char iso[DT_ISO_LEN];
	struct buf b;
	struct err e;

	dt_format_iso(dt_now_ms(), iso);
	buf_init(&b, 0);
	if (buf_printf(&b, &e, "%.23s+0000 [%-5s] %s\n", iso, "INFO", text) == 0)
		on_log(s, b.data, b.len);
	buf_cleanup(&b);
}

/* ---- the IPC protocol ------------------------------------------------------------------ */

static int reply(struct sup *s, json_t *v)
{
	struct err e;
	int rc = frame_write(s->ipc_fd, v, &e);

	json_decref(v);
	if (rc)
		LOG_W("process %s: cannot answer its runner: %s", s->id, e.msg);
	return rc;
}

/* A server-task call: answered at once (server_tasks.h), or later when it waits
 * (check_waits). */
static void on_task(struct sup *s, json_t *f)
{
	struct task_call tc = {.r = s->r,
			       .c = s->db,
			       .workdir = s->workdir,
			       .task = json_string_value(json_object_get(f, "task")),
			       .method = json_string_value(json_object_get(f, "method")),
			       .args = json_object_get(f, "args"),
			       .suspendable = json_is_true(json_object_get(f, "suspendable"))};
	json_t *ans = json_pack("{s:s, s:O}", "type", "task_result", "id", json_object_get(f, "id"));
	struct err e;

	if (!tc.task) {
		json_object_set_new(ans, "error", json_string("Task call without a task name"));
	} else if (server_task_run(&tc, &e) < 0) {
		json_object_set_new(ans, "error", json_string(e.msg));
	} else if (tc.job) {
		if (task_jobs_add(&s->jobs, json_object_get(f, "id"), tc.job, &e) == 0) {
			json_decref(ans);
			ans = NULL;
		} else {
			json_object_set_new(ans, "error", json_string(e.msg));
		}
		if (s->kill_at)
			task_jobs_kill(&s->jobs); /* called while the process stops */
	} else if (tc.wait) {
		/* woken by ends from now on, before the first look: no end falls between */
		atomic_store(&s->r->waits_for_ends, true);
		json_array_append_new(s->waits, json_pack("{s:O, s:O}", "id", json_object_get(f, "id"), "wait", tc.wait));
		s->waits_at = dt_now_ms(); /* checked at once: the processes may be final already */
		json_decref(ans);
		ans = NULL;
	} else {
		json_object_set(ans, "out", tc.out ? tc.out : json_null());
		if (tc.suspend)
			json_object_set_new(ans, "suspend", json_string(tc.suspend));
		if (tc.sensitive)
			json_object_set(ans, "sensitive", tc.sensitive);
	}
	json_decref(tc.out);
	json_decref(tc.sensitive);
	json_decref(tc.wait);
	free(tc.suspend);
	if (ans)
		reply(s, ans);
}

/* Answers the task calls that waited for processes once those are final. */
static void check_waits(struct sup *s)
{
	size_t i = 0;

	while (i < json_array_size(s->waits)) {
		json_t *w = json_array_get(s->waits, i), *out = NULL, *ans;
		struct err e;
		int rc = children_wait_check(s->db, json_object_get(w, "wait"), &out, &e);
		if (rc == 0) {
			i++;
			continue;
		}
		ans = json_pack("{s:s, s:O}", "type", "task_result", "id", json_object_get(w, "id"));
		if (rc > 0)
			json_object_set_new(ans, "out", out ? out : json_null());
		else
			json_object_set_new(ans, "error", json_string(e.msg));
		reply(s, ans);
		json_array_remove(s->waits, i);
	}
	s->waits_at = json_array_size(s->waits) ? dt_now_ms() + WAITS_MS : 0;
	if (!s->waits_at)
		atomic_store(&s->r->waits_for_ends, false);
}

/* Creation (or startAt) → RUNNING of a first run; a resumed run counts from its claim. */
static void observe_start(struct sup *s)
{
	const struct process *p = &s->r->p;
	int64_t from = p->resume_event[0] ? s->claimed_at : p->start_at > p->created_at ? p->start_at : p->created_at;

	if (from > 0)
		metrics_observe(MH_PROCESS_START_TO_RUNNING, (s->running_at - from) * 1000);
}

/* Whether a step of process s that failed with e is tried again, after a pause of
 * UNAVAILABLE_RETRY_MS: when the database is out of reach (PostgreSQL restarting), for at
 * most END_WAIT_TRIES tries, never at shutdown, nor past any stop when any_stop.  The first
 * pause is logged: "its <what> waits for the database". */
static bool database_wait(struct sup *s, int i, const char *what, const struct err *e, bool any_stop)
{
	int stop = atomic_load(&s->r->stop);

	if (e->code != ERR_UNAVAILABLE || i >= END_WAIT_TRIES || stop == STOP_SHUTDOWN || (any_stop && stop != STOP_NONE))
		return false;
	if (i == 0)
		LOG_W("process %s: its %s waits for the database: %s", s->id, what, e->msg);
	nanosleep(&(struct timespec){UNAVAILABLE_RETRY_MS / 1000, 0}, NULL);
	return true;
}

/* RUNNING before the runner gets its start frame, so that a flow that asks for its own
 * status (its session token) sees RUNNING from its first step; processTimeout counts from
 * here. */
static void mark_running(struct sup *s)
{
	struct err e;
	int rc, i = 0;

	s->running = true;
	while ((rc = store_process_transition(s->db, s->id, PS_BIT(PS_STARTING), PS_RUNNING, &e)) &&
	       database_wait(s, i++, "RUNNING status", &e, true))
		;
	s->running_at = dt_now_ms();
	read_room(s);
	if (rc)
		LOG_E("process %s: cannot record RUNNING: %s", s->id, e.msg);
	else
		observe_start(s);
	if (s->r->p.timeout_s > 0)
		s->deadline = dt_now_ms() + s->r->p.timeout_s * 1000;
	else if (limits.process_timeout_s) /* the server's default (--default-process-timeout) */
		s->deadline = dt_now_ms() + (int64_t)limits.process_timeout_s * 1000;
}

/* The values of the variables configuration.meta names, into the process's meta ("out"
 * is the out variables' place, set at the end: a variable of that name does not replace it). */
static void on_meta(struct sup *s, json_t *values)
{
	json_t *patch = json_deep_copy(values);
	struct err e;

	json_object_del(patch, "out");
	if (patch && json_object_size(patch) && store_process_meta_merge(s->db, s->id, patch, &e))
		LOG_W("process %s: cannot store its metadata: %s", s->id, e.msg);
	json_decref(patch);
}

/* A runner records ELEMENT events, and ANSIBLE events (and the playbook start and end
 * events) from its ansible task: no other type. */
static void on_event(struct sup *s, json_t *f)
{
	static const char *const known[] = {"ANSIBLE", "ANSIBLE_PLAYBOOK_INFO", "ANSIBLE_PLAYBOOK_RESULT"};
	const char *et = json_string_value(json_object_get(f, "eventType")), *kind = "ELEMENT";
	json_t *date = json_object_get(f, "date");

	for (size_t i = 0; et && i < sizeof known / sizeof known[0]; i++)
		if (strcmp(et, known[i]) == 0)
			kind = known[i];
	json_array_append_new(s->events, json_pack("{s:s, s:O, s:o}", "type", kind, "data", json_object_get(f, "data"),
						   "date", date ? json_incref(date) : json_integer(0)));
	buffered(s);
}

static void on_frame(struct sup *s, json_t *f)
{
	const char *type = json_string_value(json_object_get(f, "type"));

	if (strcmp(type, "running") == 0) {
		/* RUNNING is recorded before the start frame goes (mark_running); the runner says
		 * it runs once it is confined and its definition loaded. */
	} else if (strcmp(type, "event") == 0 && json_is_object(json_object_get(f, "data"))) {
		on_event(s, f);
	} else if (strcmp(type, "task") == 0) {
		on_task(s, f);
	} else if (strcmp(type, "sensitive") == 0) {
		task_sensitive_add(s->db, s->r, json_object_get(f, "values"));
	} else if (strcmp(type, "checkpoint") == 0) {
		flush(s); /* its ELEMENT events before its CHECKPOINT event */
		reply(s, supervise_checkpoint(s->db, s->id, s->workdir, f));
	} else if (strcmp(type, "meta") == 0 && json_is_object(json_object_get(f, "values"))) {
		on_meta(s, json_object_get(f, "values"));
	} else if (strcmp(type, "done") == 0) {
		const char *st = json_string_value(json_object_get(f, "status"));
		const char *wake = json_string_value(json_object_get(f, "wakeEvent"));
		if (st && (strcmp(st, "FINISHED") == 0 || strcmp(st, "FAILED") == 0 || strcmp(st, "SUSPENDED") == 0))
			s->done = strcmp(st, "FINISHED") == 0 ? "FINISHED" : strcmp(st, "FAILED") == 0 ? "FAILED" : "SUSPENDED";
		if (json_is_array(json_object_get(f, "events")) && !s->wait_events)
			s->wait_events = json_incref(json_object_get(f, "events"));
		if (json_is_object(json_object_get(f, "forms")) && !s->forms)
			s->forms = json_incref(json_object_get(f, "forms"));
		if (wake && json_is_integer(json_object_get(f, "wakeAt")) && strlen(wake) < sizeof s->wake_event) {
			s->wake_at = json_integer_value(json_object_get(f, "wakeAt"));
			memcpy(s->wake_event, wake, strlen(wake) + 1);
		}
	} else {
		LOG_W("process %s: unexpected frame from its runner: %s", s->id, type);
	}
}

static void read_ipc(struct sup *s)
{
	char tmp[65536];
	ssize_t n = read(s->ipc_fd, tmp, sizeof tmp);
	struct err e;
	json_t *f;
	int rc;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		s->ipc_closed = true;
		return;
	}
	if (frame_reader_feed(&s->frames, tmp, (size_t)n, &e))
		goto broken;
	while ((rc = frame_reader_next(&s->frames, &f, &e)) == 1) {
		on_frame(s, f);
		json_decref(f);
	}
	if (rc == 0)
		return;
broken:
	LOG_W("process %s: protocol error from its runner: %s", s->id, e.msg);
	server_line(s, "ERROR", "Process failed: the runner broke the protocol");
	s->ipc_closed = true;
	begin_kill(s);
}

static void read_log(struct sup *s)
{
	char tmp[65536];
	ssize_t n = read(s->log_fd, tmp, sizeof tmp);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		s->log_closed = true;
		return;
	}
	on_log(s, tmp, (size_t)n);
}

/* ---- start ----------------------------------------------------------------------------- */

int queue_give_to_runner(const struct queue *q, const char *workdir, const char *rel, struct err *e)
{
	if (!q->cfg.runner_drop)
		return 0;
	return path_chown_beneath(workdir, rel, q->cfg.runner_uid, q->cfg.runner_gid, e);
}

/* The working directory to the runners' user (a server started as root), everything in
 * it, links not followed: the runner may write only there. */
static int give_workdir(struct sup *s, struct err *e)
{
	if (!s->q->cfg.runner_drop)
		return 0;
	return path_chown_tree(s->workdir, s->q->cfg.runner_uid, s->q->cfg.runner_gid, e);
}

/* The empty working directory of a runner that gets its files in memory: a folder of the
 * pool, else a new one. */
static int empty_workdir(struct sup *s, struct err *e)
{
	/* A folder of the pool is the runners' already: it came back untouched, its owner and
	 * mode as handed out (workdir_pool_give). */
	if (!workdir_pool_take(&s->q->pool, s->q->work_dir, s->workdir) &&
	    (path_mkdirs(s->workdir, 0700, e) || give_workdir(s, e)))
		return -1;
	if (lstat(s->workdir, &s->handed) != 0)
		return err_set(e, ERR_INTERNAL, "cannot stat %s: %s", s->workdir, strerror(errno));
	s->in_memory = true;
	return 0;
}

static int prepare_workdir(struct sup *s, struct err *e)
{
	void *payload = NULL;
	size_t len = 0;
	int rc;

	if (str_fmt(s->workdir, sizeof s->workdir, "%s/work/%s", s->q->work_dir, s->id))
		return err_set(e, ERR_INVALID, "work folder path too long (limit %zu bytes): %s", sizeof s->workdir - 1,
			       s->q->work_dir);
	if (path_remove_tree(s->workdir, e))
		return -1;
	/* A first run on the node that stored it: the staged folder itself (start_staged.h). */
	if (!s->r->p.resume_event[0] && (rc = start_ready_take(s->q->work_dir, s->id, s->workdir, e)) != 0)
		return rc < 0 ? -1 : give_workdir(s, e);
	if (store_process_payload(s->db, s->id, &payload, &len, e))
		return -1;
	/* A first run whose payload is small: the runner gets it in memory. */
	if (!s->r->p.resume_event[0] && len <= 2 * START_MEM_MAX &&
	    pack_tar_files(payload, len, START_MEM_MAX, &s->files, e) == 0) {
		free(payload);
		return empty_workdir(s, e);
	}
	memdir_cleanup(&s->files);
	memdir_init(&s->files);
	if (path_mkdirs(s->workdir, 0700, e)) {
		free(payload);
		return -1;
	}
	rc = pack_restore(payload, len, s->workdir, e);
	free(payload);
	if (rc == 0 && s->r->p.resume_event[0])
		rc = queue_resume_files(s->workdir, s->r->p.resume_args, e);
	if (rc == 0 && s->r->p.resume_event[0])
		rc = main_json_add_args(s->workdir, s->r->p.resume_args, e);
	return rc ? rc : give_workdir(s, e);
}


/* prepare_workdir; while the payload cannot be read for the database being out of reach,
 * the start waits for it as the end does, since nothing ran yet — an accepted start runs
 * once the database is back (test_nodes' restart under load) — but not past a stop. */
static int prepare_workdir_waiting(struct sup *s, struct err *e)
{
	for (int i = 0; prepare_workdir(s, e); i++)
		if (!database_wait(s, i, "start", e, true))
			return -1;
	return 0;
}

char **queue_runner_env(const struct queue_cfg *cfg, const char *workdir, bool zygote)
{
	static const char *const pass[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
#if defined(__SANITIZE_ADDRESS__)
					   "ACCORD_TEST_RUNNER_LEAK", /* base/sanitizer.h */
#endif
	};
	char **env = calloc(10 + sizeof pass / sizeof pass[0], sizeof *env);
	size_t n = 0;

	if (!env)
		return NULL;
	if (asprintf(&env[n++], "HOME=%s", workdir) < 0)
		env[n - 1] = NULL;
	env[n++] = strdup("PATH=/usr/local/bin:/usr/bin:/bin");
	env[n++] = strdup("LANG=C.UTF-8");
	env[n++] = strdup("TZ=UTC");
	if (asprintf(&env[n++], "TMPDIR=%s", workdir) < 0)
		env[n - 1] = NULL;
	for (size_t i = 0; i < sizeof pass / sizeof pass[0]; i++) {
		const char *v = getenv(pass[i]);
		if (v && asprintf(&env[n], "%s=%s", pass[i], v) >= 0)
			n++;
	}
	/* The zygote resolves every symbol once at its start, not each forked runner anew
	 * (bench/RESULTS.md, runner zygote). */
	if (zygote)
		env[n++] = strdup("LD_BIND_NOW=1");
	if (cfg->runner_drop) {
		if (asprintf(&env[n++], "ACCORD_RUNNER_UID=%u", (unsigned)cfg->runner_uid) < 0)
			env[n - 1] = NULL;
		if (asprintf(&env[n++], "ACCORD_RUNNER_GID=%u", (unsigned)cfg->runner_gid) < 0)
			env[n - 1] = NULL;
	}
	return env;
}

void queue_free_env(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* The runner's rlimits (runner_limits; a 0 limit is none, except the core size). */
static void runner_rlimits(struct zygote_req *rq)
{
	const struct {
		int res;
		uint64_t v;
	} lims[] = {{RLIMIT_AS, runner_limits.memory_bytes},
		    {RLIMIT_FSIZE, runner_limits.file_bytes},
		    {RLIMIT_NOFILE, runner_limits.open_files},
		    {RLIMIT_CPU, runner_limits.cpu_seconds},
		    {RLIMIT_CORE, 0}};

	_Static_assert(sizeof lims / sizeof lims[0] <= ZYGOTE_MAX_RLIMITS, "zygote_req holds the rlimits");
	rq->n_rlimits = 0;
	for (size_t i = 0; i < sizeof lims / sizeof lims[0]; i++) {
		if (!lims[i].v && lims[i].res != RLIMIT_CORE)
			continue;
		rq->rlimits[rq->n_rlimits].resource = lims[i].res;
		rq->rlimits[rq->n_rlimits++].value = lims[i].v;
	}
}

static void apply_rlimits(pid_t pid)
{
	struct zygote_req rq;

	runner_rlimits(&rq);
	for (uint32_t i = 0; i < rq.n_rlimits; i++) {
		struct rlimit rl = {rq.rlimits[i].value, rq.rlimits[i].value};
		if (prlimit(pid, rq.rlimits[i].resource, &rl, NULL) < 0)
			LOG_W("runner %d: prlimit(%d): %s", (int)pid, rq.rlimits[i].resource, strerror(errno));
	}
}

static void close_pair(int p[2])
{
	for (int i = 0; i < 2; i++) {
		if (p[i] >= 0)
			close(p[i]);
		p[i] = -1;
	}
}

static int make_pipes(int logp[2], int ipc[2], struct err *e)
{
	if (pipe2(logp, O_CLOEXEC) == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ipc) == 0)
		return 0;
	close_pair(logp);
	return err_set(e, ERR_INTERNAL, "cannot create the runner's pipes: %s", strerror(errno));
}

/* Starts `accord runner` with posix_spawn (vfork semantics: cheap in a large
 * multi-threaded server): own process group, stdin /dev/null, stdout+stderr → log pipe,
 * fd 3 → IPC, every other descriptor closed (the runner gets nothing of the data
 * folder), working directory its own, a clean environment.  The runner cannot run
 * untrusted code before it has read its start frame, which is sent after the rlimits are
 * in place. */
static int exec_runner(struct sup *s, int logp[2], int ipc[2], struct err *e)
{
	char *argv[] = {"accord", "runner", NULL};
	char **env = queue_runner_env(&s->q->cfg, s->workdir, false);
	const struct spawn_fd fds[] = {{-1, 0}, {logp[1], 1}, {logp[1], 2}, {ipc[1], 3}};
	int rc;

	if (!env)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = spawn_start(&(struct spawn_opts){.exe = s->q->runner_exe, .argv = argv, .env = env, .fds = fds,
					      .n_fds = 4, .cwd = s->workdir, .own_group = true},
			 &s->pid);
	queue_free_env(env);
	if (rc != 0) {
		s->pid = 0;
		return err_set(e, ERR_INTERNAL, "cannot start the runner %s: %s", s->q->runner_exe, strerror(rc));
	}
	apply_rlimits(s->pid);
	return 0;
}

/* The runner's ends of its pipes are in the runner (or in a request to the zygote): the
 * supervisor keeps its own. */
static void take_pipes(struct sup *s, int logp[2], int ipc[2])
{
	s->log_fd = logp[0];
	s->ipc_fd = ipc[0];
	logp[0] = ipc[0] = -1;
	close_pair(logp);
	close_pair(ipc);
	fcntl(s->log_fd, F_SETFL, O_NONBLOCK);
}

static int exec_with_new_pipes(struct sup *s, struct err *e)
{
	int logp[2] = {-1, -1}, ipc[2] = {-1, -1};

	if (make_pipes(logp, ipc, e))
		return -1;
	if (exec_runner(s, logp, ipc, e)) {
		close_pair(logp);
		close_pair(ipc);
		return -1;
	}
	take_pipes(s, logp, ipc);
	return 0;
}

/* Starts the runner in two halves, so that the RUNNING status and the start frame are
 * written while it forks: spawn_begin asks the runner zygote (queue/zygote.h) for it when
 * there is one, else execs it (exec_runner); spawn_end collects the zygote's answer.
 * Either way the same process group, descriptors, working directory, environment and
 * rlimits; no step of the flow runs before the start frame (send_start), and the frame
 * waits in the socket until the runner reads it. */
static int spawn_begin(struct sup *s, struct err *e)
{
	int logp[2] = {-1, -1}, ipc[2] = {-1, -1};

	if (!s->q->zygote)
		return exec_with_new_pipes(s, e);
	if (make_pipes(logp, ipc, e))
		return -1;
	struct zygote_req lim;
	runner_rlimits(&lim);
	int rc = zygote_ask(s->q->zygote, s->workdir, logp[1], ipc[1], &lim, &s->zc, e);
	if (rc == 0) { /* the request holds the runner's ends now */
		take_pipes(s, logp, ipc);
		return 0;
	}
	close_pair(logp);
	close_pair(ipc);
	return rc < 0 ? -1 : exec_with_new_pipes(s, e);
}

/* How long a runner the dead zygote may have forked is given to be gone (it dies with the
 * zygote by PR_SET_PDEATHSIG SIGKILL) before its silence is taken as a start. */
#define RUNNER_GONE_MS 5000

/* Whether the runner the zygote may have forked never began: the zygote died without
 * answering, after the start frame was sent.  A runner sends frames (its log, "running")
 * before its first step, so a channel whose every other end is gone (the zygote's, the
 * runner's) with nothing from it means no step ran, and another runner may take the
 * frame (its end closed with the frame unread, the usual case, reads as ECONNRESET).  Anything from it, or no end in RUNNER_GONE_MS, means one may have. */
static bool never_began(struct sup *s)
{
	int64_t deadline = dt_now_ms() + RUNNER_GONE_MS;
	int queued = 0;
	char b;

	for (;;) {
		int64_t left = deadline - dt_now_ms();
		struct pollfd p = {.fd = s->ipc_fd, .events = POLLIN};
		int n = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		ssize_t got = recv(s->ipc_fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		/* the end, or ECONNRESET: its last holder closed it with the frame unread */
		if (got > 0 || (got < 0 && errno != ECONNRESET))
			return false;
		return ioctl(s->log_fd, FIONREAD, &queued) == 0 && queued == 0;
	}
}

/* 0: the runner is up; 1: the zygote died before it forked, and a runner was exec'd with
 * new descriptors (its start frame is still to send); -1: e set — also when the zygote
 * died after the frame was sent and a runner may have begun it (a process never runs
 * twice).  sent: the start frame went out whole. */
static int spawn_end(struct sup *s, bool sent, struct err *e)
{
	int rc;

	if (!s->zc)
		return 0;
	rc = zygote_answer(s->q->zygote, s->zc, &s->pid, e);
	if (rc == 0)
		return 0;
	s->zc = NULL;
	if (rc == 1 && sent && !never_began(s))
		rc = err_set(e, ERR_INTERNAL,
			     "the runner zygote died as it started the runner, which may have begun and was "
			     "killed by signal 9 with it: the process is not started twice");
	close(s->log_fd);
	close(s->ipc_fd);
	s->log_fd = s->ipc_fd = -1;
	if (rc < 0 || exec_with_new_pipes(s, e))
		return -1;
	return 1;
}

/* The lines Concord's agent begins every run's log with, where they tell something: the
 * runtime, and the entry point of a run from the start (a resumed or restored run
 * continues where it stopped). */
static void agent_lines(struct sup *s)
{
	char msg[sizeof s->r->p.entry_point + 32];

	server_line(s, "INFO", "Runtime: concord-v2");
	if (!s->r->p.resume_event[0]) {
		str_fmt_cut(msg, sizeof msg, "Using entry point: %s", s->r->p.entry_point);
		server_line(s, "INFO", msg);
	}
}

static int send_start(struct sup *s, struct err *e)
{
	json_t *start;
	int rc;

	for (int i = 0; !(start = supervise_start_frame(s->r, s->workdir, s->in_memory ? &s->files : NULL, e));)
		if (!database_wait(s, i++, "start frame", e, true))
			return -1;
	rc = frame_write(s->ipc_fd, start, e);
	json_decref(start);
	return rc;
}

/* ---- the loop ---------------------------------------------------------------------------- */

static int poll_timeout(struct sup *s)
{
	int64_t now = dt_now_ms(), at = 0;

	if (s->flush_at)
		at = s->flush_at;
	if (s->deadline && !s->timed_out && (!at || s->deadline < at))
		at = s->deadline;
	if (s->kill_at && (!at || s->kill_at < at))
		at = s->kill_at;
	if (s->waits_at && (!at || s->waits_at < at))
		at = s->waits_at;
	if (task_jobs_next_at(&s->jobs) && (!at || task_jobs_next_at(&s->jobs) < at))
		at = task_jobs_next_at(&s->jobs);
	if (!at)
		return -1;
	return at <= now ? 0 : (int)(at - now > 60000 ? 60000 : at - now);
}

static void check_stop(struct sup *s)
{
	char tmp[16];
	int why = atomic_load(&s->r->stop);

	while (read(s->r->wake_fd[0], tmp, sizeof tmp) > 0)
		;
	if (why == STOP_CANCEL && !s->kill_at) {
		server_line(s, "WARN", "Process cancelled: stopping the runner");
		begin_kill(s);
	} else if (why == STOP_SHUTDOWN && !s->kill_at) {
		server_line(s, "ERROR", "Process failed: the server is shutting down");
		begin_kill(s);
	}
}

static void timers(struct sup *s)
{
	int64_t now = dt_now_ms();

	if (s->flush_at && now >= s->flush_at)
		flush(s);
	if (s->deadline && !s->timed_out && now >= s->deadline) {
		char msg[96];
		s->timed_out = true;
		if (s->r->p.timeout_s > 0)
			str_fmt_cut(msg, sizeof msg, "Process timed out (%llds limit)", (long long)s->r->p.timeout_s);
		else
			str_fmt_cut(msg, sizeof msg,
				    "Process timed out (%us limit: the server's --default-process-timeout for processes "
				    "without processTimeout)",
				    limits.process_timeout_s);
		server_line(s, "ERROR", msg);
		store_audit_system(s->db, "STOP", s->id, NULL, s->r->p.initiator_id, s->r->p.initiator, "processTimeout");
		begin_kill(s);
	}
	if (s->kill_at && now >= s->kill_at) {
		signal_group(s, SIGKILL);
		s->kill_at = now + 60000;
	}
}

static void job_reply(void *ctx, json_t *answer)
{
	reply(ctx, answer);
}

/* Runs until the runner has closed both its log and its IPC socket. */
static void loop(struct sup *s)
{
	while (!s->log_closed || !s->ipc_closed) {
		struct pollfd fds[3 + 2 * TASK_JOBS_MAX] = {{s->log_closed ? -1 : s->log_fd, POLLIN, 0},
							    {s->ipc_closed ? -1 : s->ipc_fd, POLLIN, 0},
							    {s->r->wake_fd[0], POLLIN, 0}};
		size_t n_jobs = task_jobs_fds(&s->jobs, fds + 3);
		int n = poll(fds, 3 + n_jobs, poll_timeout(s));
		if (n < 0 && errno != EINTR) {
			LOG_E("process %s: poll: %s", s->id, strerror(errno));
			begin_kill(s);
		}
		if (fds[0].revents)
			read_log(s);
		if (fds[1].revents)
			read_ipc(s);
		if (fds[2].revents)
			check_stop(s);
		if (json_array_size(s->waits) && (fds[2].revents || dt_now_ms() >= s->waits_at))
			check_waits(s);
		if (n_jobs)
			task_jobs_step(&s->jobs, n >= 0 ? fds + 3 : NULL, job_line, job_reply, s);
		timers(s);
	}
}

/* ---- the end ------------------------------------------------------------------------------ */

static enum proc_status final_status(struct sup *s, int wstatus)
{
	int why = atomic_load(&s->r->stop);
	char msg[160];

	if (why == STOP_CANCEL)
		return PS_CANCELLED;
	if (why == STOP_SHUTDOWN || s->log_full)
		return PS_FAILED;
	if (s->timed_out)
		return PS_TIMED_OUT;
	if (s->done && strcmp(s->done, "FINISHED") == 0)
		return PS_FINISHED;
	if (s->done && strcmp(s->done, "SUSPENDED") == 0)
		return PS_SUSPENDED;
	if (!s->done) {
		if (WIFSIGNALED(wstatus))
			str_fmt_cut(msg, sizeof msg, "Process failed: the runner was killed by signal %d (%s)",
				    WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
		else
			str_fmt_cut(msg, sizeof msg,
				    "Process failed: the runner exited with status %d without a result",
				    WEXITSTATUS(wstatus));
		server_line(s, "ERROR", msg);
	}
	return PS_FAILED;
}

/* The working directory out of the way in one rename (removed once the end is committed);
 * the path is free for a restore right after the final status.  out is "" when it was
 * removed in place instead. */
static void set_aside(struct sup *s, char *out, size_t cap)
{
	struct err e;

	out[0] = '\0';
	if (!s->workdir[0])
		return;
	/* a folder the process never touched serves the next one */
	if (s->in_memory && workdir_pool_give(&s->q->pool, s->q->work_dir, s->workdir, &s->handed))
		return;
	if (str_fmt(out, cap, "%s/work/.ended-%s", s->q->work_dir, s->id) == 0 && rename(s->workdir, out) == 0)
		return;
	out[0] = '\0';
	if (path_remove_tree(s->workdir, &e)) /* a previous run's leftover in the way: slower */
		LOG_W("process %s: %s", s->id, e.msg);
}

/* The final status on its own, after the end's transaction failed.  A full disk (or a
 * database out of reach) is waited for, a second at a time as for the start of the end,
 * so that the process does not stay RUNNING once there is room again; not at shutdown
 * (recovery at the next start settles it). */
static bool record_end_alone(struct sup *s, unsigned from, enum proc_status st)
{
	struct err e;

	for (int i = 0;; i++) {
		if (store_process_transition(s->db, s->id, from, st, &e) == 0)
			return true;
		if (i == 0)
			LOG_E("process %s: cannot record %s: %s%s", s->id, proc_status_name(st), e.msg,
			      e.code == ERR_NO_SPACE || e.code == ERR_UNAVAILABLE ? " (trying again every second)" : "");
		if ((e.code != ERR_NO_SPACE && e.code != ERR_UNAVAILABLE) || i >= END_WAIT_TRIES ||
		    atomic_load(&s->r->stop) == STOP_SHUTDOWN)
			return false;
		nanosleep(&(struct timespec){UNAVAILABLE_RETRY_MS / 1000, 0}, NULL);
	}
}

/* What the end's transaction would lose if its commit failed: the log and events not yet
 * stored, so that the whole end can be written again once the database is back. */
struct unstored {
	struct buf log;
	json_t *events;
};

static int keep_unstored(struct sup *s, struct unstored *u, struct err *e)
{
	buf_init(&u->log, 0);
	u->events = json_deep_copy(s->events);
	if (!u->events || buf_append(&u->log, s->log.data, s->log.len, e)) {
		json_decref(u->events);
		buf_cleanup(&u->log);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	return 0;
}

static void restore_unstored(struct sup *s, struct unstored *u)
{
	buf_cleanup(&s->log);
	s->log = u->log;
	json_decref(s->events);
	s->events = u->events;
}

static void drop_unstored(struct unstored *u)
{
	buf_cleanup(&u->log);
	json_decref(u->events);
}

/* Results, the last log and events, the final status and (FINISHED) the payload's removal
 * in one transaction (nested ones inside are savepoints): one commit for the whole end.
 * When that commit fails because PostgreSQL went away mid-way (everything in it undone), the
 * whole end is written again once the database is back, as the start of the end waits for
 * it; only another failure (or shutdown) leaves the final status to be recorded alone. */
static void finish(struct sup *s, enum proc_status st)
{
	struct store_conn *own = s->db, *w;
	struct err e;
	int rc;
	unsigned from = PS_BIT(PS_STARTING) | PS_BIT(PS_RUNNING);
	char aside[4200];
	bool tx, ended = false, kept;
	enum proc_status wanted;
	struct unstored u;

	if (st == PS_SUSPENDED) {
		flush(s);
		if (supervise_store_suspended(s->db, s->id, s->workdir, s->wait_events, s->forms,
					      s->wake_event[0] ? s->wake_event : NULL, s->wake_at, &e) == 0) {
			s->suspended = true;
			queue_log_grew(s->q, s->db, s->id);
			logwatch_end(s->id);
			return;
		}
		LOG_E("process %s: cannot store its suspended state: %s", s->id, e.msg);
		if (e.code == ERR_TOO_LARGE || e.code == ERR_FORBIDDEN) /* a limit, a state policy */
			server_line_why(s, "Process failed: its suspended state could not be stored", &e);
		else
			server_line(s, "ERROR", "Process failed: its suspended state could not be stored");
		st = PS_FAILED;
	}
	wanted = st;
	for (int attempt = 0;; attempt++) {
		st = wanted;
		ended = false;
		/* On the store's writer connection: the end commits with the other processes'
		 * writes (group commit), the thread's own connection serves the rest. */
		s->db = (w = store_writer_enter(own, &e)) ? w : own;
		/* The end waits for the database (PostgreSQL restarting), but not at shutdown. */
		for (int i = 0; !(tx = store_tx_begin_rows(s->db, &e) == 0) && database_wait(s, i, "end", &e, false); i++)
			;
		if (!tx)
			LOG_W("process %s: its end is stored step by step: %s", s->id, e.msg);
		kept = tx && attempt < END_WAIT_TRIES && keep_unstored(s, &u, &e) == 0;
		if (supervise_store_results(s->db, s->id, s->workdir,
					    json_object_get(s->r->p.meta, "out") != NULL, &e)) {
			LOG_E("process %s: cannot store its results: %s", s->id, e.msg);
			if (e.code == ERR_TOO_LARGE) /* the flow's doing: the log says which limit */
				server_line_why(s, "Process failed: its results could not be stored", &e);
			else
				server_line(s, "ERROR", "Process failed: its results could not be stored");
			st = PS_FAILED;
		}
		flush(s);
		if (s->lost && st == PS_FINISHED) {
			server_line(s, "ERROR",
				    "Process failed: part of its log or events could not be stored (see the server log)");
			st = PS_FAILED;
			flush(s);
		}
		set_aside(s, aside, sizeof aside);
		if (store_process_transition(s->db, s->id, from, st, &e)) {
			LOG_E("process %s: cannot record %s: %s", s->id, proc_status_name(st), e.msg);
		} else {
			ended = true;
			/* A FAILED, CANCELLED or TIMED_OUT process's handlers start from a copy of
			 * its payload (handlers.c): dropped after them. */
			if (st == PS_FINISHED && store_process_payload_drop(s->db, s->id, &e))
				LOG_W("process %s: cannot drop its payload: %s", s->id, e.msg);
			/* The slot's next process is claimed in the same commit (one write
			 * transaction less a process while processes wait): its STARTING is seen
			 * once this end is, as when it was claimed right after. */
			if (tx && atomic_load(&s->r->stop) != STOP_SHUTDOWN)
				s->has_next = queue_claim_in_end(s->q, s->db, &s->next);
		}
		rc = tx ? store_tx_commit(s->db, &e) : 0;
		if (w)
			rc = store_writer_leave(own, w, rc, &e);
		s->db = own;
		if (rc && s->has_next) { /* undone with the end */
			store_process_cleanup(&s->next);
			s->has_next = false;
		}
		if (rc == 0) {
			if (kept)
				drop_unstored(&u);
			break;
		}
		ended = false;
		if (kept && e.code == ERR_UNAVAILABLE && atomic_load(&s->r->stop) != STOP_SHUTDOWN &&
		    (!aside[0] || rename(aside, s->workdir) == 0)) {
			LOG_W("process %s: its end was undone (%s); written again once the database is back",
			      s->id, e.msg);
			restore_unstored(s, &u);
			nanosleep(&(struct timespec){UNAVAILABLE_RETRY_MS / 1000, 0}, NULL);
			continue;
		}
		if (kept)
			drop_unstored(&u);
		/* Everything above is undone (its log too): the final status at least, on its
		 * own — never FINISHED for a process whose end was lost. */
		LOG_E("process %s: cannot store its end: %s", s->id, e.msg);
		if (st == PS_FINISHED)
			st = PS_FAILED;
		ended = record_end_alone(s, from, st);
		break;
	}
	if (aside[0] && path_remove_tree(aside, &e))
		LOG_W("process %s: %s", s->id, e.msg);
	if (ended) {
		if (s->running_at)
			metrics_observe(MH_PROCESS_RUNNING_TO_FINAL, (dt_now_ms() - s->running_at) * 1000);
		queue_process_ended(s->q, s->db, s->id, st);
		if (st != PS_FINISHED && store_process_payload_drop(s->db, s->id, &e))
			LOG_W("process %s: cannot drop its payload: %s", s->id, e.msg);
	}
	queue_log_grew(s->q, s->db, s->id); /* the other nodes' followers see the end */
	logwatch_end(s->id);
}

/* Reaps the runner (its exit status from the zygote, or wait4 of an exec'd one) unless it
 * was reaped already or never started. */
static void reap_runner(struct sup *s, int *wstatus)
{
	int64_t maxrss_kb = 0;

	if (s->reaped || s->pid <= 0)
		return;
	if (s->zc) {
		*wstatus = zygote_wait(s->q->zygote, s->zc, &maxrss_kb);
	} else {
		struct rusage ru = {0};

		while (wait4(s->pid, wstatus, 0, &ru) < 0 && errno == EINTR)
			;
		maxrss_kb = ru.ru_maxrss;
	}
	metrics_runner_rss((uint64_t)maxrss_kb * 1024);
	s->zc = NULL;
	s->reaped = true;
}

/* One process from its claim to its final status: true when r holds the next one
 * (queue_take_next), false when r was released. */
static bool supervise(struct running *r)
{
	struct sup s = {.r = r,
			.q = r->q,
			.id = r->p.instance_id,
			.log_fd = -1,
			.ipc_fd = -1,
			.project_room = UINT64_MAX};
	struct err e = {0}, fe = {0};
	int wstatus = 0, unsent, rc;
	enum proc_status st = PS_FAILED;

	s.claimed_at = dt_now_ms();
	memdir_init(&s.files);
	buf_init(&s.log, 0);
	s.events = json_array();
	s.waits = json_array();
	frame_reader_init(&s.frames);
	if (!(s.db = store_conn(s.q->cfg.store, &e)))
		goto broken;
	if (atomic_load(&r->stop) != STOP_NONE) {
		st = atomic_load(&r->stop) == STOP_CANCEL ? PS_CANCELLED : PS_FAILED;
		goto end;
	}
	if (prepare_workdir_waiting(&s, &e)) {
		if (atomic_load(&r->stop) == STOP_NONE)
			goto broken;
		st = atomic_load(&r->stop) == STOP_CANCEL ? PS_CANCELLED : PS_FAILED;
		goto end;
	}
	/* RUNNING and the start frame are written while the runner forks and confines itself;
	 * its flow starts with the frame, after RUNNING. */
	if (spawn_begin(&s, &e))
		goto broken;
	mark_running(&s);
	agent_lines(&s);
	unsent = send_start(&s, &fe);
	if ((rc = spawn_end(&s, unsent == 0, &e)) < 0)
		goto broken;
	if (rc == 1) /* the frame went to a runner that never was */
		unsent = send_start(&s, &fe);
	if (unsent) {
		LOG_W("process %s: cannot send the start frame: %s", s.id, fe.msg);
		begin_kill(&s);
	}
	loop(&s);
	task_jobs_end(&s.jobs, s.q->cfg.stop_grace_ms + 10000, job_line, &s);
	/* A runner that reported its result and closed its descriptors is past its last
	 * step: its end is recorded without waiting for its exit status, which only a runner
	 * without a result needs (final_status); it is reaped after. */
	if (!s.done)
		reap_runner(&s, &wstatus);
	signal_group(&s, SIGKILL); /* anything the flow left behind in its group */
	st = final_status(&s, wstatus);
	goto end;
broken:
	LOG_E("process %s: cannot start: %s", s.id, e.msg);
	{
		char msg[ERR_MSG_MAX + 32];
		str_fmt_cut(msg, sizeof msg, "Process failed: %s", e.msg);
		if (s.db)
			server_line(&s, "ERROR", msg);
	}
	st = PS_FAILED;
end:
	/* finish removes the working directory before it records the status: after that a
	 * resume or restore may already have made it again for the next run. */
	if (s.db)
		finish(&s, st);
	if (s.zc && !s.reaped) /* its exit status is not needed: the zygote's reader frees it */
		zygote_detach(s.q->zygote, s.zc);
	else
		reap_runner(&s, &wstatus);
	if (s.log_fd >= 0)
		close(s.log_fd);
	if (s.ipc_fd >= 0)
		close(s.ipc_fd);
	frame_reader_cleanup(&s.frames);
	memdir_cleanup(&s.files);
	buf_cleanup(&s.log);
	json_decref(s.events);
	json_decref(s.waits);
	atomic_store(&r->waits_for_ends, false); /* the slot's next process waits for nothing yet */
	json_decref(s.wait_events);
	json_decref(s.forms);
	if (s.suspended) {
		/* Once its working directory is gone and it left this node's list, a resume may
		 * start it again (children.c waits for that). */
		char id[UUID_STR_LEN];
		if (str_fmt(id, sizeof id, "%s", s.id)) /* an instance id */
			abort();
		queue_release(s.q, r);
		children_parent_suspended(s.q, s.db, id);
		locks_process_suspended(s.q, s.db, id);
		return false;
	}
	if (!s.db) {
		queue_release(s.q, r);
		return false;
	}
	return queue_take_next(s.q, s.db, r, s.has_next ? &s.next : NULL);
}

void supervisor_main(void *arg)
{
	while (supervise(arg))
		;
}
