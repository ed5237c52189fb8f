#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/jsonx.h"
#include "base/oom.h"
#include "base/str.h"
#include "flow/tasks/slack_client.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

/* Concord's `slack` and `slackChannel` tasks (plugins/tasks/slack: SlackTaskV2,
 * SlackChannelTaskV2) on Slack's Web API (flow/tasks/slack_client.h has the settings,
 * the token and the retries).  `slack`: sendMessage (chat.postMessage; a reply in a thread
 * with `ts`), updateMessage (chat.update), addReaction (reactions.add), and the expression
 * methods send and sendJson.  `slackChannel`: create, createGroup (a private channel),
 * archive, archiveGroup — through the conversations.* methods that replaced Slack's retired
 * channels.* and groups.* ones, or those with isLegacy. */

static int str_param(json_t *in, const char *key, bool required, const char **out, struct err *e)
{
	if (task_opt_str(in, key, out, e) < 0)
		return -1;
	if (required && (!*out || !**out))
		return err_set(e, ERR_INVALID, "'%s' is required", key);
	return 0;
}

static int is_legacy(json_t *in, bool *legacy, struct err *e)
{
	json_t *v = json_object_get(in, "isLegacy");

	*legacy = false;
	if (v && !json_is_null(v) && value_to_bool(v, legacy, e) < 0) {
		err_prefix(e, "'isLegacy'");
		return -1;
	}
	return 0;
}

/* {ok, error, id, ts} as Concord's task returns them. */
static int message_done(struct task_ctx *t, const char *what, json_t *resp, json_t **out, struct err *e)
{
	json_t *ok = json_object_get(resp, "ok"), *error = json_object_get(resp, "error");
	json_t *channel = json_object_get(resp, "channel"), *ts = json_object_get(resp, "ts");

	if (!json_is_true(ok))
		vm_log(t->vm, FLOW_WARN, "Error %s: %s", what, json_is_string(error) ? json_string_value(error) : "?");
	*out = json_pack("{s:b, s:O, s:O, s:O}", "ok", json_is_true(ok), "error", error ? error : json_null(), "id",
			 json_is_string(channel) ? channel : json_null(), "ts", json_is_string(ts) ? ts : json_null());
	return *out ? 0 : oom_fail(e);
}

static int copy_param(json_t *in, const char *key, json_t *body, const char *as, json_type type, struct err *e)
{
	json_t *v = json_object_get(in, key);
	if (!v || json_is_null(v))
		return 0;
	if (json_typeof(v) != type)
		return err_set(e, ERR_INVALID, "'%s' must be a %s, got %s", key, type == JSON_ARRAY ? "list" : "string",
			       value_class_name(v));
	json_object_set(body, as, v);
	return 0;
}

/* isLegacy (Concord's option for workspaces with classic apps): a new message is posted
 * as_user, unless it names its own username or icon. */
static int legacy_as_user(json_t *in, bool update, json_t *body, struct err *e)
{
	bool legacy = false;

	if (is_legacy(in, &legacy, e) < 0)
		return -1;
	if (legacy && !update)
		json_object_set_new(body, "as_user", json_boolean(!json_object_get(body, "icon_emoji") &&
								   !json_object_get(body, "username")));
	return 0;
}

/* The body of chat.postMessage or chat.update from the step's parameters, or its `json`. */
static json_t *message_body(json_t *in, bool update, struct err *e)
{
	const char *json, *channel, *ts;
	json_t *body = NULL, *rb = json_object_get(in, "replyBroadcast");
	bool broadcast = false;

	if (str_param(in, "json", false, &json, e) < 0)
		return NULL;
	if (json) {
		if (!(body = jsonx_parse(json, strlen(json), 64, e)) || !json_is_object(body)) {
			json_decref(body);
			err_set(e, ERR_INVALID, "'json' must be the text of a JSON object");
			return NULL;
		}
		return body;
	}
	if (str_param(in, "channelId", true, &channel, e) < 0 || str_param(in, "ts", update, &ts, e) < 0 ||
	    (rb && !json_is_null(rb) && value_to_bool(rb, &broadcast, e) < 0))
		return NULL;
	body = json_pack("{s:s}", "channel", channel);
	if (ts)
		json_object_set_new(body, update ? "ts" : "thread_ts", json_string(ts));
	if (ts && !update)
		json_object_set_new(body, "reply_broadcast", json_boolean(broadcast));
	if (copy_param(in, "text", body, "text", JSON_STRING, e) < 0 ||
	    copy_param(in, "iconEmoji", body, "icon_emoji", JSON_STRING, e) < 0 ||
	    copy_param(in, "username", body, "username", JSON_STRING, e) < 0 ||
	    copy_param(in, "attachments", body, "attachments", JSON_ARRAY, e) < 0 ||
	    copy_param(in, "blocks", body, "blocks", JSON_ARRAY, e) < 0 || legacy_as_user(in, update, body, e) < 0) {
		json_decref(body);
		return NULL;
	}
	return body;
}

/* what: "'<reaction>' added to the Slack message '<ts>'" (Concord's log line). */
static int reaction_done(struct task_ctx *t, const char *what, json_t *resp, json_t **out, struct err *e)
{
	if (json_is_true(json_object_get(resp, "ok")))
		vm_log(t->vm, FLOW_INFO, "Reaction %s", what);
	return message_done(t, "adding reaction to Slack message", resp, out, e);
}

static int add_reaction(struct task_ctx *t, json_t *in, struct err *e)
{
	const char *channel, *ts, *reaction;
	char what[300];

	if (str_param(in, "channelId", true, &channel, e) < 0 || str_param(in, "ts", true, &ts, e) < 0 ||
	    str_param(in, "reaction", true, &reaction, e) < 0)
		return -1;
	str_fmt_cut(what, sizeof what, "'%.60s' added to the Slack message '%.60s'", reaction, ts);
	return slack_call(t, in, "reactions.add",
			  json_pack("{s:s, s:s, s:s}", "channel", channel, "timestamp", ts, "name", reaction), what,
			  reaction_done, e);
}

static int slack_execute(struct task_ctx *t, json_t *in, json_t **out, struct err *e)
{
	const char *action;
	bool update;
	json_t *body;

	*out = NULL;
	if (!json_is_object(in))
		return err_set(e, ERR_INVALID, "the slack task needs an 'in' map");
	if (str_param(in, "action", false, &action, e) < 0)
		return -1;
	if (action && strcasecmp(action, "addReaction") == 0)
		return add_reaction(t, in, e);
	update = action && strcasecmp(action, "updateMessage") == 0;
	if (action && !update && strcasecmp(action, "sendMessage") != 0)
		return err_set(e, ERR_INVALID,
			       "Unsupported action type: %.50s (expected sendMessage, updateMessage or addReaction)", action);
	if (!(body = message_body(in, update, e)))
		return -1;
	return slack_call(t, in, update ? "chat.update" : "chat.postMessage", body, "sending a Slack message",
			  message_done, e);
}

/* slackChannel: a failed call fails the step, as in Concord.  A created channel's id is
 * channel.id (group.id from the legacy groups.create). */
static int channel_done(struct task_ctx *t, const char *what, json_t *resp, json_t **out, struct err *e)
{
	json_t *error = json_object_get(resp, "error"), *ch = json_object_get(resp, "channel");
	bool group = strncmp(what, "CREATEGROUP", 11) == 0, create = strncmp(what, "CREATE", 6) == 0;
	const char *id, *name;

	if (!json_is_object(ch))
		ch = json_object_get(resp, "group");
	id = json_string_value(json_object_get(ch, "id"));
	name = json_string_value(json_object_get(ch, "name"));
	if (!json_is_true(json_object_get(resp, "ok")))
		return err_set(e, ERR_INVALID, "%s: %s", what, json_is_string(error) ? json_string_value(error) : "?");
	if (create && !id)
		return err_set(e, ERR_UNAVAILABLE, "%s: the answer has no channel.id", what);
	if (create)
		vm_log(t->vm, FLOW_INFO, "Slack %s created: %s -> %s (stored as 'slackChannelId' variable)",
		       group ? "group" : "channel", name ? name : "?", id);
	*out = create ? json_pack("{s:b, s:s}", "ok", 1, "slackChannelId", id) : json_pack("{s:b}", "ok", 1);
	return *out ? 0 : oom_fail(e);
}

/* The Web API method of action a (create, createGroup, archive, archiveGroup): the
 * conversations.* ones that replaced Slack's retired channels.* and groups.*, or with
 * isLegacy those, as Concord's client calls them. */
static const char *channel_method(size_t a, bool legacy)
{
	static const char *const now[] = {"conversations.create", "conversations.create", "conversations.archive",
					  "conversations.archive"};
	static const char *const old[] = {"channels.create", "groups.create", "channels.archive", "groups.archive"};
	return legacy ? old[a] : now[a];
}

static int slack_channel_execute(struct task_ctx *t, json_t *in, json_t **out, struct err *e)
{
	static const char *const actions[] = {"create", "createGroup", "archive", "archiveGroup"};
	const char *action, *name;
	char what[300];
	size_t a = 0;
	bool create, legacy;
	json_t *body;

	*out = NULL;
	if (!json_is_object(in))
		return err_set(e, ERR_INVALID, "the slackChannel task needs an 'in' map");
	if (str_param(in, "action", true, &action, e) < 0 || is_legacy(in, &legacy, e) < 0)
		return -1;
	while (a < 4 && strcasecmp(action, actions[a]) != 0)
		a++;
	if (a == 4)
		return err_set(e, ERR_INVALID,
			       "Unsupported action type: %.50s (expected create, createGroup, archive or archiveGroup)",
			       action);
	create = a < 2;
	if (str_param(in, create ? "channelName" : "channelId", true, &name, e) < 0)
		return -1;
	str_fmt_cut(what, sizeof what, "%s error (channel: '%.200s')", create ? (a ? "CREATEGROUP" : "CREATE")
									       : (a == 3 ? "ARCHIVEGROUP" : "ARCHIVE"),
		    name);
	if (!create)
		body = json_pack("{s:s}", "channel", name);
	else if (legacy)
		body = json_pack("{s:s}", "name", name);
	else
		body = json_pack("{s:s, s:b}", "name", name, "is_private", a == 1);
	return slack_call(t, in, channel_method(a, legacy), body, what, channel_done, e);
}

/* A message from an expression, described by in (BORROWED): on the VM's thread (an
 * expression cannot hand its wait over). */
static int expr_message(struct task_ctx *t, json_t *in, json_t **out, struct err *e)
{
	struct task_job *j;
	json_t *body = message_body(in, false, e);
	int rc = body ? slack_call(t, in, "chat.postMessage", body, "sending a Slack message", message_done, e) : -1;

	if (rc < 0)
		return -1;
	j = t->job;
	t->job = NULL;
	j->run(j);
	rc = j->finish(j, t, out, e);
	j->free(j);
	return rc;
}

/* ${slack.send(channelId, text)}: a message with the server's settings. */
static int m_send(struct task_ctx *t, json_t *args, json_t **out, struct err *e)
{
	const char *channel, *text;
	json_t *in;
	int rc;

	*out = NULL;
	if (task_arg_str(args, 0, "channelId", &channel, e) < 0 || task_arg_str(args, 1, "text", &text, e) < 0)
		return -1;
	if (!(in = json_pack("{s:s, s:s}", "channelId", channel, "text", text)))
		return oom_fail(e);
	rc = expr_message(t, in, out, e);
	json_decref(in);
	return rc;
}

/* ${slack.sendJson(context, cfg, json, ignoreErrors)}: Concord's SlackTaskV2.sendJson, whose
 * first two parameters it ignores too (the server's settings apply): chat.postMessage with
 * the JSON text as the body. */
static int m_send_json(struct task_ctx *t, json_t *args, json_t **out, struct err *e)
{
	const char *json;
	json_t *in;
	bool ignore = false;
	int rc;

	*out = NULL;
	if (task_arg_str(args, 2, "json", &json, e) < 0)
		return -1;
	if (value_to_bool(json_array_get(args, 3), &ignore, e) < 0) {
		err_prefix(e, "'ignoreErrors'");
		return -1;
	}
	if (!(in = json_pack("{s:s, s:b}", "json", json, "ignoreErrors", ignore)))
		return oom_fail(e);
	rc = expr_message(t, in, out, e);
	json_decref(in);
	return rc;
}

static const struct task_method slack_methods[] = {
    {"send", m_send, 2, 2}, {"sendJson", m_send_json, 4, 4}, {NULL, NULL, 0, 0}};
static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_slack = {"slack", slack_execute, slack_methods, false, false};
const struct task_def task_slack_channel = {"slackChannel", slack_channel_execute, no_methods, false, false};
