#ifndef ACCORD_QUEUE_MAIN_JSON_H
#define ACCORD_QUEUE_MAIN_JSON_H

#include <jansson.h>

#include "base/err.h"
#include "base/memdir.h"

/* <dir>/_main.json: the configuration a start request leaves in a process's payload
 * (entry point, arguments, out names, profiles, switches), read by the supervisor for the
 * start frame and edited for child and handler processes. */

/* The object (NEW); {} when the file is missing; NULL with e set when it cannot be read
 * or is not a JSON object. */
json_t *main_json_load(const char *dir, struct err *e);

/* Its "arguments" object (BORROWED), created when missing or not an object. */
json_t *main_json_args(json_t *cfg);

int main_json_save(const char *dir, json_t *cfg, struct err *e) WUR;

/* The same on a folder held in memory (base/memdir.h). */
json_t *main_json_load_files(const struct memdir *md, struct err *e);
int main_json_save_files(struct memdir *md, json_t *cfg, struct err *e) WUR;

/* Adds the arguments a process resumed with (args, BORROWED, may be NULL: nothing to do;
 * a form's {"<name>": values}) to those of <dir>/_main.json, as Concord keeps them in the
 * configuration of its last resume: forks and handler processes of the process see them. */
int main_json_add_args(const char *dir, json_t *args, struct err *e) WUR;

#endif
