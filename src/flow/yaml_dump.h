#ifndef ACCORD_FLOW_YAML_DUMP_H
#define ACCORD_FLOW_YAML_DUMP_H

#include <jansson.h>

/* YAML text of a value in block style, strings double-quoted (as Concord's logYaml and
 * resource.writeAsYaml print them).  New string (caller frees); NULL when out of memory. */
char *yaml_dump_text(const json_t *v);

#endif
