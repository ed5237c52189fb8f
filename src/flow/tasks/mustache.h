#ifndef ACCORD_FLOW_TASKS_MUSTACHE_H
#define ACCORD_FLOW_TASKS_MUSTACHE_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

/* A Mustache renderer (https://mustache.github.io/mustache.5.html) for the `smtp` task's
 * `template` files, with mustache.java's behaviour where Concord's templates meet it:
 *   {{name}}, {{a.b.c}}   the value, HTML-escaped (& < > " ' ` = as entities); missing or
 *                         null renders nothing; non-strings print as the flow prints them
 *   {{{name}}}, {{&name}} the value unescaped
 *   {{.}}                 the current item (inside a section)
 *   {{#name}}…{{/name}}   a list renders the block once per item (the item on top of the
 *                         context), an object once with it on top, true or any other value
 *                         but false, null, "" and [] once; those four skip it
 *   {{^name}}…{{/name}}   the block only when name is false, null, "", [] or missing
 *   {{! comment}}         nothing
 * A section, inverted-section, closing or comment tag alone on its line takes the whole
 * line with it (the spec's "standalone" rule).  A name is looked up from the innermost
 * context outwards; in a.b.c only `a` is, the rest must follow from it.  Partials ({{>x}})
 * and delimiter changes ({{=<% %>=}}) are refused.
 * Returns the text as a NEW string (*out_len its length, may be NULL), or NULL with e set:
 * ERR_INVALID naming the line of an unclosed or mismatched tag, ERR_TOO_LARGE when the
 * output would pass max bytes.  scope is BORROWED.  Thread-safe. */
char *mustache_render(const char *tpl, size_t len, json_t *scope, size_t max, size_t *out_len, struct err *e);

#endif
