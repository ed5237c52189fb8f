#ifndef ACCORD_CLI_COMMANDS_H
#define ACCORD_CLI_COMMANDS_H

/* Entry points of the subcommands.  Each takes argv with argv[0] = the subcommand name
 * and returns the process exit status (0 ok, 2 usage error; see each command). */
int cli_serve_main(int argc, char **argv);
int cli_version_main(int argc, char **argv);
/* accord run: 0 finished, 1 failed, 3 suspended, 2 usage error or invalid definition. */
int cli_run_main(int argc, char **argv);
/* accord backup / accord restore: 0 done, 1 failed, 2 usage error. */
int cli_backup_main(int argc, char **argv);
int cli_restore_main(int argc, char **argv);
/* accord audit verify: 0 the chain verifies, 1 it does not or cannot be read, 2 usage error. */
int cli_audit_main(int argc, char **argv);
/* accord migrate: 0 up to date, 1 failed, 2 usage error. */
int cli_migrate_main(int argc, char **argv);

#endif
