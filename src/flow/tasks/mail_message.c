#include "base/oom.h"
#include "flow/tasks/mail_message.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"

#define B64_LINE 76
/* Raw bytes per encoded word of a subject: 45 give 60 Base64 characters, within the 75
 * RFC 2047 allows with "=?UTF-8?B?" and "?=". */
#define WORD_BYTES 45

int mail_address(const char *addr, char *out, size_t cap, struct err *e)
{
	const char *lt = strchr(addr, '<'), *gt = strrchr(addr, '>'), *p = addr, *end;
	size_t n;

	if (strpbrk(addr, "\r\n"))
		return err_set(e, ERR_INVALID, "invalid address '%.100s': it has a line break", addr);
	if (lt || gt) {
		if (!lt || !gt || gt < lt || strchr(lt + 1, '<') || gt[1] != '\0')
			return err_set(e, ERR_INVALID, "invalid address '%.100s'", addr);
		p = lt + 1;
		end = gt;
	} else {
		end = addr + strlen(addr);
	}
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	n = (size_t)(end - p);
	if (n == 0 || n >= cap || !memchr(p, '@', n) || p[0] == '@' || end[-1] == '@')
		return err_set(e, ERR_INVALID, "invalid address '%.100s'", addr);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)p[i] <= ' ' || strchr("<>,;\"()", p[i]))
			return err_set(e, ERR_INVALID, "invalid address '%.100s'", addr);
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

static bool ascii_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || (unsigned char)*s > '~')
			return false;
	return true;
}

/* Base64 of p in lines of 76 characters. */
static int put_b64(struct buf *b, const void *p, size_t n, struct err *e)
{
	char *enc = b64_encode(p, n, B64_STD);
	size_t len;
	int rc = 0;
	if (!enc)
		return oom_fail(e);
	len = strlen(enc);
	for (size_t at = 0; at < len && rc == 0; at += B64_LINE) {
		size_t k = len - at < B64_LINE ? len - at : B64_LINE;
		rc = buf_append(b, enc + at, k, e) < 0 || buf_append_str(b, "\r\n", e) < 0 ? -1 : 0;
	}
	free(enc);
	return rc;
}

/* The subject as it is (ASCII) or as encoded words cut at character boundaries. */
static int put_subject(struct buf *b, const char *s, struct err *e)
{
	size_t len = strlen(s), at = 0;
	if (buf_append_str(b, "Subject: ", e) < 0)
		return -1;
	if (ascii_printable(s))
		return buf_printf(b, e, "%s\r\n", s);
	while (at < len) {
		size_t k = len - at < WORD_BYTES ? len - at : WORD_BYTES;
		char *enc;
		int rc;
		/* never between the bytes of one UTF-8 character */
		while (at + k < len && k > 1 && ((unsigned char)s[at + k] & 0xC0) == 0x80)
			k--;
		if (!(enc = b64_encode(s + at, k, B64_STD)))
			return oom_fail(e);
		rc = buf_printf(b, e, "%s=?UTF-8?B?%s?=", at ? "\r\n " : "", enc);
		free(enc);
		if (rc < 0)
			return -1;
		at += k;
	}
	return buf_append_str(b, "\r\n", e);
}

/* "Name: a, b, c" folded after each comma. */
static int put_list(struct buf *b, const char *name, json_t *list, struct err *e)
{
	size_t i;
	json_t *v;
	if (json_array_size(list) == 0)
		return 0;
	if (buf_printf(b, e, "%s: ", name) < 0)
		return -1;
	json_array_foreach(list, i, v)
	{
		if (buf_printf(b, e, "%s%s", i ? ",\r\n " : "", json_string_value(v)) < 0)
			return -1;
	}
	return buf_append_str(b, "\r\n", e);
}

static int put_date(struct buf *b, struct err *e)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	return buf_printf(b, e, "Date: %s, %d %s %d %02d:%02d:%02d +0000\r\n", days[tm.tm_wday], tm.tm_mday,
			  months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static int put_headers(const struct mail_message *m, struct buf *b, char *msg_id, size_t cap, struct err *e)
{
	char uuid[UUID_STR_LEN];
	const char *at = strrchr(m->from, '@');
	size_t dl = at ? strcspn(at + 1, ">") : 0;

	uuid_v4(uuid);
	if (str_fmt(msg_id, cap, "<%s@%.*s>", uuid, dl ? (int)dl : 6, dl ? at + 1 : "accord"))
		return err_set(e, ERR_INVALID, "the sender's domain is too long");
	if (put_date(b, e) < 0 || buf_printf(b, e, "From: %s\r\n", m->from) < 0 || put_list(b, "To", m->to, e) < 0 ||
	    put_list(b, "Cc", m->cc, e) < 0 || put_list(b, "Reply-To", m->reply_to, e) < 0 ||
	    buf_printf(b, e, "Message-ID: %s\r\n", msg_id) < 0 || (m->subject && put_subject(b, m->subject, e) < 0))
		return -1;
	return buf_append_str(b, "MIME-Version: 1.0\r\n", e);
}

static int put_body(const struct mail_message *m, struct buf *b, struct err *e)
{
	if (buf_printf(b, e,
		       "Content-Type: text/%s; charset=UTF-8\r\n"
		       "Content-Transfer-Encoding: base64\r\n\r\n",
		       m->html ? "html" : "plain") < 0)
		return -1;
	return put_b64(b, m->body, m->body_len, e);
}

static const char *content_type(const char *name)
{
	static const char *const types[][2] = {
	    {".txt", "text/plain"},	{".html", "text/html"},	      {".htm", "text/html"},
	    {".csv", "text/csv"},	{".json", "application/json"}, {".xml", "application/xml"},
	    {".pdf", "application/pdf"}, {".zip", "application/zip"},  {".gz", "application/gzip"},
	    {".png", "image/png"},	{".jpg", "image/jpeg"},	      {".jpeg", "image/jpeg"},
	    {".gif", "image/gif"},	{".svg", "image/svg+xml"},     {".yml", "application/yaml"},
	    {".yaml", "application/yaml"}, {".log", "text/plain"}};
	const char *dot = strrchr(name, '.');
	for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
		if (cstr_ieq(dot, types[i][0]))
			return types[i][1];
	return "application/octet-stream";
}

/* filename="x" for plain ASCII names, else filename*=UTF-8''percent-encoded (RFC 2231). */
static int put_filename(struct buf *b, const char *name, struct err *e)
{
	if (ascii_printable(name) && !strpbrk(name, "\"\\"))
		return buf_printf(b, e, "; filename=\"%s\"", name);
	if (buf_append_str(b, "; filename*=UTF-8''", e) < 0)
		return -1;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		int rc = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
				 strchr("-._~", *p)
			     ? buf_append_char(b, (char)*p, e)
			     : buf_printf(b, e, "%%%02X", *p);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int put_attachment(const struct mail_message *m, const struct mail_attachment *a, const char *boundary,
			  struct buf *b, struct err *e)
{
	const char *name = a->name && *a->name ? a->name : strrchr(a->path, '/') ? strrchr(a->path, '/') + 1 : a->path;
	size_t len = 0;
	char *data;
	int rc = -1;

	if (strpbrk(name, "\r\n") || (a->description && strpbrk(a->description, "\r\n")))
		return err_set(e, ERR_INVALID, "attachment '%.100s': a name or description with a line break", a->path);
	if (!(data = path_read_beneath(m->workdir, a->path, b->max, &len, e))) {
		err_prefix(e, "attachment '%.200s'", a->path);
		return -1;
	}
	if (buf_printf(b, e, "\r\n--%s\r\nContent-Type: %s\r\nContent-Transfer-Encoding: base64\r\n", boundary,
		       content_type(name)) < 0 ||
	    buf_printf(b, e, "Content-Disposition: %s", a->inline_ ? "inline" : "attachment") < 0 ||
	    put_filename(b, name, e) < 0 || buf_append_str(b, "\r\n", e) < 0 ||
	    (a->description && *a->description && ascii_printable(a->description) &&
	     buf_printf(b, e, "Content-Description: %s\r\n", a->description) < 0) ||
	    buf_append_str(b, "\r\n", e) < 0 || put_b64(b, data, len, e) < 0)
		goto out;
	rc = 0;
out:
	free(data);
	return rc;
}

int mail_message_build(const struct mail_message *m, struct buf *out, char *msg_id, size_t msg_id_cap,
		       struct err *e)
{
	char boundary[64], rnd[17];
	unsigned char raw[8];

	if (strpbrk(m->from, "\r\n") || (m->subject && strpbrk(m->subject, "\r\n")))
		return err_set(e, ERR_INVALID, "'from' and 'subject' must be one line each");
	if (put_headers(m, out, msg_id, msg_id_cap, e) < 0)
		return -1;
	if (m->n_att == 0)
		return put_body(m, out, e);
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(rnd, sizeof rnd, raw, sizeof raw);
	if (str_fmt(boundary, sizeof boundary, "=_accord_%s", rnd))
		return err_set(e, ERR_INTERNAL, "boundary too long");
	if (buf_printf(out, e, "Content-Type: multipart/mixed; boundary=\"%s\"\r\n\r\n--%s\r\n", boundary,
		       boundary) < 0 ||
	    put_body(m, out, e) < 0)
		return -1;
	for (size_t i = 0; i < m->n_att; i++)
		if (put_attachment(m, &m->att[i], boundary, out, e) < 0)
			return -1;
	return buf_printf(out, e, "\r\n--%s--\r\n", boundary);
}
