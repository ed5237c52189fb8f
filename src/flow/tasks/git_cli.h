#ifndef ACCORD_FLOW_TASKS_GIT_CLI_H
#define ACCORD_FLOW_TASKS_GIT_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "flow/tasks/task.h"

/* Debian's git run for the `git` task through the external-tool layer (flow/tool.h), with
 * the task's credentials.  Every command gets its own configuration file (GIT_CONFIG_GLOBAL;
 * no system or user configuration is read): the local file and ext transports refused,
 * prompts off, the committer identity, and the credentials as secret files the layer writes
 * 0600 into the run's folder (GIT_RUN_DIR) and removes when the command ends:
 * a private key used through core.sshCommand, or user and password (or token) in a
 * `credential.helper store` file.  No credential is ever on a command line or in the log:
 * the password and token are masked from the moment they are read. */

#define GIT_RUN_DIR ".git_task" /* relative to the working directory */

struct git_cli {
	struct task_ctx *c;
	const char *workdir;   /* absolute working directory, BORROWED */
	char run_abs[4200];    /* absolute GIT_RUN_DIR */
	char *key;	       /* private key (PEM), NULL: none */
	size_t key_len;
	char *user, *password; /* basic auth (token: user = token, empty password), NULL: none */
	char *name, *email;    /* committer identity */
	struct buf out;	       /* the output of the last command (capped) */
	bool quiet;	       /* the last command's output is not logged */
	char reason[512];      /* git_cli_reason's answer */
};

/* Sets up g for the step's input in (BORROWED): the private key of privateKey {org,
 * secretName, password} (exported as the process's initiator by the crypto server task) or
 * auth.basic {token | username, password}.  Fails with e set on bad input or an unreadable
 * secret; git_cli_cleanup is needed either way. */
int git_cli_init(struct git_cli *g, struct task_ctx *c, json_t *in, struct err *e) WUR;
void git_cli_cleanup(struct git_cli *g);

/* Sets the committer identity (copied); NULL keeps the default "Accord <accord@localhost>". */
int git_cli_identity(struct git_cli *g, const char *name, const char *email, struct err *e) WUR;

/* Runs git with args (NULL-terminated, without "git") in the working directory; its
 * output is logged line by line unless quiet, and kept in g->out either way.  0 with *code
 * the exit status once it ended; < 0 with e set when it could not run. */
int git_cli_run(struct git_cli *g, bool quiet, int *code, struct err *e, const char *const *args) WUR;

/* The line of the last command's output that says why it failed ("fatal: …"), or its last
 * line; BORROWED until the next command.  "" when there was none. */
const char *git_cli_reason(struct git_cli *g);

/* Whether a repository URL names a transport the task may use (http, https, ssh, git,
 * user@host:path); local paths and file:// are refused (the flow's confinement). */
bool git_cli_url_ok(const char *url);

#endif
