/* The `docker` task on the server (docs/flows.md "docker"): the server, not the runner,
 * starts the container (docs/security.md "Containers": an engine's socket is root on the
 * host), with the process's working directory at /workspace and nothing else of the
 * host.  This checks the parameters, writes the environment file (in the server's own
 * folder) and the command's script (in the working directory, as Concord), and hands a
 * docker_job (docker_job.h) to the supervisor, which answers the call when it ends. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/docker_spec.h"
#include "policy/policy.h"
#include "queue/tasks/docker_job.h"
#include "queue/tasks/server_tasks.h"
#include "store/policies.h"

#define ENV_FILE_MAX (1u << 20)
#define SCRIPT_DIR ".concord"
#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* What the engine's command may see of the server's environment: its own settings. */
static const char *const engine_env[] = {"HOME",
					 "LANG",
					 "TMPDIR",
					 "XDG_RUNTIME_DIR",
					 "CONTAINERS_CONF",
					 "CONTAINERS_STORAGE_CONF",
					 "CONTAINERS_REGISTRIES_CONF",
					 "REGISTRY_AUTH_FILE",
					 "DOCKER_HOST",
					 "DOCKER_CONFIG",
					 "DOCKER_CERT_PATH",
					 "DOCKER_TLS_VERIFY",
					 "DOCKER_CONTEXT"};

static atomic_uint job_seq;

static int oom(struct err *e)
{
	return err_set(e, ERR_INTERNAL, "out of memory");
}

static int engine_environment(struct strv *env, struct err *e)
{
	const char *path = getenv("PATH");

	if (strv_add(env, "PATH=%s", path && *path ? path : DEFAULT_PATH))
		return oom(e);
	for (size_t i = 0; i < sizeof engine_env / sizeof engine_env[0]; i++) {
		const char *v = getenv(engine_env[i]);
		if (v && strv_add(env, "%s=%s", engine_env[i], v))
			return oom(e);
	}
	return 0;
}

/* The environment file: envFile (read beneath the working directory: never a link out of
 * it, so the flow cannot have the server read another file) and env. */
static int write_env(struct task_call *tc, const struct docker_spec *s, unsigned n, struct docker_job_spec *sp,
		     struct err *e)
{
	char *file = NULL, *text = NULL;
	size_t len = 0;
	int rc = -1;

	if (s->env_file && !(file = path_read_beneath(tc->workdir, s->env_file, ENV_FILE_MAX, &len, e))) {
		if (e->code == ERR_NOT_FOUND)
			err_set(e, ERR_INVALID, "'envFile' file not found: %s", s->env_file);
		else
			err_prefix(e, "docker: 'envFile'");
		return -1;
	}
	if (!(text = docker_env_text(s, file, len, e)))
		goto out;
	if (!*text) {
		rc = 0;
		goto out;
	}
	len = strlen(tc->r->q->work_dir) + 80;
	if (!(sp->env_path = malloc(len))) {
		rc = oom(e);
		goto out;
	}
	if (str_fmt(sp->env_path, len, "%s/work/.docker-%s-%u.env", tc->r->q->work_dir, tc->r->p.instance_id, n)) {
		rc = err_set(e, ERR_INTERNAL, "docker: environment file path too long");
		goto out;
	}
	rc = path_write_scratch(sp->env_path, text, strlen(text), 0600, e);
out:
	if (file)
		explicit_bzero(file, strlen(file));
	if (text)
		explicit_bzero(text, strlen(text));
	free(file);
	free(text);
	return rc;
}

/* The command as a script in the working directory, given to the runners' user (the
 * container runs as it). */
static int write_script(struct task_call *tc, const struct docker_spec *s, unsigned n, struct docker_job_spec *sp,
			char *in_container, size_t cap, struct err *e)
{
	char rel[64];
	char *text = docker_script_text(s);
	int rc;

	if (!text)
		return oom(e);
	str_fmt_cut(rel, sizeof rel, SCRIPT_DIR "/docker-%u.sh", n);
	rc = path_mkdirs_beneath(tc->workdir, SCRIPT_DIR, 0700, e);
	if (rc == 0)
		rc = path_write_beneath(tc->workdir, rel, text, strlen(text), 0600, e);
	free(text);
	if (rc == 0 && !(sp->workdir = strdup(tc->workdir)))
		rc = oom(e);
	if (rc == 0 && !(sp->script = strdup(rel)))
		rc = oom(e);
	if (rc == 0)
		rc = queue_give_to_runner(tc->r->q, tc->workdir, rel, e);
	str_fmt_cut(in_container, cap, DOCKER_WORKSPACE "/%s", rel);
	return rc;
}

/* "docker run … image script", then the script: for debug: true. */
static char *debug_text(const struct strv *argv, const struct docker_spec *s)
{
	struct buf b;
	struct err e;
	const char *k;
	json_t *v;

	buf_init(&b, 1u << 20);
	for (size_t i = 0; i < argv->n; i++)
		if (buf_printf(&b, &e, "%s%s", i ? " " : "command: ", argv->v[i]))
			break;
	json_object_foreach(s->env, k, v) if (buf_printf(&b, &e, "\nenv: %s", k)) break;
	if ((s->cmd && buf_printf(&b, &e, "\ncmd: %s", s->cmd)) || buf_append(&b, "", 1, &e)) {
		buf_cleanup(&b);
		return NULL;
	}
	return b.data;
}

/* The container rule of the process's policy (docs/security.md "Policies"): its maxCpu and
 * maxRam are the container's --cpus and --memory. */
static int container_limits(struct task_call *tc, char cpus[24], char memory[24], struct err *e)
{
	json_t *pol = NULL;
	const json_t *r;
	int64_t n;

	cpus[0] = memory[0] = '\0';
	if (store_process_policy_get(tc->c, tc->r->p.instance_id, &pol, e))
		return -1;
	r = json_object_get(json_object_get(pol, "rules"), "container");
	if ((n = policy_number(json_object_get(r, "maxCpu"))) > 0)
		str_fmt_cut(cpus, 24, "%lld", (long long)n);
	if ((n = policy_size_bytes(json_object_get(r, "maxRam"))) > 0)
		str_fmt_cut(memory, 24, "%lld", (long long)n);
	json_decref(pol);
	return 0;
}

static int build(struct task_call *tc, const struct docker_spec *s, struct docker_job_spec *sp, struct err *e)
{
	const struct queue_cfg *cfg = &tc->r->q->cfg;
	struct strv engine = {0}, extra = {0};
	unsigned n = atomic_fetch_add(&job_seq, 1) + 1;
	char name[96], user[48], script[96], cpus[24], memory[24];
	int rc = -1;

	if (docker_words(cfg->docker_command && *cfg->docker_command ? cfg->docker_command : "docker", &engine, e) ||
	    docker_words(cfg->docker_run_options, &extra, e))
		goto out;
	if (!engine.n) {
		err_set(e, ERR_UNAVAILABLE, "docker: no container engine is configured (--docker-command)");
		goto out;
	}
	if (!(sp->exe =
		  docker_engine_path(engine.v[0], getenv("PATH") && *getenv("PATH") ? getenv("PATH") : DEFAULT_PATH))) {
		err_set(e, ERR_UNAVAILABLE,
			"docker: the container engine '%s' is not installed on this server (--docker-command; "
			"docs/operations.md \"Containers\")",
			engine.v[0]);
		goto out;
	}
	if (container_limits(tc, cpus, memory, e) || engine_environment(&sp->env, e) || write_env(tc, s, n, sp, e))
		goto out;
	if (s->cmd && write_script(tc, s, n, sp, script, sizeof script, e))
		goto out;
	str_fmt_cut(name, sizeof name, "accord-%s-%u", tc->r->p.instance_id, n);
	/* The owner of the working directory: the runners' user, or the server's own. */
	str_fmt_cut(user, sizeof user, "%u:%u", (unsigned)(cfg->runner_drop ? cfg->runner_uid : geteuid()),
		    (unsigned)(cfg->runner_drop ? cfg->runner_gid : getegid()));
	if (docker_run_argv(&(struct docker_run_opts){.engine = engine.v,
						      .name = name,
						      .workdir = tc->workdir,
						      .network = cfg->docker_network,
						      .extra = extra.v,
						      .user = user,
						      .env_path = sp->env_path,
						      .script_path = s->cmd ? script : NULL,
						      .cpus = *cpus ? cpus : NULL,
						      .memory = *memory ? memory : NULL},
			    s, &sp->run, e) ||
	    (s->force_pull && docker_pull_argv(engine.v, s->image, &sp->pull, e)) ||
	    docker_kill_argv(engine.v, name, &sp->kill, e))
		goto out;
	if (s->debug && !(sp->debug = debug_text(&sp->run, s))) {
		oom(e);
		goto out;
	}
	rc = 0;
out:
	strv_free(&engine);
	strv_free(&extra);
	return rc;
}

int server_task_docker(struct task_call *tc, struct err *e)
{
	struct docker_spec s;
	struct docker_job_spec sp = {0};
	json_t *secrets;

	if (tc->method)
		return err_set(e, ERR_INVALID, "Method not found: docker.%s", tc->method);
	if (docker_spec_parse(tc->args, &s, e))
		return -1;
	if (build(tc, &s, &sp, e)) {
		docker_job_free(docker_job_new(&sp)); /* removes what was written */
		return -1;
	}
	if ((secrets = task_sensitive_load(tc->c, tc->r))) {
		mask_add_list(&sp.mask, secrets);
		json_decref(secrets);
	}
	sp.pull_tries = (unsigned)s.pull_retry_count + 1;
	sp.pull_interval_ms = s.pull_retry_interval_ms;
	sp.grace_ms = tc->r->q->cfg.stop_grace_ms;
	sp.log_out = s.log_out;
	sp.log_err = s.log_err;
	sp.save_out = s.save_out;
	sp.save_err = s.save_err;
	sp.redirect_err = s.redirect_err;
	if (!(tc->job = docker_job_new(&sp)))
		return oom(e);
	return 0;
}
