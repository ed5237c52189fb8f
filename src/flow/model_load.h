#ifndef ACCORD_FLOW_MODEL_LOAD_H
#define ACCORD_FLOW_MODEL_LOAD_H

#include "flow/compile.h"

/* Internal to the loader (model.c: files; model_top.c: top-level keys and merging). */

/* Finds and parses the root file and the extra definition files of path (or of o->files,
 * held in memory) into m->docs (extra files first, the root last) and computes m->hash. */
int model_load_files(struct model *m, const struct model_opts *o, struct err *e) WUR;

/* resources.concord of the root document (m->docs[0] while loading), or NULL (*out) for
 * the default pattern.  *out is new. */
int model_root_patterns(struct model *m, json_t **out, struct err *e) WUR;

/* Copies `imports: - dir: {src, dest}` of the root document into the project folder; git
 * and mvn imports fail with "not available when running locally". */
int model_import_dirs(struct model *m, struct err *e) WUR;

#endif
