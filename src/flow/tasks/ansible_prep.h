#ifndef ACCORD_FLOW_TASKS_ANSIBLE_PREP_H
#define ACCORD_FLOW_TASKS_ANSIBLE_PREP_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

/* Internal to the ansible task (ansible.c): the files a run needs, written into its own
 * folder inside the working directory (ansible_prep.c). */

/* The text of ansible.cfg (NEW, *len set): Accord's defaults (dir: the run's absolute
 * folder, for the callback plugin and local temporary files), then config ({section: {key:
 * value}}, may be NULL) over them.  NULL with ERR_INVALID when config is not such a map. */
char *ansible_cfg_text(const char *dir, json_t *config, size_t *len, struct err *e);

/* An inline inventory (Concord's shape: {group: {hosts: [h…], vars: {…}, children: [g…]},
 * _meta: {hostvars: {h: {…}}}}) as the text of an inventory file Ansible reads (a YAML
 * inventory in JSON syntax, to be named *.json): NEW, or NULL with ERR_INVALID and the
 * reason when inv is not of that shape.  Hosts and groups that connect locally get
 * ansible_remote_tmp in dir (the run's absolute folder). */
char *ansible_inventory_text(json_t *inv, const char *dir, struct err *e);

/* The callback plugins, written into dir/_callbacks: the one that collects outVars and the
 * host statistics, and with events the one that records ANSIBLE events. */
int ansible_write_callbacks(const char *dir, bool events, struct err *e) WUR;

/* enableLogFiltering's stdout callback (Concord's concord_protectdata), written into
 * dir/_callbacks as accord_protectdata: the default output with values whose key or text
 * names a password, a secret or credentials masked, no_log for tasks whose arguments do. */
int ansible_write_protect(const char *dir, struct err *e) WUR;

#endif
