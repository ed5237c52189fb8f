#ifndef ACCORD_HTTP_MULTIPART_H
#define ACCORD_HTTP_MULTIPART_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/str.h"

/* multipart/form-data (RFC 7578 over RFC 2046) parsed from a complete body in memory.
 *
 * Every slice in the result points into the body or the Content-Type value given to
 * multipart_parse; nothing is copied, so both must outlive the result.
 *
 * Accepted: a boundary parameter (token or quoted-string, 1-70 characters) on a media type
 * `multipart/form-data` (any case); an optional preamble; CRLF line ends; linear white
 * space after a delimiter; per part the headers Content-Disposition (required, type
 * form-data, parameter `name` required, `filename` optional; values as token or
 * quoted-string, quoted-pair escapes kept verbatim in the slice) and Content-Type
 * (optional; absent means text/plain); other headers are ignored.  Part bodies are
 * binary-safe, except that a NUL byte is refused (ERR_INVALID) in part headers and in
 * text fields (no filename, text/plain), whose values are used as C strings.  Anything after the close delimiter (epilogue) is ignored.
 *
 * Limits: at most limits.multipart_parts parts (ERR_TOO_LARGE), at most
 * MULTIPART_HEADER_MAX bytes of headers per part (ERR_INVALID).  A Content-Type that is
 * not multipart/form-data is ERR_MEDIA_TYPE; any other malformation is ERR_INVALID with a
 * message naming the problem and the part number. */

#define MULTIPART_HEADER_MAX 8192
#define MULTIPART_BOUNDARY_MAX 70

struct multipart_part {
	struct str name;     /* from Content-Disposition, as sent */
	struct str filename; /* valid when has_filename */
	bool has_filename;
	struct str content_type; /* empty when the part had no Content-Type */
	struct str data;	 /* the body of the part */
};

struct multipart {
	struct multipart_part *parts; /* owned array */
	size_t n_parts;
};

/* Parses body according to content_type (the Content-Type header value).  On success *mp
 * holds the parts in body order (release with multipart_cleanup); on failure *mp is empty. */
int multipart_parse(struct str content_type, struct str body, struct multipart *mp, struct err *e) WUR;

/* Frees the part array (not the body); mp may be zeroed. */
void multipart_cleanup(struct multipart *mp);

/* True when content_type (a header value) names multipart/form-data. */
bool multipart_is_form_data(struct str content_type);

/* The first part whose name equals `name` exactly (case-sensitive), or NULL.  For file
 * parts such as `data`, `public`, `private`: any content type is accepted. */
const struct multipart_part *multipart_find(const struct multipart *mp, const char *name);

/* Concord's getString: the first part whose name matches case-insensitively, its value
 * trimmed of ASCII white space; an empty value counts as absent.  Returns true and sets
 * *out (a slice into the body) when present. */
bool multipart_text(const struct multipart *mp, const char *name, struct str *out);

/* Concord's Boolean.parseBoolean over multipart_text: true only for "true" in any case. */
bool multipart_bool(const struct multipart *mp, const char *name);

/* True when the part's media type is text/plain (parameters such as charset ignored) or
 * the part has no Content-Type. */
bool multipart_part_is_text(const struct multipart_part *p);

#endif
