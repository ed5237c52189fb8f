#ifndef ACCORD_FLOW_MODEL_H
#define ACCORD_FLOW_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/err.h"
#include "flow/yaml.h"

/* The compiled, validated process definition.  model_load reads a project (a folder or a
 * single file), applies the active profiles and compiles every flow and form; nothing
 * runs before the whole definition has been validated.  Every step and every step list
 * has a stable id (its index in model.steps / model.lists), which is how saved VM state
 * refers to code.  A model is immutable after loading and may be shared by threads. */

struct el_expr;
struct memdir;

enum tval_kind { TV_LIT, TV_EXPR, TV_LIST, TV_MAP };

/* A YAML value that may hold ${…} expressions, evaluated recursively at run time.  Map
 * keys with dots are expanded into nested maps and deep-merged (reference §2.5). */
struct tval {
	enum tval_kind kind;
	int line, col;
	json_t *lit;	      /* TV_LIT: the value (owned) */
	struct el_expr *expr; /* TV_EXPR: compiled template */
	char *text;	      /* TV_EXPR: source text */
	char *error;	      /* TV_EXPR with expr NULL: the syntax error, raised when evaluated */
	size_t n;
	struct tval **items; /* TV_LIST items; TV_MAP values */
	char **keys;	     /* TV_MAP keys */
	bool dotted;	     /* TV_MAP: some key contains '.' */
};

enum step_kind {
	STEP_TASK,
	STEP_LOG,
	STEP_LOG_YAML,
	STEP_THROW,
	STEP_EXPR,
	STEP_SET,
	STEP_IF,
	STEP_SWITCH,
	STEP_CALL,
	STEP_BLOCK,
	STEP_PARALLEL,
	STEP_CHECKPOINT,
	STEP_SUSPEND,
	STEP_FORM,
	STEP_RETURN,
	STEP_EXIT,
	STEP_SCRIPT,
};

struct step;

struct steps {
	int id;
	size_t n;
	struct step **v;
};

enum out_kind { OUT_NONE, OUT_NAME, OUT_LIST, OUT_MAP, OUT_EXPR };

struct out_spec {
	enum out_kind kind;
	size_t n;
	char **names;	  /* OUT_NAME (n = 1), OUT_LIST */
	struct tval *map; /* OUT_MAP (TV_MAP), OUT_EXPR (TV_EXPR) */
};

struct loop_spec {
	bool parallel;
	struct tval *items;
	struct tval *parallelism; /* NULL: configuration.parallelLoopParallelism */
	bool unlimited;		  /* parallelWithItems */
};

struct retry_spec {
	struct tval *times; /* NULL: 1 */
	struct tval *delay; /* NULL: 5 seconds */
	struct tval *in;    /* NULL or a map merged over the step's in */
};

struct switch_case {
	struct tval *label;
	struct steps *body;
};

enum field_card { CARD_ONE, CARD_OPTIONAL, CARD_ONE_OR_MORE, CARD_ANY };

struct form_field {
	char *name;
	char *type; /* string int decimal boolean file date dateTime */
	enum field_card card;
	struct tval *label, *value, *allow;
	json_t *attrs; /* the remaining attributes (pattern, min, max, readonly, …) */
};

struct form_def {
	char *name;
	size_t n;
	struct form_field *fields;
};

struct form_call {
	bool yield, save_submitted_by;
	struct tval *run_as, *values;
	struct tval *fields_expr; /* fields: ${…} */
	struct form_def *inline_fields;
};

struct step {
	enum step_kind kind;
	int id;
	const char *file; /* borrowed from the model */
	int line, col;
	const char *flow; /* name of the flow the step belongs to */
	struct tval *name;
	json_t *meta;
	struct tval *arg; /* log/logYaml message, throw value, expr, if condition, switch value,
			     call target, checkpoint/suspend/form name, task `in` given as ${…} */
	char *task;	  /* task name */
	struct tval *in;  /* task/call in map */
	struct out_spec out;
	bool ignore_errors;
	struct loop_spec *loop;
	struct retry_spec *retry;
	struct steps *error;
	struct steps *body; /* then, block body, parallel branches (one step each) */
	struct steps *alt;  /* else, switch default */
	size_t n_cases;
	struct switch_case *cases;
	struct form_call *form;
	char *script_body; /* STEP_SCRIPT: `body:` (arg is the language, or the file with no body) */
};

struct flow_def {
	char *name;
	const char *file;
	struct steps *body;
};

struct model_importer;

struct model {
	struct arena arena;  /* steps, lists, tvals, names */
	json_t **owned_json; /* literals to release */
	size_t n_owned_json, cap_owned_json;
	struct el_expr **owned_expr;
	size_t n_owned_expr, cap_owned_expr;
	struct ydoc *docs;
	size_t n_docs;
	char *root_dir;		/* project folder */
	/* While loading only (model_opts): the folder held in memory, and where to say that it
	 * is needed on disk. */
	const struct memdir *files;
	bool *needs_folder;
	bool server_imports;	/* dir imports may not name an absolute src (model_opts) */
	const struct model_importer *importer; /* git and mvn imports (model_opts) */
	json_t *configuration;	/* effective configuration, profiles applied (without arguments) */
	struct tval *arguments; /* configuration.arguments, evaluated at start */
	json_t *triggers;	/* parsed and kept */
	json_t *imports;
	json_t *public_flows;	 /* array of names */
	json_t *active_profiles; /* array of names */
	json_t *profiles;	 /* names of the profiles the definition declares, in order */
	json_t *declared_args;	 /* configuration.arguments as written (an object; expressions as text) */
	size_t n_flows;
	struct flow_def *flows;
	size_t n_forms;
	struct form_def *forms;
	size_t n_steps, cap_steps;
	struct step **steps;
	size_t n_lists, cap_lists;
	struct steps **lists;
	char hash[65]; /* hex digest of the definition files and active profiles */
};

struct model_opts {
	const char *path;	     /* folder or single file */
	const char *const *profiles; /* -p values; NULL/0: configuration.activeProfiles or ["default"] */
	size_t n_profiles;
	/* On the server: `imports: - dir:` may only copy folders of the payload itself, never
	 * an absolute src (which would read the server's files into the process). */
	bool server_imports;
	/* git and mvn imports: NULL fails them with "not available"; an importer whose fetch is
	 * NULL skips them (the runner and a repository's trigger scan: the server copied them
	 * into the process folder before it stored the process). */
	const struct model_importer *importer;
	/* Non-NULL: the project folder is held in memory (base/memdir.h), path is ignored and
	 * names only the folder it would be written to (NULL: ".").  Loaded exactly as from
	 * the folder, except that a root document with `imports` (which copy files into the
	 * folder) is not loaded: NULL with *needs_folder set (then load from the folder). */
	const struct memdir *files;
	bool *needs_folder;
};

/* Fetches one `git` or `mvn` import of the root document into dest (absolute, inside the
 * project folder; created as needed, existing files overwritten).  kind is "git" or
 * "mvn", spec the import's options as written (BORROWED).  Errors name the cause; the
 * loader puts the import before it.  A fetch must leave dest untouched when it fails
 * before its files are complete (it copies from a finished checkout or archive). */
struct model_importer {
	int (*fetch)(void *ctx, const char *kind, json_t *spec, const char *dest, struct err *e);
	void *ctx;
};

/* Loads, validates and compiles.  Errors (ERR_INVALID, ERR_LIMIT, ERR_NOT_FOUND) carry the
 * "(file): Error @ line: L, col: C. …" form where a position is known.  New model
 * (model_free) or NULL. */
struct model *model_load(const struct model_opts *o, struct err *e);
/* Compiles one document held in memory (no extra files, no imports, default profiles); for
 * tests and the fuzz target. */
struct model *model_load_buffer(const char *name, const char *data, size_t len, struct err *e);
void model_free(struct model *m);

const struct flow_def *model_flow(const struct model *m, const char *name);
/* The flows a process may start at: those named in publicFlows that exist when the
 * definition lists any, else every flow, in the definition's order.  New array of names;
 * NULL when out of memory. */
json_t *model_entry_points(const struct model *m);
const struct form_def *model_form(const struct model *m, const char *name);

/* Compiles one template value node into m's arena (expressions are parsed here, once).
 * NULL with an error naming the node's position. */
struct tval *tval_compile(struct model *m, const struct ynode *n, struct err *e);
/* A literal tval holding a new reference to v (v is not taken over). */
struct tval *tval_lit(struct model *m, json_t *v);

#endif
