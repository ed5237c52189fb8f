#ifndef ACCORD_FLOW_MASK_H
#define ACCORD_FLOW_MASK_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* The sensitive values of a process (sensitive(x), secrets from server tasks and what
 * derives from them): every occurrence in a log line or event is printed as ******, as
 * Concord does.  Used by both flow hosts (cli/run_host.c, runner/host.c).  Values are kept
 * longest first, deduplicated, and wiped by mask_cleanup. */

#define MASK_TEXT "******"

struct mask {
	char **v;
	size_t n;
	bool lost; /* a value could not be kept (out of memory): from then on every text is masked whole */
};

/* Adds a value (empty strings are ignored).  Returns true when it was new.  Out of memory:
 * false, the failure counted (base/oom.h, the VM fails the step) and m->lost set, so that
 * the value is never printed. */
bool mask_add(struct mask *m, const char *value);
/* Adds the strings of a JSON array. */
void mask_add_list(struct mask *m, json_t *list);
/* Whether value is exactly one of the values. */
bool mask_has(const struct mask *m, const char *value);
/* s with every value replaced by ******: a new string, or NULL with *changed false when s
 * holds none; NULL with *changed true when memory ran out or m->lost (print MASK_TEXT
 * instead). */
char *mask_text(const struct mask *m, const char *s, bool *changed);
/* Masks the strings of v in place. */
void mask_json(const struct mask *m, json_t *v);
void mask_cleanup(struct mask *m);

#endif
