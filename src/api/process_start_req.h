#ifndef ACCORD_API_PROCESS_START_REQ_H
#define ACCORD_API_PROCESS_START_REQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/memdir.h"
#include "http/multipart.h"

/* The multipart body of POST /api/v1/process (spec "Start parts", reference §6.2),
 * turned into what the start handler needs.  Two steps, so that nothing touches the disk
 * before the caller has checked access:
 *
 *   start_req_parse        pure: reads every part, builds the configuration and the
 *                          typed fields, checks what can be checked without the store;
 *   start_req_materialize  writes the file parts and the extracted archive into the
 *                          (existing, empty) working folder.
 *
 * Configuration (`cfg`), lowest precedence first: the `request` part (a JSON object),
 * then every text/plain part (or part without a Content-Type) as a string with dots
 * nesting ("arguments.x.y" → {"arguments":{"x":{"y":"v"}}}), values trimmed.  The
 * special text parts (org, orgId, project, projectId, repo, repoId, repoBranchOrTag,
 * repoCommitId, entryPoint, activeProfiles, out, tags, startAt, processTimeout,
 * suspendTimeout, parentInstanceId) land in cfg like all text parts and are also
 * parsed into the typed fields below; the same keys given in `request` count too (a
 * text part wins).  `meta` must be a JSON part (not text/plain) holding an object.
 *
 * Every other part is a file: `archive` (a ZIP, extracted with limits.archive_*), or a
 * file stored under its part name (a relative path; "..", absolute names, backslashes,
 * NUL, empty components → ERR_INVALID "Invalid attachment name: <n>").  A file part
 * named like a process definition (concord.yml, .concord.yml, concord.yaml,
 * .concord.yaml, or any concord/<name>.yml or .yaml) or an archive makes the request a
 * raw payload.
 *
 * Errors are ERR_INVALID (400) with a message naming the part and what is wrong:
 * invalid JSON in request/meta, a request that is not an object, a meta that is text or
 * not an object, startAt not ISO-8601 / without offset / in the past (relative to
 * `now`), a timeout that is neither a number of seconds >= 0 nor an ISO-8601 duration
 * (PnDTnHnMnS), a parentInstanceId that is not a UUID, `sync=true` (Concord's message),
 * too many tags; ERR_TOO_LARGE for archive limits.
 *
 * Details decided here:
 *  - Special text parts are matched in any case (Concord's getString) and stored in cfg
 *    under their canonical spelling ("ORG" → cfg.org).  A special value that is empty
 *    after trimming counts as absent (cfg keeps the "").
 *  - `request` must be a non-text part: as text/plain it is refused like `meta`
 *    ("Expected a JSON object in 'request', got: …").
 *  - orgId, projectId and repoId must be UUIDs too (400 instead of Concord's 500).
 *  - An `out` text part adds its names to those of the request's `out` (Concord's merge).
 *  - `activeProfiles`, `out` and `tags` are comma-separated strings or, from `request`,
 *    lists of strings; items trimmed, empties dropped; tags made unique, at most
 *    START_REQ_TAGS_MAX.
 *  - start_req_materialize extracts the archive first, then writes the file parts with
 *    O_CREAT|O_EXCL|O_NOFOLLOW through folders opened with O_NOFOLLOW (created 0700, files
 *    0600).  What is already there wins, as in Concord where the archive replaces files:
 *    a file part whose path exists (from the archive, an earlier part of the same name, or
 *    anything planted, links included) or whose folder is not a folder is not written. */

#define START_REQ_TAGS_MAX 100 /* distinct tags of one process */

struct start_req {
	json_t *cfg; /* owned: the configuration object */
	/* Borrowed from cfg (NULL when absent): */
	const char *org, *org_id, *project, *project_id, *repo, *repo_id, *repo_branch_or_tag, *repo_commit_id;
	const char *entry_point;
	const char *parent_instance_id;
	json_t *active_profiles; /* owned array of strings; NULL when not given */
	json_t *out;		 /* owned array of variable names; NULL when not given */
	bool out_from_part;	 /* `out` came as a text part */
	json_t *tags;		 /* owned array of unique trimmed strings; NULL when not given */
	json_t *meta;		 /* owned object; NULL when not given */
	int64_t start_at;	 /* ms since the epoch; 0 when not given */
	int64_t timeout_s;	 /* processTimeout in seconds; -1 when not given */
	int64_t suspend_timeout_s;
	bool raw_payload; /* an archive or a definition file was uploaded */
	bool has_archive;
};

/* now: the current time in ms (for startAt).  On failure *r is cleaned up. */
int start_req_parse(const struct multipart *mp, int64_t now, struct start_req *r, struct err *e) WUR;

/* The same from a configuration built otherwise (the start link's query): takes cfg (an
 * object) over, also on failure, and reads the typed fields from it with the same rules. */
int start_req_from_cfg(json_t *cfg, int64_t now, struct start_req *r, struct err *e) WUR;

/* Writes the file parts and extracts the archive into dir (which exists).  overlay: dir
 * holds a repository checkout that the upload overlays — the archive replaces files as
 * always, and so do the file parts (instead of leaving existing paths alone). */
int start_req_materialize(const struct multipart *mp, const struct start_req *r, const char *dir, bool overlay,
			  struct err *e) WUR;

/* The file parts into a folder held in memory (base/memdir.h), with the rules of
 * start_req_materialize (the first part of a path wins), for a request without an archive
 * and without a repository.  ERR_TOO_LARGE when they hold more than max bytes (the caller
 * then stages a folder). */
int start_req_files(const struct multipart *mp, uint64_t max, struct memdir *md, struct err *e) WUR;

void start_req_cleanup(struct start_req *r);

#endif
