#ifndef ACCORD_FLOW_YAML_H
#define ACCORD_FLOW_YAML_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/err.h"

/* A YAML document as a tree of nodes, each with its file, line and column (1-based),
 * built from libyaml events.  Duplicate mapping keys, non-scalar keys, tags other than
 * the standard ones and documents past limits.flow_yaml_bytes / flow_yaml_nodes are
 * errors.  Aliases share the anchored node (the tree is a DAG); their weight counts
 * against the node limit so alias bombs are refused.  All memory lives in the arena of
 * the ydoc. */

enum ynode_kind { YN_SCALAR, YN_SEQ, YN_MAP };

struct ynode {
	enum ynode_kind kind;
	bool plain; /* scalar written without quotes or block style: its type is inferred */
	int line, col;
	const char *file; /* borrowed from the ydoc */
	char *s;	  /* scalar text, NUL-terminated */
	size_t len;
	size_t n;	     /* sequence items, or mapping pairs */
	struct ynode **kids; /* sequence: n items; mapping: 2n nodes key, value, key, value … */
	size_t weight;	     /* nodes in this subtree, aliases expanded */
};

struct ydoc {
	struct arena arena;
	char *file;
	struct ynode *root; /* NULL for an empty document */
};

/* Parses data as one YAML document.  file names the document in errors, which are
 * "(<file>): Error @ line: L, col: C. <message>".  d is initialised in all cases; call
 * ydoc_cleanup afterwards. */
int ydoc_parse(struct ydoc *d, const char *file, const char *data, size_t len, struct err *e) WUR;
void ydoc_cleanup(struct ydoc *d);

/* Mapping lookup by key; NULL when absent (n must be a mapping). */
struct ynode *ynode_get(const struct ynode *map, const char *key);

/* The JSON value of a node: plain scalars typed the way Jackson's YAML reader does
 * (null/~/empty, true/false/yes/no/on/off/y/n in any case, integers, decimals), quoted
 * scalars as strings.  New reference; NULL only when out of memory. */
json_t *ynode_to_json(const struct ynode *n);

/* The same typing for one plain scalar text. */
json_t *yscalar_to_json(const char *s, size_t len, bool plain);

/* "STRING", "LIST", "MAP", … as Concord names node types in messages. */
const char *ynode_type_name(const struct ynode *n);

/* Formats a load error at a node: "(<file>): Error @ line: L, col: C. <message>". */
int yerr(struct err *e, const struct ynode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
