#ifndef ACCORD_RUNNER_SCRIPT_SHIMS_H
#define ACCORD_RUNNER_SCRIPT_SHIMS_H

/* The programs the script helpers run (src/runner/shims/shim.<ext>, embedded at build time
 * by scripts/embed-shims): the protocol loop and the Concord bindings of one language.
 * script_shim("js") → shim.js, NUL-terminated and static; NULL when there is none. */
const char *script_shim(const char *ext);

#endif
