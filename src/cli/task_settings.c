#include "cli/task_settings.h"

#include <stdlib.h>
#include <string.h>

#include "base/str.h"

struct task_settings task_settings;

const struct config_opt task_settings_opts[] = {TASK_SETTINGS_OPTS};
const size_t task_settings_n_opts = sizeof task_settings_opts / sizeof task_settings_opts[0];

static json_t *smtp_json(void)
{
	const char *pw = getenv("ACCORD_SMTP_PASSWORD");
	json_t *s;

	if (!task_settings.smtp_host || !*task_settings.smtp_host)
		return NULL;
	s = json_pack("{s:s, s:i, s:b}", "host", task_settings.smtp_host, "port", (json_int_t)task_settings.smtp_port,
		      "starttls", task_settings.smtp_starttls);
	if (s && task_settings.smtp_user && *task_settings.smtp_user)
		json_object_set_new(s, "username", json_string(task_settings.smtp_user));
	if (s && pw && *pw)
		json_object_set_new(s, "password", json_string(pw));
	return s;
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
	json_t *d = json_object(), *smtp = smtp_json(), *slack = slack_json(e);

	if (!slack) {
		json_decref(d);
		json_decref(smtp);
		return NULL;
	}
	if (smtp)
		json_object_set_new(d, "smtpParams", smtp);
	json_object_set_new(d, "slackParams", slack);
	if (task_settings.github_api_url && *task_settings.github_api_url)
		json_object_set_new(d, "githubParams", json_pack("{s:s}", "apiUrl", task_settings.github_api_url));
	return d;
}
