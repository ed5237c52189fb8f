/* accord runner: the child process that executes one process (DESIGN.md §2).
 *
 * Started by a supervisor (queue/supervise/supervisor.c) in the process's working directory with
 * stdin on /dev/null, stdout and stderr on the supervisor's log pipe and fd 3 on its IPC
 * socket.  It confines itself, reads one "start" frame, loads the definition, runs the
 * VM and leaves out.json / the suspended state in the working directory; events and
 * server-task calls go over fd 3 (protocol: docs/operations.md "Runner protocol").  Never
 * started by users: it refuses to run without fd 3. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/frame.h"
#include "base/oom.h"
#include "base/sanitizer.h"
#include "base/uuid.h"
#include "flow/procdir.h"
#include "flow/tasks/defaults.h"
#include "flow/tasks/task.h"
#include "flow/vm.h"
#include "runner/confine.h"
#include "runner/identity.h"
#include "runner/runner.h"
#include "runner/zygote.h"

#define IPC_FD 3

struct runner {
	/* NEW (getcwd's), not an array: struct runner is zeroed on the stack, and 4 kB more of
	 * it was a page more each forked runner faults in (bench/RESULTS.md) */
	char *workdir;
	struct runner_host host;
	struct model *m;
	struct vm *vm;
	json_t *start;
};

/* The earliest wake-up of a suspended process whose threads wait in `sleep` (the server
 * resumes it then with that event); nothing when no thread sleeps. */
static void add_wake(json_t *done, struct vm *vm)
{
	json_t *events = vm_waiting_events(vm), *ev;
	const char *best = NULL;
	int64_t at, best_at = 0;
	size_t i;

	json_array_foreach(events, i, ev)
	{
		if (json_is_string(ev) && task_sleep_wake_at(json_string_value(ev), &at) && (!best || at < best_at)) {
			best = json_string_value(ev);
			best_at = at;
		}
	}
	if (best) {
		json_object_set_new(done, "wakeAt", json_integer(best_at));
		json_object_set_new(done, "wakeEvent", json_string(best));
	}
	json_decref(events);
}

static int send_done(const char *status, struct vm *vm)
{
	struct err e;
	json_t *f = json_pack("{s:s, s:s}", "type", "done", "status", status);
	int rc;

	if (vm && strcmp(status, "SUSPENDED") == 0) {
		add_wake(f, vm);
		json_object_set_new(f, "events", vm_waiting_events(vm));
		json_object_set_new(f, "forms", vm_pending_forms(vm));
	}
	rc = frame_write(IPC_FD, f, &e);
	json_decref(f);
	return rc;
}

/* Concord's process metadata: the current values of the variables configuration.meta
 * names (dotted names reach into objects), sent before the end so that the process's meta
 * shows them (the meta.* list filters find them).  Names without a value keep theirs. */
static void send_meta(struct runner *r)
{
	json_t *keys = json_array(), *vals;
	const char *k;
	json_t *v;

	json_object_foreach(json_object_get(r->m->configuration, "meta"), k, v)
	    json_array_append_new(keys, json_string(k));
	vals = json_array_size(keys) ? vm_out_vars(r->vm, keys) : NULL;
	if (vals && json_object_size(vals))
		runner_send(&r->host, json_pack("{s:s, s:O}", "type", "meta", "values", vals));
	json_decref(vals);
	json_decref(keys);
}

static int load(struct runner *r, struct err *e)
{
	json_t *profiles = json_object_get(r->start, "activeProfiles"), *v, *sys_pi;
	const char *names[64];
	/* git and mvn imports were copied into the folder by the server (queue/start_staged) */
	static const struct model_importer resolved = {0};
	bool needs_folder = false;
	struct model_opts mo = {.path = r->workdir,
				.server_imports = true,
				.importer = &resolved,
				.files = r->host.files_pending ? &r->host.files : NULL,
				.needs_folder = &needs_folder};
	size_t i;

	json_array_foreach(profiles, i, v)
	{
		if (i >= sizeof names / sizeof names[0])
			return err_set(e, ERR_INVALID, "too many active profiles (at most %zu)",
				       sizeof names / sizeof names[0]);
		names[i] = json_string_value(v) ? json_string_value(v) : "";
		mo.n_profiles = i + 1;
	}
	mo.profiles = mo.n_profiles ? names : NULL;
	r->m = model_load(&mo, e);
	/* imports copy files into the folder: the files are written first */
	if (!r->m && needs_folder && runner_host_files(&r->host, e) == 0) {
		mo.files = NULL;
		r->m = model_load(&mo, e);
	}
	if (!r->m)
		return -1;
	/* The profiles in effect: the start's, else the definition's, else "default". */
	sys_pi = json_object_get(json_object_get(r->start, "sysvars"), "processInfo");
	if (json_is_object(sys_pi))
		json_object_set(sys_pi, "activeProfiles", r->m->active_profiles);
	return 0;
}

/* A resumed process: its saved state, woken by `event`; or, restored from checkpoint
 * `event`, that checkpoint's state, woken with resumeEvents = [event] and resumeEventName
 * = event as in Concord. */
static int resume(struct runner *r, const char *event, bool checkpoint, struct err *e)
{
	bool is_cp = checkpoint;
	json_t *st = checkpoint ? procdir_checkpoint_state(r->workdir, event, e)
				: procdir_saved_state(r->workdir, event, &is_cp, e);
	json_t *args = json_object_get(r->start, "args");
	int rc;

	if (!st)
		return -1;
	r->vm = vm_load(r->m, &r->host.host, st, e);
	json_decref(st);
	if (!r->vm)
		return -1;
	vm_set_sysvars(r->vm, json_object_get(r->start, "sysvars"));
	if (!is_cp)
		return vm_resume(r->vm, event, json_is_object(args) && json_object_size(args) ? args : NULL, e);
	args = json_is_object(args) ? json_deep_copy(args) : json_object();
	json_object_set_new(args, "resumeEvents", json_pack("[s]", event));
	json_object_set_new(args, "resumeEventName", json_string(event));
	rc = vm_resume(r->vm, event, args, e);
	json_decref(args);
	return rc;
}

static int start(struct runner *r, struct err *e)
{
	const char *event = json_string_value(json_object_get(r->start, "resume"));
	const char *checkpoint = json_string_value(json_object_get(r->start, "checkpoint"));

	const char *entry = json_string_value(json_object_get(r->start, "entryPoint"));
	json_t *args = json_object_get(r->start, "args"), *sys = json_object_get(r->start, "sysvars");

	if (checkpoint)
		return resume(r, checkpoint, true, e);
	if (event)
		return resume(r, event, false, e);
	if (!entry)
		entry = json_string_value(json_object_get(r->m->configuration, "entryPoint"));
	r->vm = vm_new(r->m, &r->host.host);
	if (!r->vm)
		return err_set(e, ERR_INTERNAL, "out of memory");
	return vm_start_defaults(r->vm, entry ? entry : "default", json_object_get(r->start, "defaults"),
				 json_is_object(args) ? args : NULL, json_is_object(sys) ? sys : NULL, e);
}

static const char *finish(struct runner *r, enum vm_status st)
{
	struct err e;

	if (procdir_write_out(r->workdir, r->vm, &r->host.sensitive, json_object_get(r->m->configuration, "out"),
			      json_object_get(r->start, "out"), st == VM_FAILED, &e) < 0) {
		runner_log(&r->host, FLOW_ERROR, e.msg);
		if (st == VM_FINISHED) /* never FINISHED without the out variables it asked for */
			st = VM_FAILED;
	}
	if (st == VM_SUSPENDED) {
		/* the suspended state is the whole folder, its files with it */
		if (runner_host_files(&r->host, &e) == 0 && procdir_write_suspended(r->workdir, r->vm, NULL, &e) == 0)
			return "SUSPENDED";
		runner_log(&r->host, FLOW_ERROR, e.msg);
		return "FAILED";
	}
	if (procdir_drop_state(r->workdir, &e) < 0)
		runner_log(&r->host, FLOW_ERROR, e.msg);
	return st == VM_FINISHED ? "FINISHED" : "FAILED";
}

static int ipc_ok(void)
{
	struct stat st;
	return fstat(IPC_FD, &st) == 0 && S_ISSOCK(st.st_mode);
}

int cli_runner_main(int argc, char **argv)
{
	struct err e;

	/* Dies with the supervisor thread that started it (see queue/supervise/supervisor.c). */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1) /* the server died before the line above */
		return 1;
	/* A server started as root: its runners (and their zygote) never are. */
	if (runner_identity_apply(&e)) {
		fprintf(stderr, "accord runner: %s\n", e.msg);
		return 1;
	}
	if (argc == 2 && strcmp(argv[1], "--zygote") == 0 && ipc_ok())
		return zygote_main();
	if (argc != 1 || !ipc_ok()) {
		fprintf(stderr, "accord runner: internal command, started by `accord serve` only\n");
		return 2;
	}
	return runner_body();
}

int runner_body(void)
{
	struct runner r = {0};
	struct frame_reader fr;
	const char *status = "FAILED";
	struct err e = {0};
	char confinement[256];

	oom_watch_json(); /* a failed allocation fails the step (flow/vm.c) */
	sanitizer_test_leak(); /* sanitizer builds, when a test asks */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!(r.workdir = getcwd(NULL, 0))) {
		fprintf(stderr, "accord runner: getcwd: %s\n", strerror(errno));
		return 1;
	}
	runner_host_init(&r.host, r.workdir, IPC_FD);
	/* Landlock first: under the zygote it uses descriptors that confine_close_fds closes. */
	if (confine_runner(r.workdir, confinement, sizeof confinement, &e) < 0 || confine_close_fds(IPC_FD, &e) < 0) {
		runner_log(&r.host, FLOW_ERROR, e.msg);
		send_done("FAILED", NULL);
		runner_host_cleanup(&r.host);
		free(r.workdir);
		return 1;
	}
	frame_reader_init(&fr);
	if (frame_read(IPC_FD, &fr, &r.start, &e) != 1 ||
	    strcmp(json_string_value(json_object_get(r.start, "type")), "start") != 0) {
		fprintf(stderr, "accord runner: no start frame: %s\n", e.msg[0] ? e.msg : "unexpected frame");
		goto out;
	}
	if (json_object_get(r.start, "files")) {
		if (memdir_from_json(&r.host.files, json_object_get(r.start, "files"), &e) < 0) {
			runner_log(&r.host, FLOW_ERROR, e.msg);
			goto out;
		}
		r.host.files_pending = true;
	}
	r.host.host.debug = json_is_true(json_object_get(r.start, "debug"));
	if (json_is_array(json_object_get(r.start, "sensitive")))
		runner_host_add_sensitive(&r.host, json_object_get(r.start, "sensitive"));
	/* Masked without telling the server: its own secrets are not the process's to keep. */
	r.host.host.policy = json_object_get(r.start, "policy");
	r.host.host.task_defaults = json_object_get(r.start, "taskDefaults");
	if (r.host.host.task_defaults) {
		json_t *secrets = task_defaults_secrets(r.host.host.task_defaults);
		runner_host_add_sensitive(&r.host, secrets);
		json_decref(secrets);
	}
	if (r.host.host.debug)
		runner_log(&r.host, FLOW_DEBUG, confinement);
	if (load(&r, &e) < 0) {
		runner_log(&r.host, FLOW_ERROR, e.msg);
		goto out;
	}
	r.host.host.debug = r.host.host.debug || json_is_true(json_object_get(r.m->configuration, "debug"));
	r.host.host.dry_run = json_is_true(json_object_get(r.start, "dryRun"));
	if (r.host.host.dry_run)
		runner_log(&r.host, FLOW_INFO, "Dry-run mode: enabled");
	if (runner_send(&r.host, json_pack("{s:s}", "type", "running")) < 0)
		goto out;
	if (start(&r, &e) < 0) {
		runner_log(&r.host, FLOW_ERROR, e.msg);
		goto out;
	}
	status = finish(&r, vm_run(r.vm));
	send_meta(&r);
out:
	runner_host_flush(&r.host);
	send_done(status, r.vm);
	frame_reader_cleanup(&fr);
	vm_free(r.vm);
	model_free(r.m);
	json_decref(r.start);
	runner_host_cleanup(&r.host);
	free(r.workdir);
	return strcmp(status, "FAILED") == 0 ? 1 : 0;
}
