/* accord: subcommand dispatch only. */
#include <stdio.h>
#include <string.h>

#include "base/limits.h"
#include "base/rand.h"
#include "cli/commands.h"
#include "repo/repo.h"
#include "runner/runner.h"

struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"serve", cli_serve_main, "run the API server on a data folder"},
	{"run", cli_run_main, "run a flow locally (no server)"},
	{"backup", cli_backup_main, "copy the database of a data folder, also while the server runs"},
	{"restore", cli_restore_main, "put a backup in place of a stopped server's database"},
	{"audit", cli_audit_main, "verify the audit log's chain (accord audit verify)"},
	{"migrate", cli_migrate_main, "bring a database's schema up to date and exit"},
	{"version", cli_version_main, "print version and build information"},
	{"runner", cli_runner_main, "internal: runs one process for `accord serve`"},
	{"git-fetch", repo_fetch_child_main, NULL}, /* internal: fetches a repository for `accord serve` */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: accord <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (commands[i].help) /* hidden otherwise */
			fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'accord <command> --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0)
		return cli_version_main(1, argv + 1);
	rand_init();
	limits_defaults();
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].main(argc - 1, argv + 1);
	fprintf(stderr, "accord: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
