#include "cli/task_settings.h"

#include <stdlib.h>
#include <string.h>

#include "base/dns_srv.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"

struct task_settings task_settings;

const struct config_opt task_settings_opts[] = {TASK_SETTINGS_OPTS};
const size_t task_settings_n_opts = sizeof task_settings_opts / sizeof task_settings_opts[0];

#define SMTP_CA_FILE_MAX (1u << 20)
#define KRB5_CONFIG_MAX (1u << 20)

/* The smtpParams defaults into *out (NULL without --smtp-host). */
static int smtp_json(json_t **out, struct err *e)
{
	const char *pw = getenv("ACCORD_SMTP_PASSWORD"), *ca = task_settings.smtp_ca_file;
	json_t *s;

	*out = NULL;
	if (!task_settings.smtp_host || !*task_settings.smtp_host)
		return 0;
	if (!(s = json_pack("{s:s, s:i, s:b, s:b}", "host", task_settings.smtp_host, "port",
			    (json_int_t)task_settings.smtp_port, "starttls", task_settings.smtp_starttls, "ssl",
			    task_settings.smtp_ssl)))
		return oom_fail(e);
	if (ca && *ca) {
		size_t len;
		char *pem = path_read_file(ca, SMTP_CA_FILE_MAX, &len, e);
		if (!pem) {
			json_decref(s);
			err_prefix(e, "--smtp-ca-file");
			return -1;
		}
		if (!memmem(pem, len, "-----BEGIN CERTIFICATE-----", 27)) {
			free(pem);
			json_decref(s);
			return err_set(e, ERR_INVALID, "--smtp-ca-file: '%s' holds no PEM certificate", ca);
		}
		json_object_set_new(s, "caPem", json_stringn(pem, len));
		free(pem);
	}
	if (task_settings.smtp_user && *task_settings.smtp_user)
		json_object_set_new(s, "username", json_string(task_settings.smtp_user));
	if (pw && *pw)
		json_object_set_new(s, "password", json_string(pw));
	*out = s;
	return 0;
}

static json_t *slack_json(struct err *e)
{
	const char *token = getenv("ACCORD_SLACK_TOKEN"), *proxy = task_settings.slack_proxy;
	json_t *s = json_pack("{s:s}", "apiUrl", task_settings.slack_api_url ? task_settings.slack_api_url : "");

	if (s && token && *token)
		json_object_set_new(s, "apiToken", json_string(token));
	if (s && proxy && *proxy) {
		const char *colon = strrchr(proxy, ':');
		int64_t port;
		if (!colon || colon == proxy ||
		    str_to_i64((struct str){colon + 1, strlen(colon + 1)}, 1, 65535, &port, "port", e) < 0) {
			json_decref(s);
			err_set(e, ERR_INVALID, "--slack-proxy must be host:port, got '%s'", proxy);
			return NULL;
		}
		json_object_set_new(s, "proxyAddress", json_stringn(proxy, (size_t)(colon - proxy)));
		json_object_set_new(s, "proxyPort", json_integer(port));
	}
	return s;
}

json_t *task_settings_json(struct err *e)
{
	json_t *d, *smtp, *slack;

	if (smtp_json(&smtp, e) < 0)
		return NULL;
	d = json_object();
	if (!(slack = slack_json(e))) {
		json_decref(d);
		json_decref(smtp);
		return NULL;
	}
	if (smtp)
		json_object_set_new(d, "smtpParams", smtp);
	json_object_set_new(d, "slackParams", slack);
	if (task_settings.github_api_url && *task_settings.github_api_url)
		json_object_set_new(d, "githubParams", json_pack("{s:s}", "apiUrl", task_settings.github_api_url));
	if (task_settings.ldap_task_dns_server && *task_settings.ldap_task_dns_server) {
		if (dns_server_check(task_settings.ldap_task_dns_server, e) < 0) {
			err_prefix(e, "--ldap-task-dns-server");
			json_decref(d);
			return NULL;
		}
		json_object_set_new(d, "ldapTask", json_pack("{s:s}", "dnsServer", task_settings.ldap_task_dns_server));
	}
	if (task_settings.krb5_config && *task_settings.krb5_config) {
		size_t len;
		char *text = path_read_file(task_settings.krb5_config, KRB5_CONFIG_MAX, &len, e);
		if (!text) {
			err_prefix(e, "--krb5-config");
			json_decref(d);
			return NULL;
		}
		json_object_set_new(d, "krb5", json_pack("{s:s%}", "config", text, len));
		free(text);
	}
	return d;
}
