#include "cli/config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/duration.h"
#include "base/log.h"
#include "base/str.h"

static void env_name(const char *name, char *out, size_t cap)
{
	size_t i = 0;

	i = (size_t)snprintf(out, cap, "ACCORD_");
	for (const char *p = name; *p && i + 1 < cap; p++)
		out[i++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
	out[i] = '\0';
}

/* Leading decimal digits of v as a number (at most 2^62): the digits' end in *end. */
static int parse_digits(const char *v, unsigned long long *out, const char **end)
{
	size_t n = strspn(v, "0123456789");
	int64_t x;
	struct err ignored;

	if (n == 0 || str_to_i64((struct str){v, n}, 0, INT64_C(1) << 62, &x, "value", &ignored))
		return -1;
	*out = (unsigned long long)x;
	*end = v + n;
	return 0;
}

static int parse_size(const char *v, unsigned long long *out)
{
	const char *end;
	unsigned long long n, mul = 1;

	if (parse_digits(v, &n, &end))
		return -1;
	if (*end == 'k' || *end == 'K')
		mul = 1024ULL, end++;
	else if (*end == 'm' || *end == 'M')
		mul = 1024ULL * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		mul = 1024ULL * 1024 * 1024, end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || __builtin_mul_overflow(n, mul, &n))
		return -1;
	*out = n;
	return 0;
}

static int apply(const struct config_opt *o, const char *v, const char *source, struct err *e)
{
	unsigned long long n;
	const char *end;

	switch (o->type) {
	case CONFIG_STRING:
	case CONFIG_LIST: {
		char **t = o->target;
		free(*t);
		*t = strdup(v);
		return 0;
	}
	case CONFIG_UINT:
		if (parse_digits(v, &n, &end) || *end)
			goto bad;
		if (n < o->min || n > o->max)
			goto range;
		*(unsigned *)o->target = (unsigned)n;
		return 0;
	case CONFIG_SIZE:
		if (parse_size(v, &n))
			goto bad;
		if (n < o->min || n > o->max)
			goto range;
		*(size_t *)o->target = (size_t)n;
		return 0;
	case CONFIG_BOOL:
		if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "1"))
			*(bool *)o->target = true;
		else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "0"))
			*(bool *)o->target = false;
		else
			return err_set(e, ERR_INVALID, "%s: --%s must be true or false, got '%s'", source, o->name, v);
		return 0;
	case CONFIG_DURATION: {
		int64_t secs;
		if (duration_text(v, &secs))
			return err_set(e, ERR_INVALID,
				       "%s: --%s must be a duration (seconds, or a number with s, m, h or d, e.g. "
				       "30d, or ISO-8601 like P30D), got '%s'",
				       source, o->name, v);
		if ((unsigned long long)secs < o->min || (unsigned long long)secs > o->max)
			goto range;
		*(int64_t *)o->target = secs;
		return 0;
	}
	case CONFIG_LOG_LEVEL:
		if (log_level_parse(v, o->target))
			return err_set(e, ERR_INVALID, "%s: --%s must be one of debug, info, warn, error, got '%s'",
				       source, o->name, v);
		return 0;
	}
bad:
	return err_set(e, ERR_INVALID, "%s: --%s must be a %s, got '%s'", source, o->name,
		       o->type == CONFIG_SIZE ? "size (e.g. 1048576, 512k, 64M)" : "whole number", v);
range:
	return err_set(e, ERR_INVALID, "%s: --%s must be between %llu and %llu, got '%s'", source, o->name, o->min,
		       o->max, v);
}

#define MAX_LIST_OPTS 8

/* A repeated list flag: the first one replaces the environment's list, later ones add. */
static int list_add(const struct config_opt *o, const char *v, const struct config_opt **listed, struct err *e)
{
	char **t = o->target, *n = NULL;
	bool first = true;

	for (size_t i = 0; listed[i]; i++)
		if (listed[i] == o)
			first = false;
	if (first) {
		size_t i = 0;
		while (listed[i])
			i++;
		if (i + 1 >= MAX_LIST_OPTS)
			return err_set(e, ERR_INTERNAL, "too many list options");
		listed[i] = o;
	}
	if (!first && *t && *t[0] && asprintf(&n, "%s,%s", *t, v) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (!n && !(n = strdup(v)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	free(*t);
	*t = n;
	return 0;
}

int config_parse(const struct config_opt *opts, size_t n_opts, int argc, char **argv, bool *help, struct err *e)
{
	const struct config_opt *listed[MAX_LIST_OPTS] = {0};
	char env[128];
	int rc;

	*help = false;
	for (size_t i = 0; i < n_opts; i++) {
		if (opts[i].type == CONFIG_STRING || opts[i].type == CONFIG_LIST)
			*(char **)opts[i].target = NULL;
		if (opts[i].defval && (rc = apply(&opts[i], opts[i].defval, "default", e)))
			return rc;
	}
	for (size_t i = 0; i < n_opts; i++) {
		const char *v;
		env_name(opts[i].name, env, sizeof env);
		v = getenv(env);
		if (v && *v && (rc = apply(&opts[i], v, env, e)))
			return rc;
	}
	for (int a = 1; a < argc; a++) {
		const char *arg = argv[a], *val = NULL;
		const struct config_opt *o = NULL;
		size_t nlen;

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			*help = true;
			return 0;
		}
		if (strncmp(arg, "--", 2) != 0)
			return err_set(e, ERR_INVALID, "unexpected argument '%s'", arg);
		arg += 2;
		nlen = strcspn(arg, "=");
		for (size_t i = 0; i < n_opts; i++)
			if (strlen(opts[i].name) == nlen && strncmp(opts[i].name, arg, nlen) == 0)
				o = &opts[i];
		if (!o)
			return err_set(e, ERR_INVALID, "unknown option '--%.*s' (see --help)", (int)nlen, arg);
		if (arg[nlen] == '=')
			val = arg + nlen + 1;
		else if (a + 1 < argc)
			val = argv[++a];
		else
			return err_set(e, ERR_INVALID, "option '--%s' needs a value", o->name);
		if (o->type == CONFIG_LIST && (rc = list_add(o, val, listed, e)))
			return rc;
		if (o->type != CONFIG_LIST && (rc = apply(o, val, "command line", e)))
			return rc;
	}
	return 0;
}

void config_print_help(const char *usage, const struct config_opt *opts, size_t n_opts)
{
	char env[128];

	printf("%s\n\nOptions (flag, environment variable, default):\n", usage);
	for (size_t i = 0; i < n_opts; i++) {
		env_name(opts[i].name, env, sizeof env);
		printf("  --%-22s %-28s %s\n      %s\n", opts[i].name, env, opts[i].defval ? opts[i].defval : "(none)",
		       opts[i].help);
	}
	printf("  --help                   show this help\n");
}

void config_free(const struct config_opt *opts, size_t n_opts)
{
	for (size_t i = 0; i < n_opts; i++)
		if (opts[i].type == CONFIG_STRING || opts[i].type == CONFIG_LIST) {
			free(*(char **)opts[i].target);
			*(char **)opts[i].target = NULL;
		}
}
