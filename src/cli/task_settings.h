#ifndef ACCORD_CLI_TASK_SETTINGS_H
#define ACCORD_CLI_TASK_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cli/config.h"

/* The server-side defaults of the `smtp` and `slack`/`slackChannel` tasks (docs/operations.md
 * "Mail and Slack"): the same settings for `accord serve` and `accord run`, as flags and
 * ACCORD_* variables.  The SMTP password and the Slack token come from the environment only
 * (ACCORD_SMTP_PASSWORD, ACCORD_SLACK_TOKEN), never from a flag, so that they appear in no
 * process list.  They reach a runner in its start frame (never a file) and tasks through
 * flow_host.task_defaults. */
struct task_settings {
	char *smtp_host;
	unsigned smtp_port;
	bool smtp_starttls;
	bool smtp_ssl;
	char *smtp_ca_file;
	char *smtp_user;
	char *slack_api_url;
	char *slack_proxy; /* host:port */
	char *github_api_url;
	char *krb5_config; /* a krb5.conf for the ansible task's auth.krb5 */
	char *ldap_task_dns_server; /* ADDR[:PORT] */
};

extern struct task_settings task_settings;

/* The entries of the option table, for serve's table (one definition for both commands). */
#define TASK_SETTINGS_OPTS                                                                                             \
	{"smtp-host", CONFIG_STRING, NULL, 0, 0, &task_settings.smtp_host,                                            \
	 "SMTP server of the smtp task (smtpParams.host) when a flow names none"},                                      \
	    {"smtp-port", CONFIG_UINT, "25", 1, 65535, &task_settings.smtp_port, "its port (smtpParams.port)"},       \
	    {"smtp-starttls", CONFIG_BOOL, "false", 0, 0, &task_settings.smtp_starttls,                              \
	     "require STARTTLS on that server"},                                                                        \
	    {"smtp-ssl", CONFIG_BOOL, "false", 0, 0, &task_settings.smtp_ssl,                                        \
	     "speak TLS from the first byte (smtps, usually port 465)"},                                                \
	    {"smtp-ca-file", CONFIG_STRING, NULL, 0, 0, &task_settings.smtp_ca_file,                                  \
	     "PEM file of the CA(s) that server's certificate is checked against, instead of the system's"},           \
	    {"smtp-user", CONFIG_STRING, NULL, 0, 0, &task_settings.smtp_user,                                        \
	     "user name for that server (the password: ACCORD_SMTP_PASSWORD, environment only)"},                       \
	    {"slack-api-url", CONFIG_STRING, "https://slack.com/api/", 0, 0, &task_settings.slack_api_url,             \
	     "Slack Web API of the slack tasks (the token: ACCORD_SLACK_TOKEN, environment only)"},                     \
	    {"slack-proxy", CONFIG_STRING, NULL, 0, 0, &task_settings.slack_proxy,                                    \
	     "HTTP proxy (host:port) of the slack tasks"},                                                              \
	    {"github-api-url", CONFIG_STRING, NULL, 0, 0, &task_settings.github_api_url,                               \
	     "GitHub (Enterprise) API URL of the github task when a flow names none"},                                 \
	    {"krb5-config", CONFIG_STRING, NULL, 0, 0, &task_settings.krb5_config,                                    \
	     "krb5.conf (realms, KDCs) of the ansible task's auth.krb5, instead of /etc/krb5.conf"},                  \
	{                                                                                                              \
		"ldap-task-dns-server", CONFIG_STRING, NULL, 0, 0, &task_settings.ldap_task_dns_server,                \
		    "DNS server (IPv4 ADDR[:PORT]) of the ldap task's dnsSrvRr look-ups; default: the system's"        \
	}

/* The table alone (accord run). */
extern const struct config_opt task_settings_opts[];
extern const size_t task_settings_n_opts;

/* {"smtpParams": {host, port, starttls, ssl, caPem?, username?, password?}, "slackParams":
 * {apiUrl, apiToken?, proxyAddress?, proxyPort?}, "githubParams": {apiUrl}, "ldapTask":
 * {dnsServer}, "krb5": {config}} from task_settings
 * and the environment (NEW); smtpParams only with a host, githubParams only with an API URL,
 * ldapTask only with --ldap-task-dns-server;
 * caPem is the text of --smtp-ca-file, config that of --krb5-config, read here (runners may
 * not be able to read them).  NULL with e set for a malformed --slack-proxy or
 * --ldap-task-dns-server, or an unreadable --smtp-ca-file or --krb5-config. */
json_t *task_settings_json(struct err *e);

#endif
