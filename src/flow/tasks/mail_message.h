#ifndef ACCORD_FLOW_TASKS_MAIL_MESSAGE_H
#define ACCORD_FLOW_TASKS_MAIL_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

/* An Internet message (RFC 5322, MIME) for the `smtp` task: headers, a UTF-8 text or HTML
 * body, files of the working directory as attachments.  Lines end in CRLF; the body and the
 * attachments are Base64; a non-ASCII subject is an RFC 2047 encoded word, a non-ASCII file
 * name an RFC 2231 parameter. */

struct mail_attachment {
	const char *path;	 /* relative to the working directory */
	const char *name;	 /* file name shown; NULL: the last part of path */
	const char *description; /* Content-Description, may be NULL */
	bool inline_;		 /* Content-Disposition: inline */
};

struct mail_message {
	const char *workdir;
	const char *from;		 /* as written: "a@b" or "Name <a@b>" */
	json_t *to, *cc, *reply_to;	 /* arrays of such strings (BORROWED); cc, reply_to may be empty */
	const char *subject;		 /* NULL: none */
	const char *body;
	size_t body_len;
	bool html;
	const struct mail_attachment *att;
	size_t n_att;
};

/* Writes the whole message into out (whose max bounds it: ERR_TOO_LARGE past it) and its
 * Message-ID ("<…>") into msg_id.  Fails with e set for an unreadable attachment (the
 * message names its path) or a header value with a line break. */
int mail_message_build(const struct mail_message *m, struct buf *out, char *msg_id, size_t msg_id_cap,
		       struct err *e) WUR;

/* The address of "a@b" or "Name <a@b>" (what the SMTP envelope takes) into out; ERR_INVALID
 * naming addr when it is not one (no '@', blanks, line breaks, unbalanced '<'). */
int mail_address(const char *addr, char *out, size_t cap, struct err *e) WUR;

#endif
