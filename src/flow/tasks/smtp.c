#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/buf.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/curl_api.h"
#include "flow/tasks/defaults.h"
#include "flow/tasks/mail_message.h"
#include "flow/tasks/mustache.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

/* Concord's `smtp` task (plugins/tasks/smtp, SmtpTaskV2): one message per call, sent over
 * libcurl's SMTP (loaded on first use, flow/tasks/curl_api.h).  The server: the flow's
 * smtpParams (the step's input, else a variable), else the server's defaults (--smtp-host…,
 * flow/tasks/defaults.h) — whose user and password are used only with the server's own
 * host.  The message: `mail` as in docs/flows.md "smtp", its body `message` or a Mustache
 * `template` rendered with the flow's variables.  The transfer runs as a task_job (task.h):
 * other parallel branches go on meanwhile.  The password never reaches a log line or an
 * error message. */

#define SMTP_MAX_MESSAGE_BYTES (32u << 20)
#define SMTP_MAX_TEMPLATE_BYTES (1u << 20)
#define SMTP_MAX_ATTACHMENTS 100
#define SMTP_CONNECT_TIMEOUT_MS 30000L
#define SMTP_IDLE_TIMEOUT_S 60L
#define SMTP_ADDR_MAX 320

struct smtp_job {
	struct task_job base; /* must be first */
	char url[300];	      /* smtp://host:port or smtps://…, no user info */
	bool starttls, debug;
	char *ca_pem; /* the CAs that alone are trusted, or NULL: the system's */
	size_t ca_len;
	char *user, *password; /* password wiped when done */
	char from[SMTP_ADDR_MAX];
	struct curl_slist *rcpt;
	size_t n_rcpt;
	struct buf msg;
	size_t sent;
	char msg_id[400];
	CURL *h;
	int rc;
	struct err e;
};

static void job_free(struct task_job *base)
{
	struct smtp_job *j = (struct smtp_job *)base;
	if (j->h)
		curl.easy_cleanup(j->h);
	if (j->rcpt)
		curl.slist_free_all(j->rcpt);
	if (j->password) {
		sodium_memzero(j->password, strlen(j->password));
		free(j->password);
	}
	free(j->user);
	free(j->ca_pem);
	buf_cleanup(&j->msg);
	free(j);
}

/* A map parameter: the step's input, else a flow variable, under either name; BORROWED. */
static json_t *param_map(struct task_ctx *t, json_t *in, const char *a, const char *b)
{
	json_t *v = json_object_get(in, a);
	if (!json_is_object(v))
		v = json_object_get(in, b);
	if (!json_is_object(v))
		v = scope_get(t->t, a);
	if (!json_is_object(v))
		v = scope_get(t->t, b);
	return json_is_object(v) ? v : NULL;
}

/* TLS of p: ssl (smtps from the first byte), else starttls (required); the CAs to trust:
 * caFile (a file of the working directory) or caPem (its text, as the server's defaults
 * carry --smtp-ca-file).  The certificate is always checked. */
static int tls_of(struct task_ctx *t, struct smtp_job *j, json_t *p, bool *ssl, struct err *e)
{
	const char *file, *pem;
	bool tls = false;

	*ssl = false;
	if (json_object_get(p, "starttls") && value_to_bool(json_object_get(p, "starttls"), &tls, e) < 0) {
		err_prefix(e, "'smtpParams.starttls'");
		return -1;
	}
	if (json_object_get(p, "ssl") && value_to_bool(json_object_get(p, "ssl"), ssl, e) < 0) {
		err_prefix(e, "'smtpParams.ssl'");
		return -1;
	}
	j->starttls = tls && !*ssl;
	if (task_opt_str(p, "caFile", &file, e) < 0 || task_opt_str(p, "caPem", &pem, e) < 0)
		return -1;
	if (file) {
		if (!(j->ca_pem = path_read_beneath(t->h->workdir, file, SMTP_MAX_TEMPLATE_BYTES, &j->ca_len, e))) {
			err_prefix(e, "'smtpParams.caFile' '%.200s'", file);
			return -1;
		}
	} else if (pem) {
		j->ca_len = strlen(pem);
		if (!(j->ca_pem = strdup(pem)))
			return oom_fail(e);
	}
	if (j->ca_pem && !memmem(j->ca_pem, j->ca_len, "-----BEGIN CERTIFICATE-----", 27))
		return err_set(e, ERR_INVALID, "'smtpParams.caFile' holds no PEM certificate");
	return 0;
}

static int server_of(struct task_ctx *t, struct smtp_job *j, json_t *p, struct err *e)
{
	const char *host, *user, *pw, *scheme;
	json_t *port = json_object_get(p, "port");
	int64_t n;
	bool ssl;

	if (task_opt_str(p, "host", &host, e) < 0 || task_opt_str(p, "username", &user, e) < 0 ||
	    task_opt_str(p, "password", &pw, e) < 0)
		return -1;
	if (!host || !*host || strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") !=
				   strlen(host))
		return err_set(e, ERR_INVALID, "'smtpParams.host' must be a host name or address, got '%.100s'",
			       host ? host : "");
	if (!port || value_to_long(port, &n, e) < 0 || n < 1 || n > 65535)
		return err_set(e, ERR_INVALID, "'smtpParams.port' must be a port number (1-65535)");
	if (tls_of(t, j, p, &ssl, e) < 0)
		return -1;
	scheme = ssl ? "smtps" : "smtp";
	if (str_fmt(j->url, sizeof j->url, strchr(host, ':') ? "%s://[%s]:%lld" : "%s://%s:%lld", scheme, host,
		    (long long)n))
		return err_set(e, ERR_INVALID, "'smtpParams.host' is too long");
	if ((user && !(j->user = strdup(user))) || (pw && !(j->password = strdup(pw))))
		return oom_fail(e);
	return 0;
}

/* The server: the flow's smtpParams/smtp, else the server's defaults. */
static int parse_server(struct task_ctx *t, json_t *in, struct smtp_job *j, struct err *e)
{
	json_t *p = param_map(t, in, "smtpParams", "smtp");
	bool own = p != NULL;
	if (!p && !(p = task_defaults_get(t->h, "smtpParams")))
		return err_set(e, ERR_INVALID,
			       "smtp: no SMTP server: give 'smtpParams' (host, port), or start the server with "
			       "--smtp-host");
	if (own && t->h->ops->sensitive && json_is_string(json_object_get(p, "password")))
		t->h->ops->sensitive(t->h->ctx, json_string_value(json_object_get(p, "password")), true);
	return server_of(t, j, p, e);
}

/* A comma-separated string or a list of strings, as an array of trimmed addresses (NEW). */
static json_t *addresses(json_t *mail, const char *key, bool required, struct err *e)
{
	json_t *v = json_object_get(mail, key), *out = json_array(), *item;
	size_t i;
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		while (*s) {
			size_t n = strcspn(s, ",");
			const char *a = s, *z = s + n;
			while (a < z && (*a == ' ' || *a == '\t'))
				a++;
			while (z > a && (z[-1] == ' ' || z[-1] == '\t'))
				z--;
			if (z > a)
				json_array_append_new(out, json_stringn(a, (size_t)(z - a)));
			s += n + (s[n] == ',');
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item)
		{
			if (!json_is_string(item)) {
				json_decref(out);
				err_set(e, ERR_INVALID, "'%s' - expected a list of string values, got %s", key,
					value_class_name(item));
				return NULL;
			}
			json_array_append(out, item);
		}
	} else if (v && !json_is_null(v)) {
		json_decref(out);
		err_set(e, ERR_INVALID, "'%s' - expected a single string value or a list of strings", key);
		return NULL;
	}
	if (required && json_array_size(out) == 0) {
		json_decref(out);
		err_set(e, ERR_INVALID, "'%s' - expected a single string value or a list of strings", key);
		return NULL;
	}
	return out;
}

/* Every address of list joins the envelope's recipients. */
static int add_rcpts(struct smtp_job *j, json_t *list, struct err *e)
{
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		char addr[SMTP_ADDR_MAX + 2], env[SMTP_ADDR_MAX + 4];
		struct curl_slist *l;
		if (mail_address(json_string_value(v), addr, SMTP_ADDR_MAX, e) < 0)
			return -1;
		if (str_fmt(env, sizeof env, "<%s>", addr) || !(l = curl.slist_append(j->rcpt, env)))
			return oom_fail(e);
		j->rcpt = l;
		j->n_rcpt++;
	}
	return 0;
}

/* Addresses that go into a header only (replyTo): checked like the recipients. */
static int check_addresses(json_t *list, struct err *e)
{
	char addr[SMTP_ADDR_MAX];
	size_t i;
	json_t *v;
	json_array_foreach(list, i, v)
	{
		if (mail_address(json_string_value(v), addr, sizeof addr, e) < 0)
			return -1;
	}
	return 0;
}

/* The template's name and extra parameters: "file" or {name, params}. */
static int template_of(json_t *mail, const char **name, json_t **params, struct err *e)
{
	json_t *v = json_object_get(mail, "template");
	*name = NULL;
	*params = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		*name = json_string_value(v);
		return 0;
	}
	if (!json_is_object(v) || !json_is_string(json_object_get(v, "name")))
		return err_set(e, ERR_INVALID, "'mail.template' must be a file name or {name, params}");
	*name = json_string_value(json_object_get(v, "name"));
	*params = json_object_get(v, "params");
	if (*params && !json_is_object(*params))
		return err_set(e, ERR_INVALID, "'mail.template.params' must be a map");
	return 0;
}

/* The body: the rendered template, or `message`.  *body is NEW. */
static int body_of(struct task_ctx *t, json_t *mail, char **body, size_t *len, bool *html, struct err *e)
{
	const char *name, *msg;
	json_t *params, *scope;
	char *tpl;
	size_t tl;

	if (template_of(mail, &name, &params, e) < 0)
		return -1;
	if (!name) {
		if (task_opt_str(mail, "message", &msg, e) < 0)
			return -1;
		if (!msg)
			return err_set(e, ERR_INVALID, "'mail.message' (or 'mail.template') is required");
		*html = false;
		*len = strlen(msg);
		return (*body = strdup(msg)) ? 0 : oom_fail(e);
	}
	if (!(tpl = path_read_beneath(t->h->workdir, name, SMTP_MAX_TEMPLATE_BYTES, &tl, e))) {
		err_prefix(e, "template '%.200s'", name);
		return -1;
	}
	scope = scope_all(t->t);
	if (params)
		json_object_update(scope, params);
	*body = mustache_render(tpl, tl, scope, SMTP_MAX_MESSAGE_BYTES, len, e);
	json_decref(scope);
	free(tpl);
	if (!*body) {
		err_prefix(e, "template '%.200s'", name);
		return -1;
	}
	tl = strlen(name);
	while (tl && (name[tl - 1] == ' ' || name[tl - 1] == '\t' || name[tl - 1] == '\n'))
		tl--;
	*html = tl >= 5 && memcmp(name + tl - 5, ".html", 5) == 0;
	return 0;
}

static int attachment_of(json_t *v, struct mail_attachment *a, struct err *e)
{
	const char *disp;
	if (json_is_string(v)) {
		a->path = json_string_value(v);
		return 0;
	}
	if (!json_is_object(v))
		return err_set(e, ERR_INVALID, "invalid 'attachments' item type - expected a string or map, got %s",
			       value_class_name(v));
	if (task_opt_str(v, "path", &a->path, e) < 0 || task_opt_str(v, "name", &a->name, e) < 0 ||
	    task_opt_str(v, "description", &a->description, e) < 0 ||
	    task_opt_str(v, "disposition", &disp, e) < 0)
		return -1;
	if (!a->path)
		return err_set(e, ERR_INVALID, "'attachments': an item without 'path'");
	if (disp && strcmp(disp, "attachment") != 0 && strcmp(disp, "inline") != 0)
		return err_set(e, ERR_INVALID,
			       "invalid 'attachment' disposition value: '%.50s', expected: attachment or inline", disp);
	a->inline_ = disp && strcmp(disp, "inline") == 0;
	return 0;
}

static int attachments_of(json_t *mail, struct mail_attachment *att, size_t *n, struct err *e)
{
	json_t *list = json_object_get(mail, "attachments"), *v;
	size_t i;
	*n = 0;
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return err_set(e, ERR_INVALID, "'mail.attachments' must be a list");
	if (json_array_size(list) > SMTP_MAX_ATTACHMENTS)
		return err_set(e, ERR_INVALID, "'mail.attachments': more than %d files", SMTP_MAX_ATTACHMENTS);
	json_array_foreach(list, i, v)
	{
		if (json_is_null(v))
			continue;
		att[*n] = (struct mail_attachment){0};
		if (attachment_of(v, &att[*n], e) < 0)
			return -1;
		(*n)++;
	}
	return 0;
}

/* The message of mail into j->msg, its recipients into j->rcpt. */
static int parse_mail(struct task_ctx *t, json_t *mail, struct smtp_job *j, struct err *e)
{
	struct mail_attachment att[SMTP_MAX_ATTACHMENTS];
	struct mail_message m = {.workdir = t->h->workdir, .att = att};
	json_t *bcc = NULL;
	char *body = NULL;
	int rc = -1;

	if (task_opt_str(mail, "from", &m.from, e) < 0 || task_opt_str(mail, "subject", &m.subject, e) < 0)
		return -1;
	if (!m.from)
		return err_set(e, ERR_INVALID, "'mail.from' is required");
	if (mail_address(m.from, j->from, sizeof j->from, e) < 0) {
		err_prefix(e, "'mail.from'");
		return -1;
	}
	if (!(m.to = addresses(mail, "to", true, e)) || !(m.cc = addresses(mail, "cc", false, e)) ||
	    !(bcc = addresses(mail, "bcc", false, e)) || !(m.reply_to = addresses(mail, "replyTo", false, e)))
		goto out;
	if (add_rcpts(j, m.to, e) < 0 || add_rcpts(j, m.cc, e) < 0 || add_rcpts(j, bcc, e) < 0 ||
	    check_addresses(m.reply_to, e) < 0 ||
	    attachments_of(mail, att, &m.n_att, e) < 0 || body_of(t, mail, &body, &m.body_len, &m.html, e) < 0)
		goto out;
	m.body = body;
	rc = mail_message_build(&m, &j->msg, j->msg_id, sizeof j->msg_id, e);
	if (rc < 0 && e->code == ERR_TOO_LARGE)
		err_set(e, ERR_TOO_LARGE, "smtp: the message is larger than %u bytes", SMTP_MAX_MESSAGE_BYTES);
out:
	free(body);
	json_decref(m.to);
	json_decref(m.cc);
	json_decref(bcc);
	json_decref(m.reply_to);
	return rc;
}

static size_t on_read(char *p, size_t size, size_t n, void *ud)
{
	struct smtp_job *j = ud;
	size_t want = size * n, left = j->msg.len - j->sent;
	if (want > left)
		want = left;
	memcpy(p, j->msg.data + j->sent, want);
	j->sent += want;
	return want;
}

static void set_options(struct smtp_job *j, char *errbuf)
{
	CURL *h = j->h;
	curl.easy_setopt(h, CURLOPT_URL, j->url);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, SMTP_CONNECT_TIMEOUT_MS);
	curl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, SMTP_IDLE_TIMEOUT_S);
	if (j->starttls)
		curl.easy_setopt(h, CURLOPT_USE_SSL, (long)CURLUSESSL_ALL);
	if (j->ca_pem) {
		struct curl_blob ca = {j->ca_pem, j->ca_len, CURL_BLOB_COPY};
		curl.easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
	}
	if (j->user)
		curl.easy_setopt(h, CURLOPT_USERNAME, j->user);
	if (j->password)
		curl.easy_setopt(h, CURLOPT_PASSWORD, j->password);
	curl.easy_setopt(h, CURLOPT_MAIL_FROM, j->from);
	curl.easy_setopt(h, CURLOPT_MAIL_RCPT, j->rcpt);
	curl.easy_setopt(h, CURLOPT_UPLOAD, 1L);
	curl.easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)j->msg.len);
	curl.easy_setopt(h, CURLOPT_READFUNCTION, on_read);
	curl.easy_setopt(h, CURLOPT_READDATA, j);
}

/* On the job's thread: only the job's own data. */
static void job_run(struct task_job *base)
{
	struct smtp_job *j = (struct smtp_job *)base;
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode rc;

	set_options(j, errbuf);
	rc = curl.easy_perform(j->h);
	if (rc != CURLE_OK)
		j->rc = err_set(&j->e, ERR_UNAVAILABLE, "smtp: sending to %s failed: %s", j->url,
				*errbuf ? errbuf : curl.easy_strerror(rc));
}

static int job_finish(struct task_job *base, struct task_ctx *t, json_t **out, struct err *e)
{
	struct smtp_job *j = (struct smtp_job *)base;

	*out = NULL;
	if (j->rc < 0) {
		*e = j->e;
		return -1;
	}
	vm_log(t->vm, FLOW_INFO, "send -> done, msgId: %s", j->msg_id);
	*out = json_pack("{s:b}", "ok", 1);
	return *out ? 0 : oom_fail(e);
}

static int smtp_execute(struct task_ctx *t, json_t *in, json_t **out, struct err *e)
{
	struct smtp_job *j;
	json_t *mail;
	bool debug = false;

	*out = NULL;
	if (!json_is_object(in))
		return err_set(e, ERR_INVALID, "the smtp task needs an 'in' map");
	if (json_object_get(in, "debug") && value_to_bool(json_object_get(in, "debug"), &debug, e) < 0)
		return -1;
	if (!(mail = param_map(t, in, "mail", "mailParams")))
		return err_set(e, ERR_INVALID, "'mail' param is required");
	if (curl_api_load(e) < 0) {
		err_prefix(e, "the smtp task needs libcurl");
		return -1;
	}
	if (!(j = calloc(1, sizeof *j)))
		return oom_fail(e);
	j->base = (struct task_job){job_run, job_finish, job_free};
	j->debug = debug;
	buf_init(&j->msg, SMTP_MAX_MESSAGE_BYTES);
	if (!(j->h = curl.easy_init())) {
		job_free(&j->base);
		return oom_fail(e);
	}
	if (parse_server(t, in, j, e) < 0 || parse_mail(t, mail, j, e) < 0) {
		job_free(&j->base);
		return -1;
	}
	if (debug)
		vm_log(t->vm, FLOW_INFO, "smtp: %s, from %s, %zu recipients, %zu bytes", j->url, j->from, j->n_rcpt,
		       j->msg.len);
	t->job = &j->base;
	return 0;
}

static const struct task_method no_methods[] = {{NULL, NULL, 0, 0}};

const struct task_def task_smtp = {"smtp", smtp_execute, no_methods, false, false};
