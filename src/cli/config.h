#ifndef ACCORD_CLI_CONFIG_H
#define ACCORD_CLI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Table-driven configuration: every setting has one name used three ways, as a flag
 * (--listen), an environment variable (ACCORD_LISTEN) and a default.  Precedence:
 * flags > environment > defaults.  Values are validated when parsed; a bad value or
 * an unknown flag is an error naming it. */

/* CONFIG_LIST: a char * target like CONFIG_STRING, but each repetition of the flag adds a
 * value (joined with ','); the environment gives the list comma-separated. */
enum config_type { CONFIG_STRING, CONFIG_UINT, CONFIG_SIZE, CONFIG_LOG_LEVEL, CONFIG_BOOL, CONFIG_DURATION, CONFIG_LIST };

struct config_opt {
	const char *name; /* flag name without "--"; env is ACCORD_ + upper-cased with '-' → '_' */
	enum config_type type;
	const char *defval;	     /* textual default; NULL means empty */
	unsigned long long min, max; /* for UINT and SIZE */
	void *target; /* char ** (new string, caller frees), unsigned *, size_t *, enum log_level *, bool *
		      (true/false, yes/no, on/off, 1/0), int64_t * seconds (CONFIG_DURATION: 90, 90m, 30d,
		      P30D; min/max in seconds) */
	const char *help;
};

/* Applies defaults, then the environment, then argv (argv[0] is the subcommand).
 * Recognises --help / -h: sets *help and returns 0.  Unknown flags, missing values and
 * bad values fail with ERR_INVALID. */
int config_parse(const struct config_opt *opts, size_t n_opts, int argc, char **argv, bool *help, struct err *e) WUR;

/* Prints the option table (flag, env, default, help) to stdout. */
void config_print_help(const char *usage, const struct config_opt *opts, size_t n_opts);

/* Frees the strings config_parse stored in CONFIG_STRING targets. */
void config_free(const struct config_opt *opts, size_t n_opts);

#endif
