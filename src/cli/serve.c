/* accord serve: the API server on one data folder. */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "api/process_wait.h"
#include "api/routes.h"
#include "api/secrets.h"
#include "auth/authn.h"
#include "auth/ldap_realm.h"
#include "auth/oidc.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/path.h"
#include "base/str.h"
#include "cli/bootstrap.h"
#include "cli/commands.h"
#include "cli/datalock.h"
#include "cli/task_settings.h"
#include "version.h"
#include "cli/config.h"
#include "http/server.h"
#include "crypto/auditkey.h"
#include "crypto/session.h"
#include "crypto/signing.h"
#include "store/audit_chain.h"
#include "queue/queue.h"
#include "runner/identity.h"
#include "queue/end/retention.h"
#include "repo/repo.h"
#include "runner/confine.h"
#include "runner/script_host.h"
#include "triggers/triggers.h"

/* AddressSanitizer reserves terabytes of address space: no RLIMIT_AS under it. */
#if defined(__SANITIZE_ADDRESS__)
#define RUNNER_MEMORY_DEFAULT "0"
#else
#define RUNNER_MEMORY_DEFAULT "1G"
#endif

struct serve_cfg {
	char *listen, *data, *work, *db, *durability, *metrics, *git_ca_file, *git_known_hosts, *repo_local_dirs, *runner_user;
	char *imports_git_base_url, *maven_repository, *process_signing_key;
	char *docker_command, *docker_network, *docker_run_options;
	unsigned repo_fetch_timeout_s, repo_fetch_max_age_s, repo_fetches_per_user;
	unsigned workers, http_threads, http_io_threads, shutdown_grace_ms, timeout_s, header_s, request_s, stop_grace_ms;
	unsigned test_cron_minute_seconds;
	size_t header_bytes, body_bytes, upload_bytes, connections, per_address, health_min_free_bytes;
	enum log_level log_level;
	bool runner_zygote;
	int64_t retention_keep[RET__COUNT], retention_interval, session_idle, node_heartbeat, node_dead_after;
	unsigned retention_batch, retention_pause_ms;
};

static struct retention *retention;

static struct serve_cfg cfg;

static const struct config_opt opts[] = {
    {"listen", CONFIG_STRING, "127.0.0.1:8001", 0, 0, &cfg.listen,
     "address to listen on: HOST:PORT, [IPV6]:PORT or :PORT (all interfaces); port 0 picks a free one"},
    {"data", CONFIG_STRING, "./data", 0, 0, &cfg.data, "data folder (created 0700 on first start)"},
    {"work-dir", CONFIG_STRING, NULL, 0, 0, &cfg.work,
     "folder for the files of this node's processes: tmp/ (start requests being checked), ready/ and work/ "
     "(working directories); default: the data folder.  A tmpfs here takes the file system's work off every "
     "process (docs/operations.md \"The work folder\")"},
    {"db", CONFIG_STRING, NULL, 0, 0, &cfg.db,
     "database: sqlite:<path> (default sqlite:<data>/accord.db), or PostgreSQL: postgresql://… or libpq's "
     "key=value form"},
    {"workers", CONFIG_UINT, "0", 0, 128, &cfg.workers,
     "processes run at once by the process queue (0: number of CPUs); each has a thread and a database "
     "connection"},
    {"http-threads", CONFIG_UINT, "0", 0, 256, &cfg.http_threads,
     "threads running request handlers that may take long (0: 2 per CPU, at least 4); the event-loop threads read "
     "requests, write answers and answer quick ones themselves"},
    {"http-io-threads", CONFIG_UINT, "0", 0, 64, &cfg.http_io_threads,
     "event-loop threads (libmicrohttpd's, epoll), each serving its share of the connections (0: one per CPU)"},
    {"durability", CONFIG_STRING, "normal", 0, 0, &cfg.durability,
     "normal: WAL + synchronous=NORMAL, a power failure may lose the last commits (never corrupts); full: "
     "synchronous=FULL, every commit is fsynced before it is answered"},
    {"health-min-free-bytes", CONFIG_SIZE, "256M", 0, 1ULL << 50, &cfg.health_min_free_bytes,
     "GET /api/v1/server/health answers 503 when the data folder's file system has less free space"},
    {"metrics", CONFIG_STRING, "loopback", 0, 0, &cfg.metrics,
     "GET /metrics: loopback (clients on this host without credentials, others need an admin's or system "
     "reader's), authenticated (everyone needs them), public, or off (no endpoint, nothing counted)"},
    {"log-level", CONFIG_LOG_LEVEL, "info", 0, 0, &cfg.log_level, "debug, info, warn or error"},
    {"limit-http-header-bytes", CONFIG_SIZE, "32k", 4096, 1 << 20, &cfg.header_bytes,
     "request line + headers per connection (over it: 431)"},
    {"limit-http-body-bytes", CONFIG_SIZE, "1M", 1024, 1ULL << 30, &cfg.body_bytes,
     "request body, except multipart uploads (over it: 413)"},
    {"limit-http-upload-bytes", CONFIG_SIZE, "64M", 1024, 1ULL << 34, &cfg.upload_bytes,
     "multipart request body (over it: 413)"},
    {"limit-http-connections", CONFIG_SIZE, "1024", 1, 65536, &cfg.connections, "concurrent connections"},
    {"limit-http-connections-per-address", CONFIG_SIZE, "256", 1, 65536, &cfg.per_address,
     "concurrent connections from one client address; one more is closed at once (behind a reverse proxy, "
     "every client has the proxy's address: raise it to --limit-http-connections)"},
    {"limit-http-timeout-s", CONFIG_UINT, "60", 1, 3600, &cfg.timeout_s, "idle connection timeout in seconds"},
    {"limit-http-header-s", CONFIG_UINT, "10", 1, 3600, &cfg.header_s,
     "request line and headers deadline in seconds, from the connection's start or the previous answer on it "
     "(so also how long an idle keep-alive connection stays open): past it the connection is closed"},
    {"limit-http-request-s", CONFIG_UINT, "60", 1, 3600, &cfg.request_s,
     "whole-request deadline in seconds: request line, headers and body must arrive within it, or the "
     "connection is closed"},
    {"limit-json-depth", CONFIG_SIZE, "64", 2, 1024, &limits.json_depth, "nesting depth of request JSON"},
    {"limit-multipart-parts", CONFIG_SIZE, "256", 1, 100000, &limits.multipart_parts, "parts in one multipart request"},
    {"limit-store-value-bytes", CONFIG_SIZE, "1000000000", 65536, 1000000000, &limits.store_value_bytes,
     "one text or blob value the database stores (over it: 413)"},
    {"limit-secret-bytes", CONFIG_SIZE, "1M", 1, 1ULL << 30, &limits.secret_bytes, "size of one secret's data"},
    {"secret-key-bits", CONFIG_UINT, "4096", 2048, 16384, &limits.secret_key_bits,
     "size in bits of the RSA key pairs the server generates for key_pair secrets (Concord's "
     "secretStore.keySize); pairs already made keep theirs"},
    {"limit-list-default", CONFIG_SIZE, "100", 1, 100000, &limits.list_default,
     "items per page when a list request gives no limit"},
    {"limit-list-max", CONFIG_SIZE, "1000", 1, 100000, &limits.list_max, "largest limit a list request may ask"},
    {"limit-query-timeout-ms", CONFIG_UINT, "5000", 1, 600000, &limits.query_timeout_ms,
     "run time of one inventory query"},
    {"limit-query-rows", CONFIG_SIZE, "10000", 1, 10000000, &limits.query_rows, "rows one inventory query returns"},
    {"limit-query-concurrency", CONFIG_SIZE, "0", 0, 1024, &limits.query_concurrency,
     "inventory queries running at once in the server (0: half the HTTP workers, at least 1); more are "
     "answered 503"},
    {"limit-query-per-user", CONFIG_SIZE, "2", 1, 1024, &limits.query_per_user,
     "inventory queries one user runs at once; more are answered 503"},
    {"limit-inventory-bulk-items", CONFIG_SIZE, "1000", 1, 1000000, &limits.inventory_bulk_items,
     "items of one bulk item write of an inventory or JSON store (more: 413); its body is bounded by "
     "--limit-http-body-bytes"},
    {"json-store-max-data-size", CONFIG_SIZE, "0", 0, 1ULL << 40, &limits.json_store_bytes,
     "bytes of the items of a JSON store (inventory) that sets no maxDataSize of its own (0: unbounded); a write "
     "past it is answered 413"},
    {"limit-log-followers", CONFIG_SIZE, "0", 0, 65535, &limits.log_followers,
     "live-log followers (GET …/log?follow=true) in the whole server, below --limit-http-connections so that the "
     "other connections stay for other requests (0: half of --limit-http-connections); more are answered 429"},
    {"limit-log-followers-per-user", CONFIG_SIZE, "16", 1, 65535, &limits.log_followers_per_user,
     "live-log followers of one user; more are answered 429"},
    {"limit-log-followers-per-process", CONFIG_SIZE, "64", 1, 65535, &limits.log_followers_per_process,
     "live-log followers of one process; more are answered 429"},
    {"stop-grace-ms", CONFIG_UINT, "5000", 0, 600000, &cfg.stop_grace_ms,
     "stopping a running process: how long after SIGTERM its runner gets SIGKILL"},
    {"limit-process-log-bytes", CONFIG_SIZE, "256M", 1024, 1ULL << 40, &limits.process_log_bytes,
     "log bytes kept per process (over it the process is stopped and FAILED)"},
    {"limit-out-bytes", CONFIG_SIZE, "4M", 1024, 1ULL << 30, &limits.out_bytes,
     "a process's out variables (out.json, meta.out in its status; over it the process is FAILED)"},
    {"limit-wal-bytes", CONFIG_SIZE, "64M", 0, 1ULL << 40, &limits.wal_bytes,
     "SQLite's write-ahead log is checkpointed and truncated at a heartbeat once past this size"},
    {"default-process-timeout", CONFIG_UINT, "86400", 0, 31536000, &limits.process_timeout_s,
     "seconds a process may stay RUNNING when it sets no processTimeout of its own (0: no limit)"},
    {"limit-process-children", CONFIG_SIZE, "1000", 1, 1000000, &limits.process_children,
     "child processes one process may start (concord task start/fork); beyond, the call fails"},
    {"limit-process-depth", CONFIG_SIZE, "16", 1, 1000, &limits.process_depth,
     "generations of child processes below a process (a child's child is 2); deeper starts fail"},
    {"limit-running-per-user", CONFIG_SIZE, "0", 0, 1000000, &limits.running_per_user,
     "processes one user may have STARTING or RUNNING at once on all nodes (child processes aside); more stay "
     "ENQUEUED until one ends (0: no limit)"},
    {"limit-running-per-project", CONFIG_SIZE, "0", 0, 1000000, &limits.running_per_project,
     "processes of one project STARTING or RUNNING at once on all nodes (child processes aside); more stay "
     "ENQUEUED until one ends (0: no limit)"},
    {"limit-project-storage-bytes", CONFIG_SIZE, "0", 0, 1ULL << 50, &limits.project_storage_bytes,
     "log and attachment bytes the kept processes of one project may store; a process that would go beyond is "
     "stopped and FAILED (0: no limit)"},
    {"runner-user", CONFIG_STRING, NULL, 0, 0, &cfg.runner_user,
     "the user runners run as when the server starts as root (default nobody; never root); a server that is "
     "not root runs them as itself"},
    {"docker-command", CONFIG_STRING, "docker", 0, 0, &cfg.docker_command,
     "the container engine's command the server runs for the docker task, split at blanks (e.g. \"podman --runtime "
     "runc --cgroup-manager=cgroupfs\"); containers are started by the server, never by runners"},
    {"docker-network", CONFIG_STRING, NULL, 0, 0, &cfg.docker_network,
     "the network of the docker task's containers (--network of `run`, e.g. none); default: the engine's"},
    {"docker-run-options", CONFIG_STRING, NULL, 0, 0, &cfg.docker_run_options,
     "more options of the engine's `run` for every container, split at blanks (e.g. \"--ulimit nofile=1024:1024 "
     "--memory 1g\")"},
    {"process-signing-key", CONFIG_STRING, NULL, 0, 0, &cfg.process_signing_key,
     "RSA private key (PEM) that signs each process's initiator and currentUser username (usernameSignature, "
     "SHA256withRSA in Base64: Concord's process.signingKeyPath); none: no signature"},
    {"runner-zygote", CONFIG_BOOL, "true", 0, 0, &cfg.runner_zygote,
     "fork runners from a pre-started `accord runner --zygote` instead of exec'ing the binary per process (false: "
     "exec each time)"},
    {"limit-runner-memory-bytes", CONFIG_SIZE, RUNNER_MEMORY_DEFAULT, 0, 1ULL << 44, &runner_limits.memory_bytes,
     "address space of one runner (RLIMIT_AS; 0: none)"},
    {"limit-runner-file-bytes", CONFIG_SIZE, "1G", 0, 1ULL << 44, &runner_limits.file_bytes,
     "largest file a runner may write (RLIMIT_FSIZE; 0: none)"},
    {"limit-runner-open-files", CONFIG_SIZE, "256", 16, 65536, &runner_limits.open_files,
     "open files of one runner (RLIMIT_NOFILE)"},
    {"limit-runner-cpu-seconds", CONFIG_SIZE, "0", 0, 1ULL << 32, &runner_limits.cpu_seconds,
     "CPU seconds of one runner (RLIMIT_CPU; 0: none — use processTimeout)"},
    {"limit-archive-entries", CONFIG_SIZE, "10000", 1, 10000000, &limits.archive_entries,
     "entries of one uploaded payload archive (over it: 413)"},
    {"limit-archive-bytes", CONFIG_SIZE, "512M", 1024, 1ULL << 40, &limits.archive_bytes,
     "unpacked bytes of one uploaded payload archive (over it: 413)"},
    {"limit-archive-ratio", CONFIG_UINT, "100", 1, 1000000, &limits.archive_ratio,
     "unpacked size / packed size of one uploaded payload archive (over it: 413)"},
    {"retention-processes", CONFIG_DURATION, "0", 0, 1ULL << 40, &cfg.retention_keep[RET_PROCESSES],
     "finished processes are deleted with everything of theirs this long after their last change (e.g. 90d; 0: "
     "kept for ever)"},
    {"retention-logs", CONFIG_DURATION, "0", 0, 1ULL << 40, &cfg.retention_keep[RET_LOGS],
     "the logs of finished processes are deleted after this long (0: kept as long as the process)"},
    {"retention-events", CONFIG_DURATION, "0", 0, 1ULL << 40, &cfg.retention_keep[RET_EVENTS],
     "the events and status history of finished processes are deleted after this long (0: kept)"},
    {"retention-attachments", CONFIG_DURATION, "0", 0, 1ULL << 40, &cfg.retention_keep[RET_ATTACHMENTS],
     "the attachments (out.json included) of finished processes are deleted after this long (0: kept)"},
    {"retention-states", CONFIG_DURATION, "0", 0, 1ULL << 40, &cfg.retention_keep[RET_STATES],
     "the checkpoints of finished processes are deleted after this long (0: kept)"},
    {"retention-audit", CONFIG_DURATION, "0", 0, 1ULL << 40, &cfg.retention_keep[RET_AUDIT],
     "audit log entries (GET /api/v1/audit) are deleted this long after they were written (e.g. 365d; 0: kept for "
     "ever)"},
    {"retention-interval", CONFIG_DURATION, "10m", 1, 1ULL << 32, &cfg.retention_interval,
     "time between two clean-up passes"},
    {"retention-batch", CONFIG_UINT, "100", 1, 1000, &cfg.retention_batch,
     "processes cleaned per database transaction"},
    {"retention-pause-ms", CONFIG_UINT, "20", 0, 60000, &cfg.retention_pause_ms,
     "pause between two clean-up transactions (leaves the database to the API and the queue)"},
    {"repo-fetch-timeout", CONFIG_UINT, "60", 1, 86400, &cfg.repo_fetch_timeout_s,
     "seconds a git fetch of a repository may take; then it is killed and the request fails with 503"},
    {"repo-fetch-max-age", CONFIG_UINT, "30", 0, 86400, &cfg.repo_fetch_max_age_s,
     "a process start from a repository's branch fetches first when the node's clone is older than this many "
     "seconds (0: every start fetches)"},
    {"repo-fetches-per-user", CONFIG_UINT, "2", 0, 1000, &cfg.repo_fetches_per_user,
     "repository refreshes, validates, creates and updates one user may have fetching at once on a node; one more "
     "is answered 429 (0: no limit)"},
    {"git-ca-file", CONFIG_STRING, NULL, 0, 0, &cfg.git_ca_file,
     "PEM file of CA certificates trusted for https repositories, besides the system's"},
    {"repo-local-dirs", CONFIG_STRING, NULL, 0, 0, &cfg.repo_local_dirs,
     "DIR[:DIR...]: the folders whose git repositories may be used by file:// URLs and paths (default: none, "
     "local repositories are refused: any org member could otherwise read any repository on this host)"},
    {"git-known-hosts", CONFIG_STRING, NULL, 0, 0, &cfg.git_known_hosts,
     "known_hosts file: ssh repositories must present a host key listed in it (default: any host key is "
     "accepted, as in Concord)"},
    {"imports-git-base-url", CONFIG_STRING, NULL, 0, 0, &cfg.imports_git_base_url,
     "base URL of `imports: - git: {name: org/repo}` (the import's URL is BASE/org/repo)"},
    {"maven-repository", CONFIG_LIST, NULL, 0, 0, &cfg.maven_repository,
     "Maven repository (http(s) URL) that `imports: - mvn:` artifacts are fetched from; repeatable, tried in "
     "order (environment: comma-separated)"},
    {"limit-repo-files", CONFIG_SIZE, "10000", 1, 10000000, &limits.repo_files,
     "files and folders of one repository checkout (a process start from a repository)"},
    {"limit-repo-bytes", CONFIG_SIZE, "512M", 1024, 1ULL << 40, &limits.repo_bytes,
     "bytes of the files of one repository checkout (a process start from a repository)"},
    {"node-heartbeat", CONFIG_DURATION, "5s", 1, 3600, &cfg.node_heartbeat,
     "how often this node records that it is alive (nodes table); also how often it looks for nodes that "
     "stopped"},
    {"node-dead-after", CONFIG_DURATION, "30s", 2, 86400, &cfg.node_dead_after,
     "a node without a heartbeat for this long is taken for dead: another node makes its running processes "
     "FAILED (at least twice --node-heartbeat; see docs/operations.md \"Nodes\")"},
    {"session-idle", CONFIG_DURATION, "30m", 1, 1ULL << 32, &cfg.session_idle,
     "a console session (the web console's login cookie) ends after this long without a request (e.g. 30m, 8h)"},
    {"shutdown-grace-ms", CONFIG_UINT, "10000", 0, 600000, &cfg.shutdown_grace_ms,
     "on SIGTERM/SIGINT, how long requests in flight may take to finish"},
    {"test-cron-minute-seconds", CONFIG_UINT, "0", 0, 60, &cfg.test_cron_minute_seconds,
     "TESTS ONLY: the cron trigger scheduler's clock runs so that one minute lasts this many seconds (0: real "
     "time)"},
    TASK_SETTINGS_OPTS,
    LDAP_REALM_OPTS,
    OIDC_OPTS,
};
/* --limit-archive-bytes, --limit-repo-bytes and --limit-out-bytes are CONFIG_SIZEs stored into uint64_ts. */
_Static_assert(sizeof(size_t) == sizeof(uint64_t), "limits.archive_bytes is set as a size_t");
#define N_OPTS (sizeof opts / sizeof opts[0])

/* Live-log followers hold their connections: some must stay for every other request. */
static int http_limits_check(struct err *e)
{
	if (limits.log_followers == 0)
		limits.log_followers = cfg.connections / 2;
	if (limits.log_followers >= cfg.connections)
		return err_set(e, ERR_INVALID,
			       "--limit-log-followers (%zu) must be below --limit-http-connections (%zu): the "
			       "connections above it stay for other requests",
			       limits.log_followers, cfg.connections);
	return 0;
}

/* what: "data folder" or "work folder". */
static int prepare_dir(const char *dir, const char *what, struct err *e)
{
	struct stat st;

	if (confine_check_out_of_reach(dir, what, e) || path_mkdirs(dir, 0700, e))
		return -1;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return err_set(e, ERR_INVALID, "%s %s is not a directory", what, dir);
	if (access(dir, W_OK) != 0)
		return err_set(e, ERR_INVALID, "%s %s is not writable: %s", what, dir, strerror(errno));
	if ((st.st_mode & 066) != 0) /* 0711: runners of their own user pass through */
		LOG_W("%s %s is accessible by other users (mode %03o); 0700 is recommended", what, dir,
		      st.st_mode & 0777);
	return 0;
}

/* *dir made absolute (a new string in its place): a relative --data such as the default
 * ./data would otherwise reach the runner zygote as a relative working directory, which it
 * refuses (every process then FAILED), and the server's folders would move with its cwd. */
static int absolute(char **dir, const char *what, struct err *e)
{
	char cwd[4096], *abs = NULL;

	if (!*dir || !**dir || (*dir)[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof cwd))
		return err_set(e, ERR_INTERNAL, "cannot resolve the %s %s: getcwd: %s", what, *dir, strerror(errno));
	if (asprintf(&abs, "%s/%s", cwd, strncmp(*dir, "./", 2) == 0 ? *dir + 2 : *dir) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	free(*dir);
	*dir = abs;
	return 0;
}

/* --work-dir, or the data folder. */
static const char *work_dir(void)
{
	return cfg.work && *cfg.work ? cfg.work : cfg.data;
}

static unsigned ncpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* Until SIGTERM or SIGINT: SIGHUP reopens the log file (docs/operations.md "Logs"). */
static int wait_for_signal(void)
{
	sigset_t set;
	int sig = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		if (sigwait(&set, &sig) != 0 || sig != SIGHUP)
			return sig;
		switch (log_reopen()) {
		case 1:
			LOG_I("received SIGHUP: log file reopened; other settings take a restart");
			break;
		case 0:
			LOG_I("received SIGHUP: the log is no file to reopen; settings take a restart");
			break;
		default:
			LOG_E("received SIGHUP: cannot reopen the log file: %s", strerror(errno));
		}
	}
}

static char node_id[UUID_STR_LEN];
/* The smtp and slack tasks' server-side defaults, handed to every runner (task_settings.h). */
static json_t *task_defaults;
static char *signing_pem; /* --process-signing-key's PEM (crypto/signing.h), or NULL */

/* "nobody (uid 65534)" for the start-up log. */
static const char *runner_user_name(uid_t uid, char *out, size_t cap)
{
	struct passwd *pw = getpwuid(uid);

	str_fmt_cut(out, cap, "%s (uid %u)", pw ? pw->pw_name : "?", (unsigned)uid);
	return out;
}

/* This server's own API as its server tasks reach it (queue_cfg.self_url): the listen
 * address, with a wildcard host replaced by the loopback one. */
static char self_url[320];

static void set_self_url(const struct http_server *srv)
{
	const char *colon = strrchr(cfg.listen, ':');
	int host_len = colon ? (int)(colon - cfg.listen) : 0;
	const char *host = cfg.listen;

	if (host_len == 0 || (host_len == 7 && strncmp(host, "0.0.0.0", 7) == 0)) {
		host = "127.0.0.1";
		host_len = 9;
	} else if (host_len == 4 && strncmp(host, "[::]", 4) == 0) {
		host = "[::1]";
		host_len = 5;
	}
	str_fmt_cut(self_url, sizeof self_url, "http://%.*s:%u", host_len, host, (unsigned)http_server_port(srv));
}

/* The process queue: this binary is the runner; a node id per start (SQLite: one node). */
static int start_queue(struct app *app, struct err *e)
{
	struct queue_cfg qc = {0};
	char confinement[256], engines[512], user[96];

	if (access("/proc/self/exe", X_OK) != 0)
		return err_set(e, ERR_INTERNAL, "cannot find the accord binary (/proc/self/exe): %s", strerror(errno));
	uuid_v4(node_id);
	session_key_derive(app->secrets_key, app->session_key);
	app->node_id = node_id;
	qc.store = app->store;
	qc.work_dir = work_dir();
	/* The running binary itself, even if a newer one was installed over it meanwhile. */
	qc.runner_exe = "/proc/self/exe";
	qc.node_id = node_id;
	qc.workers = cfg.workers;
	qc.stop_grace_ms = cfg.stop_grace_ms;
	qc.session_key = app->session_key;
	qc.master_key = app->secrets_key;
	qc.runner_zygote = cfg.runner_zygote;
	if (runner_identity_resolve(cfg.runner_user, &qc.runner_drop, &qc.runner_uid, &qc.runner_gid, e))
		return -1;
	app->runner_uid = qc.runner_drop ? qc.runner_uid : geteuid();
	if (qc.runner_drop && runner_identity_check_reach(qc.work_dir, qc.runner_uid, qc.runner_gid, e))
		return -1;
	if (cfg.node_dead_after < 2 * cfg.node_heartbeat)
		return err_set(e, ERR_INVALID, "--node-dead-after (%llds) must be at least twice --node-heartbeat (%llds)",
			       (long long)cfg.node_dead_after, (long long)cfg.node_heartbeat);
	qc.node_heartbeat_ms = (unsigned)cfg.node_heartbeat * 1000;
	qc.node_dead_after_ms = (unsigned)cfg.node_dead_after * 1000;
	qc.repos = app->repos;
	qc.task_defaults = task_defaults;
	qc.docker_command = cfg.docker_command;
	qc.docker_network = cfg.docker_network;
	qc.docker_run_options = cfg.docker_run_options;
	qc.self_url = self_url;
	qc.signing_key = signing_pem;
	app->queue = queue_start(&qc, e);
	if (!app->queue)
		return -1;
	confine_probe(confinement, sizeof confinement);
	LOG_I("processes: %u workers, runners %s, %s, as %s", cfg.workers,
	      cfg.runner_zygote ? "forked by the runner zygote" : "exec'd (--runner-zygote=false)", confinement,
	      qc.runner_drop ? runner_user_name(qc.runner_uid, user, sizeof user) : "the server's user");
	script_hosts_describe(engines, sizeof engines);
	LOG_I("script engines: %s", engines);
	return 0;
}

static void log_listening(const struct http_server *srv, unsigned threads, unsigned io_threads)
{
	char fields[512] = "";

	log_kv(fields, sizeof fields, "listen", cfg.listen);
	log_kv_int(fields, sizeof fields, "port", http_server_port(srv));
	log_kv(fields, sizeof fields, "data", cfg.data);
	if (work_dir() != cfg.data)
		log_kv(fields, sizeof fields, "work", work_dir());
	log_kv_int(fields, sizeof fields, "http_threads", threads);
	log_kv_int(fields, sizeof fields, "http_io_threads", io_threads);
	log_kv_int(fields, sizeof fields, "workers", cfg.workers);
	log_kv(fields, sizeof fields, "durability", cfg.durability);
	log_kv(fields, sizeof fields, "version", ACCORD_VERSION);
	log_line(LOG_INFO, "listening", fields);
}

/* Git clones of repositories, in <data>/repos; the master key opens their secrets. */
static int start_repos(struct app *app, struct err *e)
{
	struct repos_cfg rc = {
	    .data_dir = cfg.data,
	    .exe = "/proc/self/exe",
	    .master_key = app->secrets_key,
	    .fetch_timeout_s = cfg.repo_fetch_timeout_s,
	    .fetch_max_age_s = cfg.repo_fetch_max_age_s,
	    .fetches_per_user = cfg.repo_fetches_per_user,
	    .ca_file = cfg.git_ca_file && *cfg.git_ca_file ? cfg.git_ca_file : NULL,
	    .known_hosts = cfg.git_known_hosts && *cfg.git_known_hosts ? cfg.git_known_hosts : NULL,
	    .imports_git_base_url = cfg.imports_git_base_url,
	    .maven_repos = cfg.maven_repository,
	    .local_dirs = cfg.repo_local_dirs,
	};

	app->repos = repos_open(&rc, e);
	return app->repos ? 0 : -1;
}

/* ACCORD_GITHUB_SECRET, the GitHub webhook's key (docs/api.md "GitHub events"): taken out
 * of the environment, so that nothing the server starts inherits it. */
static int github_secret(struct app *app, struct err *e)
{
	static char *secret;
	const char *v = getenv("ACCORD_GITHUB_SECRET");

	if (!v || !*v)
		return 0;
	if (strlen(v) < 16)
		return err_set(e, ERR_INVALID, "ACCORD_GITHUB_SECRET: at least 16 characters (GitHub's webhook secret)");
	if (!secret && !(secret = strdup(v)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	unsetenv("ACCORD_GITHUB_SECRET");
	app->github_secret = secret;
	LOG_I("github events: POST /events/github/webhook accepts deliveries signed with ACCORD_GITHUB_SECRET");
	return 0;
}

/* Cron triggers and generic events, after the queue (which they start processes on). */
static int start_triggers(struct app *app, struct err *e)
{
	struct triggers_cfg tc = {
	    .store = app->store,
	    .queue = app->queue,
	    .repos = app->repos,
	    .work_dir = work_dir(),
	    .session_key = app->session_key,
	    .master_key = app->secrets_key,
	    .test_minute_seconds = cfg.test_cron_minute_seconds,
	};

	app->triggers = triggers_start(&tc, e);
	return app->triggers ? github_secret(app, e) : -1;
}

/* Says where admin's generated key is, as long as the file is there (`make run`). */
static void tell_admin_key(void)
{
	char path[4200];

	if (str_fmt(path, sizeof path, "%s/initial-admin-api-key", cfg.data) == 0 && access(path, R_OK) == 0)
		LOG_I("ready: admin's API key is in %s (read it, then delete the file)", path);
}

static int start_retention(struct app *app, struct err *e)
{
	struct retention_cfg rc = {
	    .store = app->store,
	    .interval_s = (unsigned)cfg.retention_interval,
	    .batch = cfg.retention_batch,
	    .pause_ms = cfg.retention_pause_ms,
	};

	memcpy(rc.keep_s, cfg.retention_keep, sizeof rc.keep_s);
	return retention_start(&rc, &retention, e);
}

/* The audit log's chain, keyed from the master key (docs/security.md "The audit chain"):
 * the keys live in locked memory for the server's life. */
static struct audit_keys *audit_keys;

static int start_audit_chain(struct app *app, struct err *e)
{
	struct store_conn *conn = store_conn(app->store, e);

	if (!conn)
		return -1;
	if (!(audit_keys = sodium_malloc(sizeof *audit_keys)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	auditkey_derive(app->secrets_key, audit_keys);
	sodium_mprotect_readonly(audit_keys);
	return store_audit_chain_open(conn, audit_keys, e);
}

/* Everything that touches the data folder, after the address is bound: until it is done
 * (app->ready) every request is answered 503 "starting". */
static int start_node(struct app *app, int lock[2], struct err *e)
{
	char db_url[4200];

	if (prepare_dir(cfg.data, "data folder", e))
		return -1;
	lock[0] = datalock_take(cfg.data, ": another server runs on it; stop it or use another --data", e);
	if (lock[0] < 0)
		return -1;
	/* Start-up empties its work/ and ready/: a folder of one server only. */
	if (work_dir() != cfg.data &&
	    (prepare_dir(work_dir(), "work folder", e) ||
	     (lock[1] = datalock_take(work_dir(), ": another server uses it; give each server its own --work-dir", e)) <
		 0))
		return -1;
	if (cfg.db && *cfg.db ? str_fmt(db_url, sizeof db_url, "%s", cfg.db)
			      : str_fmt(db_url, sizeof db_url, "sqlite:%s/accord.db", cfg.data))
		return err_set(e, ERR_INVALID, "--db or --data too long (limit %zu bytes)", sizeof db_url - 1);
	app->store = store_open(db_url, e);
	if (!app->store || bootstrap_run(app->store, cfg.data, e) || api_secrets_init(app, e) ||
	    start_audit_chain(app, e) || start_repos(app, e) ||
	    start_queue(app, e) || start_triggers(app, e))
		return -1;
	return start_retention(app, e);
}

/* glibc gives each thread that allocates its own arena (up to 8 per CPU), and memory freed
 * in one stays there: after heavy requests on many workers the server kept its peak for
 * ever (issue 15).  With two arenas, the malloc_trim the HTTP layer does after heavy
 * requests gives nearly all of it back (bench/rss/after_queries: 95 MB kept before, 11 MB
 * after).  That explicit trim is also why the automatic one can wait: glibc shrinks the
 * heap (brk, madvise) whenever 128 KB lie free at its top, and each shrink is a TLB
 * shootdown across the server's threads — a tenth of the process queue's CPU
 * (bench/RESULTS.md) — so it waits for 32 MB.  An operator's own MALLOC_ARENA_MAX or
 * GLIBC_TUNABLES wins. */
static void tune_malloc(void)
{
	if (!getenv("MALLOC_ARENA_MAX") && !getenv("GLIBC_TUNABLES"))
		mallopt(M_ARENA_MAX, 2);
	if (!getenv("MALLOC_TRIM_THRESHOLD_") && !getenv("GLIBC_TUNABLES"))
		mallopt(M_TRIM_THRESHOLD, 32 << 20);
}

static int metrics_setting(struct app *app, struct err *e)
{
	for (int i = 0; i < METRICS__COUNT; i++)
		if (strcmp(cfg.metrics, api_metrics_access_names[i]) == 0) {
			app->metrics_access = (enum metrics_access)i;
			return 0;
		}
	return err_set(e, ERR_INVALID, "--metrics: '%s' is not one of loopback, authenticated, public, off",
		       cfg.metrics);
}

static int run(struct err *e)
{
	struct app app = {0};
	struct http_server *srv = NULL;
	struct http_server_cfg hc;
	int rc = -1, sig, lock[2] = {-1, -1};

	tune_malloc();
	if (absolute(&cfg.data, "data folder", e) || absolute(&cfg.work, "work folder", e))
		return -1;
	app.data_dir = cfg.data;
	app.work_dir = work_dir();
	app.health_min_free_bytes = cfg.health_min_free_bytes;
	app.session_idle_ms = cfg.session_idle * 1000;
	atomic_init(&app.ready, false);
	authn_init();
	app.router = router_new();
	if (!app.router || api_routes_build(app.router, e) || metrics_setting(&app, e) ||
	    api_routes_metrics_init(app.metrics_access != METRICS_OFF, e))
		goto out;
	hc = (struct http_server_cfg){
	    .listen = cfg.listen,
	    /* one per CPU: a single event loop held quick requests to one core (bench/api) */
	    .io_threads = cfg.http_io_threads ? cfg.http_io_threads : ncpu(),
	    .threads = cfg.http_threads ? cfg.http_threads : (ncpu() * 2 < 4 ? 4 : ncpu() * 2),
	    .max_connections = cfg.connections,
	    /* git fetches wait on remotes: as many as the workers, but never on theirs */
	    .apart_threads = cfg.http_threads ? cfg.http_threads : (ncpu() * 2 < 4 ? 4 : ncpu() * 2),
	    .per_address_connections = cfg.per_address,
	    .timeout_s = cfg.timeout_s,
	    .header_s = cfg.header_s,
	    .request_s = cfg.request_s,
	    .header_bytes = cfg.header_bytes,
	    .body_bytes = cfg.body_bytes,
	    .upload_bytes = cfg.upload_bytes,
	};
	if (limits.query_concurrency == 0)
		limits.query_concurrency = hc.threads / 2 ? hc.threads / 2 : 1;
	limits.http_body_bytes = cfg.body_bytes;
	limits.http_upload_bytes = cfg.upload_bytes;
	/* Bind first: a port in use is reported before the data folder is touched. */
	if (http_listen_probe(cfg.listen, e))
		goto out;
	srv = http_server_start(&hc, api_dispatch, &app, e);
	if (srv)
		set_self_url(srv);
	if (!srv || start_node(&app, lock, e))
		goto out;
	/* The start's connection (migrations, recovery) serves requests from now on. */
	store_conn_release(app.store);
	atomic_store(&app.ready, true);
	log_listening(srv, hc.threads, hc.io_threads);
	tell_admin_key();
	sig = wait_for_signal();
	LOG_I("received %s: stopping (finishing requests in flight)", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	rc = 0;
out:
	api_process_waits_end();
	http_server_stop(srv, rc == 0 ? cfg.shutdown_grace_ms : 0);
	triggers_stop(app.triggers);
	app.triggers = NULL;
	retention_stop(retention);
	retention = NULL;
	queue_shutdown(app.queue, cfg.shutdown_grace_ms);
	app.queue = NULL;
	repos_close(app.repos);
	app.repos = NULL;
	sodium_memzero(app.session_key, sizeof app.session_key);
	router_free(app.router);
	app.router = NULL;
	store_close(app.store);
	api_secrets_cleanup(&app);
	store_audit_chain_use(NULL);
	if (audit_keys)
		sodium_free(audit_keys);
	authn_cleanup();
	datalock_release(lock[1]);
	datalock_release(lock[0]);
	if (rc == 0)
		LOG_I("stopped");
	return rc;
}

int cli_serve_main(int argc, char **argv)
{
	struct err e = {0};
	bool help;
	sigset_t set;
	int rc;

	/* Block the stop signals (and SIGHUP, whose default would kill the server) before any
	 * thread starts so that only sigwait sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	umask(077); /* the data folder holds keys and secrets: nothing in it is for others */
	log_remember_file();

	if (config_parse(opts, N_OPTS, argc, argv, &help, &e)) {
		fprintf(stderr, "accord serve: %s\n", e.msg);
		config_free(opts, N_OPTS);
		return 2;
	}
	if (help) {
		char engines[512];
		config_print_help("usage: accord serve [options]\n\nRuns the API server on one data folder.", opts,
				  N_OPTS);
		script_hosts_describe(engines, sizeof engines);
		printf("\nScript engines of `script:` steps on this node: %s\n", engines);
		config_free(opts, N_OPTS);
		return 0;
	}
	if (http_listen_check(cfg.listen, &e)) {
		fprintf(stderr, "accord serve: %s\n", e.msg);
		config_free(opts, N_OPTS);
		return 2;
	}
	if (strcmp(cfg.durability, "normal") != 0 && strcmp(cfg.durability, "full") != 0) {
		fprintf(stderr, "accord serve: --durability: '%s' is neither 'normal' nor 'full'\n", cfg.durability);
		config_free(opts, N_OPTS);
		return 2;
	}
	if (http_limits_check(&e) || ldap_realm_init(&e) || oidc_init(&e) || !(task_defaults = task_settings_json(&e)) ||
	    (cfg.process_signing_key && *cfg.process_signing_key &&
	     !(signing_pem = signing_key_load(cfg.process_signing_key, &e)))) {
		fprintf(stderr, "accord serve: %s\n", e.msg);
		config_free(opts, N_OPTS);
		return 2;
	}
	store_durability_full = strcmp(cfg.durability, "full") == 0;
	log_set_level(cfg.log_level);
	if (cfg.workers == 0)
		cfg.workers = ncpu();
	rc = run(&e);
	if (rc)
		fprintf(stderr, "accord serve: %s\n", e.msg);
	ldap_realm_cleanup();
	oidc_cleanup();
	config_free(opts, N_OPTS);
	json_decref(task_defaults);
	signing_key_free(signing_pem);
	return rc ? 1 : 0;
}
