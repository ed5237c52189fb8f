#ifndef ACCORD_FLOW_TASKS_DOCKER_SPEC_H
#define ACCORD_FLOW_TASKS_DOCKER_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "base/strv.h"

/* The `docker` task's parameters (docs/flows.md "docker", Concord's plugins-v2/docker.md)
 * and the container engine's command lines built from them, shared by the server (which
 * starts containers itself: queue/tasks/server_task_docker.c) and `accord run` (runner/tool.c).
 * No flag or value of the flow reaches the engine's command line unchecked: env values
 * and the command go through files, never argv. */

#define DOCKER_WORKSPACE "/workspace"

struct docker_spec {
	/* BORROWED from the task's `in` object. */
	const char *image;
	const char *cmd;      /* NULL: the image's ENTRYPOINT */
	const char *env_file; /* relative to the working directory; NULL: none */
	json_t *env;	      /* object or NULL */
	json_t *hosts;	      /* array of "name:address" strings or NULL */
	bool force_pull, debug, redirect_err, log_out, log_err, save_out, save_err;
	long long pull_retry_count, pull_retry_interval_ms;
};

/* Reads and checks in (Concord's defaults: forcePull true, logOut/logErr true, saveOut/
 * saveErr/redirectErrorStream/debug false, pullRetryCount 3, pullRetryInterval 10000).
 * < 0 with e set (ERR_INVALID, naming the parameter) on a bad value. */
int docker_spec_parse(json_t *in, struct docker_spec *s, struct err *e) WUR;

/* The environment file the container gets (--env-file): the NAME=value lines of the
 * flow's envFile (file_text, file_len bytes; NULL: none; blank lines and # comments
 * skipped, lines without '=' dropped: they would copy the engine's own environment), then
 * env's entries (values as strings).  NEW text, or NULL with e set (a bad name, a value
 * with a line break). */
char *docker_env_text(const struct docker_spec *s, const char *file_text, size_t file_len, struct err *e);

/* The script the container's /bin/sh runs for cmd: "cd /workspace" then cmd (Concord's).
 * NEW text, NULL when out of memory. */
char *docker_script_text(const struct docker_spec *s);

/* How a container is started on this host. */
struct docker_run_opts {
	char *const *engine;	 /* the engine's command: {"docker", NULL} or {"podman", "--runtime", …} */
	const char *name;	 /* the container's name (so that it can be killed) */
	const char *workdir;	 /* host path mounted at /workspace (no ':' or ',') */
	const char *network;	 /* --network; NULL: the engine's default */
	char *const *extra;	 /* more `run` options of the operator (NULL-terminated or NULL) */
	const char *user;	 /* --user uid:gid; NULL: the image's */
	const char *env_path;	 /* host path of the environment file; NULL: none */
	const char *script_path; /* path of the command's script inside the container; NULL: no cmd */
	const char *cpus;	 /* --cpus (the container policy's maxCpu); NULL: no limit */
	const char *memory;	 /* --memory in bytes (the container policy's maxRam); NULL: no limit */
};

/* `<engine> run --rm …` into *argv (appended).  < 0 with e set when out of memory or a
 * path holds a character the engine's -v syntax cannot carry. */
int docker_run_argv(const struct docker_run_opts *o, const struct docker_spec *s, struct strv *argv, struct err *e) WUR;
/* `<engine> pull <image>` and `<engine> kill <name>`, appended to *argv. */
int docker_pull_argv(char *const *engine, const char *image, struct strv *argv, struct err *e) WUR;
int docker_kill_argv(char *const *engine, const char *name, struct strv *argv, struct err *e) WUR;

/* Splits a setting such as "podman --runtime runc" at blanks into *out (appended); an
 * empty setting gives nothing.  < 0 when out of memory. */
int docker_words(const char *setting, struct strv *out, struct err *e) WUR;

/* The engine's program: word as given when it holds a '/', else the first executable of
 * that name in the folders of path (':'-separated).  NEW, or NULL when there is none (or
 * out of memory). */
char *docker_engine_path(const char *word, const char *path);

/* The result of a run: {"ok": true, "stdout": …, "stderr": …} (Concord's: stdout null
 * unless saveOut, stderr "" unless saveErr).  NEW. */
json_t *docker_result(const struct docker_spec *s, const char *out, const char *err);

#endif
