/* accord run: executes a flow directory locally with the flow engine and the local host. */
#include <dirent.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/jsonx.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "cli/commands.h"
#include "cli/run.h"
#include "cli/run_imports.h"
#include "cli/task_settings.h"
#include "flow/copy.h"
#include "flow/procdir.h"
#include "flow/tasks/defaults.h"
#include "flow/value.h"
#include "flow/vm.h"

#define EXIT_FINISHED 0
#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_SUSPENDED 3

struct run_opts {
	const char *path;
	bool path_given;
	const char *entry;
	json_t *args;
	const char *profiles[64];
	size_t n_profiles;
	json_t *out;
	const char *workdir;
	const char *resume;
	const char *events;
	bool debug;
	bool dry_run;
	struct run_imports_opts imports;
	/* the smtp and slack tasks' settings (cli/task_settings.h), as for accord serve */
	char *settings[32];
	int n_settings;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: accord run [PATH] [options]\n\n"
		   "Runs the flow in PATH (a folder with concord.yml, or a YAML file; default .) locally, without a\n"
		   "server.  Log lines go to stdout.\n\n"
		   "options:\n"
		   "  -e, --entry-point NAME   flow to start (default: configuration.entryPoint, else 'default')\n"
		   "  -a, --arg KEY=VALUE      a string argument; KEY may be a dotted path (a.b=1); repeatable\n"
		   "  --arg-json KEY=JSON      an argument with a JSON value (--arg-json n=3); repeatable\n"
		   "  -p, --profile NAME       activate a profile of the definition; repeatable\n"
		   "  --out NAME[,NAME...]     variables to write to _attachments/out.json at the end; repeatable\n"
		   "  --workdir DIR            working folder (created; PATH is copied into it); default: a new\n"
		   "                           folder under $TMPDIR (else /tmp), removed at the end unless the flow\n"
		   "                           suspended or left out variables or attachments: then its path is printed\n"
		   "  --resume EVENT           continue the suspended process in --workdir with EVENT (a form name,\n"
		   "                           a suspend event or a checkpoint name)\n"
		   "  --events FILE            append the process events (one JSON object a line) to FILE\n"
		   "  --imports-git-base-url URL  base URL of `git` imports given by `name: org/repo`\n"
		   "  --maven-repository URL   Maven repository of `mvn` imports; repeatable, tried in order\n"
		   "  --imports-cache DIR      clones and artifacts of imports (default $XDG_CACHE_HOME/accord,\n"
		   "                           else ~/.cache/accord)\n"
		   "  --offline                imports from the cache only: nothing is fetched\n"
		   "  --debug                  log every step, as configuration.debug does\n"
		   "  --dry-run                dry-run mode: isDryRun() is true, tasks that are not dry-run\n"
		   "                           ready fail, the http task sends GET requests only\n"
		   "  --smtp-host, --smtp-port, --smtp-starttls, --smtp-ssl, --smtp-ca-file, --smtp-user,\n"
		   "  --slack-api-url, --slack-proxy\n"
		   "                           the smtp and slack tasks' defaults, as for accord serve (also\n"
		   "                           ACCORD_SMTP_HOST…; ACCORD_SMTP_PASSWORD, ACCORD_SLACK_TOKEN)\n"
		   "  -h, --help               this text\n\n"
		   "Exit status: 0 finished, 1 failed, 3 suspended, 2 usage error or invalid definition.\n");
}

static int add_arg(json_t *args, const char *kv, bool typed)
{
	const char *eq = strchr(kv, '=');
	json_t *v;
	struct err e;
	int rc;
	if (!eq || eq == kv)
		return -1;
	if (typed) {
		v = jsonx_parse(eq + 1, strlen(eq + 1), 64, &e);
		if (!v) {
			fprintf(stderr, "accord run: --arg-json %.*s: %s\n", (int)(eq - kv), kv, e.msg);
			return -1;
		}
	} else {
		v = json_string(eq + 1);
	}
	json_t *nested = json_object();
	rc = value_set_path(nested, kv, (size_t)(eq - kv), v, &e);
	if (rc == 0)
		rc = value_merge(args, nested, &e);
	if (rc < 0)
		fprintf(stderr, "accord run: bad argument name '%.*s': %s\n", (int)(eq - kv), kv, e.msg);
	json_decref(nested);
	json_decref(v);
	return rc;
}

static int add_out(json_t *out, const char *list)
{
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n)
			json_array_append_new(out, json_stringn(p, n));
		p += n + (p[n] == ',');
	}
	return 0;
}

static const char *need_value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		fprintf(stderr, "accord run: %s needs a value\n", argv[*i]);
		return NULL;
	}
	return argv[++*i];
}

/* Options that take a value (all of them but --help, --debug and --dry-run). */
static bool known_option(const char *a)
{
	static const char *const names[] = {"-e",
					    "--entry-point",
					    "-a",
					    "--arg",
					    "--arg-json",
					    "-p",
					    "--profile",
					    "--out",
					    "--workdir",
					    "--resume",
					    "--events",
					    "--imports-git-base-url",
					    "--maven-repository",
					    "--imports-cache"};

	for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
		if (strcmp(a, names[k]) == 0)
			return true;
	return false;
}

/* Prints an option error and returns -1. */
static int bad_option(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_option(const char *fmt, ...)
{
	va_list ap;

	fputs("accord run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* --smtp-host, --slack-proxy=…: one of the task settings (parsed by config_parse later). */
static bool is_task_setting(const char *a)
{
	size_t n;
	if (strncmp(a, "--", 2) != 0)
		return false;
	n = strcspn(a + 2, "=");
	for (size_t k = 0; k < task_settings_n_opts; k++)
		if (strlen(task_settings_opts[k].name) == n && strncmp(a + 2, task_settings_opts[k].name, n) == 0)
			return true;
	return false;
}

static int parse_one(struct run_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i], *v;
	if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
		usage(stdout);
		exit(0);
	}
	if (strcmp(a, "--debug") == 0) {
		o->debug = true;
		return 0;
	}
	if (strcmp(a, "--dry-run") == 0) {
		o->dry_run = true;
		return 0;
	}
	if (strcmp(a, "--offline") == 0) {
		o->imports.offline = true;
		return 0;
	}
	if (is_task_setting(a)) {
		if (o->n_settings + 3 > (int)(sizeof o->settings / sizeof o->settings[0]))
			return bad_option("too many task settings");
		o->settings[o->n_settings++] = argv[*i];
		if (!strchr(a, '=') && *i + 1 < argc)
			o->settings[o->n_settings++] = argv[++*i];
		return 0;
	}
	if (a[0] != '-') {
		if (o->path_given)
			return bad_option("only one PATH may be given");
		o->path = a;
		o->path_given = true;
		return 0;
	}
	if (!known_option(a))
		return bad_option("unknown option '%s' (see --help)", a);
	if (!(v = need_value(argc, argv, i)))
		return -1;
	if (strcmp(a, "-e") == 0 || strcmp(a, "--entry-point") == 0)
		o->entry = v;
	else if (strcmp(a, "-a") == 0 || strcmp(a, "--arg") == 0 || strcmp(a, "--arg-json") == 0) {
		if (add_arg(o->args, v, strcmp(a, "--arg-json") == 0) < 0)
			return bad_option("%s expects KEY=VALUE, got '%s'", a, v);
	} else if (strcmp(a, "-p") == 0 || strcmp(a, "--profile") == 0) {
		if (o->n_profiles == sizeof o->profiles / sizeof o->profiles[0])
			return bad_option("too many profiles");
		o->profiles[o->n_profiles++] = v;
	} else if (strcmp(a, "--out") == 0)
		return add_out(o->out, v);
	else if (strcmp(a, "--workdir") == 0)
		o->workdir = v;
	else if (strcmp(a, "--resume") == 0)
		o->resume = v;
	else if (strcmp(a, "--events") == 0)
		o->events = v;
	else if (strcmp(a, "--imports-git-base-url") == 0)
		o->imports.git_base_url = v;
	else if (strcmp(a, "--imports-cache") == 0)
		o->imports.cache = v;
	else if (strcmp(a, "--maven-repository") == 0) {
		struct buf *b = &o->imports.maven_repos;
		if ((b->len && buf_append_char(b, ',', NULL) < 0) || buf_append(b, v, strlen(v) + 1, NULL) < 0)
			return bad_option("out of memory");
		b->len--; /* keeps the NUL */
	} else
		return bad_option("unknown option '%s'", a);
	return 0;
}

static int parse_args(struct run_opts *o, int argc, char **argv)
{
	o->path = ".";
	buf_init(&o->imports.maven_repos, 64 * 1024);
	for (int i = 1; i < argc; i++)
		if (parse_one(o, argc, argv, &i) < 0)
			return -1;
	if (o->resume && !o->workdir) {
		fprintf(stderr, "accord run: --resume needs --workdir (the suspended process's folder)\n");
		return -1;
	}
	return 0;
}

struct process {
	struct run_opts o;
	char workdir[PATH_MAX];
	struct model *m;
	struct vm *vm;
	struct run_host host;
	FILE *events;
	struct run_imports imports;
	json_t *task_defaults; /* task_settings_json() */
};

/* The project folder of PATH and, for a single file, its name. */
static int project_of(const char *path, char **dir, const char **file)
{
	struct stat st;
	*file = NULL;
	if (stat(path, &st) < 0) {
		fprintf(stderr, "accord run: %s: no such file or directory\n", path);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		*dir = strdup(path);
		return 0;
	}
	const char *slash = strrchr(path, '/');
	*dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) : strdup(".");
	*file = slash ? slash + 1 : path;
	return 0;
}

/* The absolute path dir would have, resolving its longest existing ancestor (it may not
 * exist yet).  False when it cannot be resolved. */
static bool resolve_future(const char *dir, char out[PATH_MAX])
{
	char head[PATH_MAX], real[PATH_MAX];
	const char *tail = "";
	if (snprintf(head, sizeof head, "%s", dir) >= (int)sizeof head)
		return false;
	for (;;) {
		char *slash;
		if (realpath(head[0] ? head : "/", real))
			return snprintf(out, PATH_MAX, "%s%s%s", real, *tail ? "/" : "", tail) < PATH_MAX;
		slash = strrchr(head, '/');
		if (!slash) {
			tail = dir;
			str_set_lit(head, ".");
			continue;
		}
		tail = dir + (slash - head) + 1;
		*slash = '\0';
	}
}

/* A working directory inside the flow's own folder would be copied into itself. */
static bool workdir_inside(const char *src, const char *workdir)
{
	char s[PATH_MAX], w[PATH_MAX];
	size_t n;
	if (!realpath(src, s) || !resolve_future(workdir, w))
		return false;
	n = strlen(s);
	return strncmp(w, s, n) == 0 && (w[n] == '\0' || w[n] == '/' || (n == 1 && s[0] == '/'));
}

static int prepare_workdir(struct process *p, const char **file)
{
	char *src = NULL;
	struct err e;
	int rc = -1;
	if (project_of(p->o.path, &src, file) < 0)
		return -1;
	if (p->o.workdir && (!p->o.resume || p->o.path_given) && workdir_inside(src, p->o.workdir)) {
		fprintf(stderr, "accord run: --workdir %s is inside the flow's folder %s; give a folder outside it\n",
			p->o.workdir, src);
		goto out;
	}
	if (p->o.workdir) {
		if (path_mkdirs(p->o.workdir, 0700, &e) < 0 || !realpath(p->o.workdir, p->workdir)) {
			fprintf(stderr, "accord run: --workdir %s: cannot create it\n", p->o.workdir);
			goto out;
		}
	} else {
		const char *tmp = getenv("TMPDIR");
		if (!tmp || !*tmp)
			tmp = "/tmp";
		if (str_fmt(p->workdir, sizeof p->workdir, "%s/accord-run-XXXXXX", tmp)) {
			fprintf(stderr, "accord run: TMPDIR %s: path too long\n", tmp);
			goto out;
		}
		if (!mkdtemp(p->workdir)) {
			perror("accord run: mkdtemp");
			p->workdir[0] = '\0';
			goto out;
		}
	}
	if ((!p->o.resume || p->o.path_given) && flow_copy_tree(src, p->workdir, "_attachments", &e) < 0) {
		fprintf(stderr, "accord run: cannot copy %s into %s: %s\n", src, p->workdir, e.msg);
		goto out;
	}
	rc = 0;
out:
	free(src);
	return rc;
}

static int load_model(struct process *p, const char *file)
{
	/* a resumed process has its imports in its folder already */
	static const struct model_importer resumed = {0};
	struct model_opts mo = {.profiles = p->o.profiles, .n_profiles = p->o.n_profiles};
	char path[PATH_MAX + 256];
	struct err e;
	json_t *lines, *v;
	size_t i;

	if (run_imports_init(&p->imports, &p->o.imports, &e)) {
		run_log_line(&p->host, FLOW_ERROR, e.msg);
		return -1;
	}
	mo.importer = p->o.resume ? &resumed : &p->imports.importer;
	if (str_fmt(path, sizeof path, "%s%s%s", p->workdir, file ? "/" : "", file ? file : "")) {
		run_log_line(&p->host, FLOW_ERROR, "the flow's file path is too long");
		return -1;
	}
	mo.path = path;
	p->m = model_load(&mo, &e);
	if (!p->m) {
		run_log_line(&p->host, FLOW_ERROR, e.msg);
		return -1;
	}
	lines = run_imports_lines(&p->imports);
	json_array_foreach(lines, i, v) run_log_line(&p->host, FLOW_INFO, json_string_value(v));
	json_decref(lines);
	return 0;
}

static json_t *system_vars(struct process *p)
{
	char id[UUID_STR_LEN];
	uuid_v4(id);
	/* projectInfo is {} without a project, as in Concord's runner run on its own. */
	return json_pack("{s:s, s:s, s:{s:O}, s:{}, s:{s:s, s:s}, s:{s:s, s:s}}", "txId", id, "workDir", p->workdir,
			 "processInfo", "activeProfiles", p->m->active_profiles, "projectInfo", "initiator", "username",
			 "local", "displayName", "local user", "currentUser", "username", "local", "displayName",
			 "local user");
}

static int start(struct process *p)
{
	const char *entry = p->o.entry;
	json_t *sys;
	struct err e;
	int rc;
	if (!entry)
		entry = json_string_value(json_object_get(p->m->configuration, "entryPoint"));
	if (!entry)
		entry = "default";
	p->vm = vm_new(p->m, &p->host.host);
	if (!p->vm) {
		run_log_line(&p->host, FLOW_ERROR, "out of memory");
		return EXIT_FAILED;
	}
	sys = system_vars(p);
	rc = vm_start(p->vm, entry, p->o.args, sys, &e);
	json_decref(sys);
	if (rc < 0)
		run_log_line(&p->host, FLOW_ERROR, e.msg);
	return rc < 0 ? (e.code == ERR_NOT_FOUND ? EXIT_USAGE : EXIT_FAILED) : 0;
}

/* Loads the saved state; a name that is a checkpoint of this process restores it. */
static json_t *saved_state(struct process *p, bool *checkpoint)
{
	struct err e;
	json_t *st = procdir_saved_state(p->workdir, p->o.resume, checkpoint, &e);
	if (!st)
		fprintf(stderr, "accord run: the process in %s does not wait for '%s'\n", p->workdir, p->o.resume);
	return st;
}

static int resume(struct process *p)
{
	bool checkpoint;
	json_t *st = saved_state(p, &checkpoint), *args = p->o.args, *sys;
	struct err e;
	int rc = -1;
	if (!st)
		return -1;
	p->vm = vm_load(p->m, &p->host.host, st, &e);
	json_decref(st);
	if (!p->vm) {
		run_log_line(&p->host, FLOW_ERROR, e.msg);
		return -1;
	}
	/* This run's workDir and processInfo; the process keeps its txId. */
	sys = system_vars(p);
	json_object_del(sys, "txId");
	vm_set_sysvars(p->vm, sys);
	json_decref(sys);
	if (checkpoint) {
		args = json_deep_copy(p->o.args);
		json_object_set_new(args, "resumeEvents", json_pack("[s]", p->o.resume));
	}
	rc = vm_resume(p->vm, p->o.resume, args, &e);
	if (rc < 0)
		run_log_line(&p->host, FLOW_ERROR, e.msg);
	if (args != p->o.args)
		json_decref(args);
	return rc;
}

static int finish(struct process *p, enum vm_status st)
{
	struct err e;
	if (procdir_write_out(p->workdir, p->vm, &p->host.sensitive, json_object_get(p->m->configuration, "out"),
			      p->o.out, st == VM_FAILED, &e) < 0) {
		fprintf(stderr, "accord run: cannot write out.json: %s\n", e.msg);
		if (st == VM_FINISHED) /* as on a server: not FINISHED without its out variables */
			st = VM_FAILED;
	}
	if (st == VM_SUSPENDED) {
		if (procdir_write_suspended(p->workdir, p->vm, stdout, &e) < 0) {
			fprintf(stderr, "accord run: %s\n", e.msg);
			return EXIT_FAILED;
		}
		return EXIT_SUSPENDED;
	}
	if (procdir_drop_state(p->workdir, &e) < 0)
		fprintf(stderr, "accord run: %s\n", e.msg);
	return st == VM_FINISHED ? EXIT_FINISHED : EXIT_FAILED;
}

static bool has_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool any = false;

	if (!d)
		return false;
	while (!any && (de = readdir(d)))
		any = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	closedir(d);
	return any;
}

/* Without --workdir: the temporary working folder is removed unless something in it is
 * worth keeping, which is then named on stderr. */
static void temp_workdir_done(struct process *p, int rc)
{
	char att[PATH_MAX + 32], out[PATH_MAX + 48];
	struct err e;

	if (p->o.workdir || !p->workdir[0])
		return;
	if (str_fmt(att, sizeof att, "%s/_attachments", p->workdir) || str_fmt(out, sizeof out, "%s/out.json", att)) {
		fprintf(stderr, "accord run: working folder kept: %s\n", p->workdir);
		return;
	}
	if (rc == EXIT_SUSPENDED) {
		fprintf(stderr,
			"accord run: the process waits in %s: continue with accord run --workdir %s --resume EVENT\n",
			p->workdir, p->workdir);
	} else if (access(out, F_OK) == 0) {
		fprintf(stderr, "accord run: out variables in %s (working folder kept: %s)\n", out, p->workdir);
	} else if (has_entries(att)) {
		fprintf(stderr, "accord run: the flow left attachments in %s (working folder kept: %s)\n", att,
			p->workdir);
	} else if (path_remove_tree(p->workdir, &e) < 0) {
		fprintf(stderr, "accord run: cannot remove the working folder %s: %s\n", p->workdir, e.msg);
	}
}

/* The task settings from the environment and the flags: into the host (and its mask). */
static int load_task_settings(struct process *p)
{
	char *argv[sizeof p->o.settings / sizeof p->o.settings[0] + 1] = {"run"};
	struct err e = {0};
	bool help;
	json_t *secrets;

	memcpy(argv + 1, p->o.settings, (size_t)p->o.n_settings * sizeof argv[0]);
	if (config_parse(task_settings_opts, task_settings_n_opts, p->o.n_settings + 1, argv, &help, &e) < 0 ||
	    !(p->task_defaults = task_settings_json(&e))) {
		fprintf(stderr, "accord run: %s\n", e.msg);
		return -1;
	}
	p->host.host.task_defaults = p->task_defaults;
	secrets = task_defaults_secrets(p->task_defaults);
	mask_add_list(&p->host.sensitive, secrets);
	json_decref(secrets);
	return 0;
}

static void cleanup(struct process *p)
{
	json_decref(p->task_defaults);
	config_free(task_settings_opts, task_settings_n_opts);
	vm_free(p->vm);
	model_free(p->m);
	json_decref(p->o.args);
	json_decref(p->o.out);
	if (p->events)
		fclose(p->events);
	run_host_cleanup(&p->host);
	run_imports_cleanup(&p->imports);
	buf_cleanup(&p->o.imports.maven_repos);
}

int cli_run_main(int argc, char **argv)
{
	struct process p = {0};
	const char *file = NULL;
	int rc = EXIT_USAGE;
	oom_watch_json(); /* a failed allocation fails the step (flow/vm.c) */
	setvbuf(stdout, NULL, _IOLBF, 0);
	p.o.args = json_object();
	p.o.out = json_array();
	if (parse_args(&p.o, argc, argv) < 0) {
		usage(stderr);
		goto out;
	}
	if (p.o.events && !(p.events = fopen(p.o.events, p.o.resume ? "a" : "w"))) {
		fprintf(stderr, "accord run: --events %s: cannot open it\n", p.o.events);
		goto out;
	}
	if (prepare_workdir(&p, &file) < 0)
		goto out;
	run_host_init(&p.host, p.workdir, p.events, p.o.debug);
	if (load_task_settings(&p) < 0)
		goto out;
	if (load_model(&p, file) < 0)
		goto out;
	p.host.host.debug = p.o.debug || json_is_true(json_object_get(p.m->configuration, "debug"));
	if ((p.host.host.dry_run = p.o.dry_run))
		run_log_line(&p.host, FLOW_INFO, "Dry-run mode: enabled");
	if (p.o.resume && resume(&p) < 0)
		goto out;
	if (!p.o.resume && (rc = start(&p)) != 0)
		goto out;
	rc = finish(&p, vm_run(p.vm));
out:
	temp_workdir_done(&p, rc);
	cleanup(&p);
	return rc;
}
