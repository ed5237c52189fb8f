#ifndef ACCORD_FLOW_TASKS_ANSIBLE_KRB5_H
#define ACCORD_FLOW_TASKS_ANSIBLE_KRB5_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/task.h"

/* Internal to the ansible task (ansible.c): Concord's `auth.krb5` {user, password}, its
 * KerberosAuth.  The user's ticket is got with Debian's kinit (krb5-user) through the tool
 * layer into the credentials cache dir/krb5cc (dir: the run's folder, absolute; run_rel:
 * the same relative to the working directory); the password reaches kinit as its stdin,
 * from a 0600 file under run_rel removed when kinit ends, and is masked from the moment it
 * is read.  With the server's --krb5-config (task defaults "krb5": {"config"}), its text is
 * written to dir/krb5.conf and kinit (and Ansible: ansible_krb5_config) read it instead of
 * /etc/krb5.conf. */
struct ansible_krb5;

/* Gets the first ticket: a NEW state, or NULL with e set: bad input, kinit missing, or
 * "kinit failed for '<user>' (exit code N): <kinit's last line>". */
struct ansible_krb5 *ansible_krb5_start(struct task_ctx *c, json_t *krb5, const char *dir, const char *run_rel,
					struct err *e);

/* Whether dir/krb5.conf was written (Ansible then gets KRB5_CONFIG pointing at it). */
bool ansible_krb5_config(const struct ansible_krb5 *k);

/* The ansible-playbook tool's tick (flow_tool.tick, every ANSIBLE_KRB5_TICK_MS): shortly
 * before the ticket expires (a minute, or half its lifetime when that is shorter) a new one
 * is got with the password into dir/krb5cc.new and renamed over dir/krb5cc, for as long as
 * the program runs; a failure is logged and tried again later. */
#define ANSIBLE_KRB5_TICK_MS 1000
void ansible_krb5_tick(void *k);

/* Forgets the password (zeroed); NULL is fine. */
void ansible_krb5_free(struct ansible_krb5 *k);

#endif
