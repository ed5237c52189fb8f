#ifndef ACCORD_BASE_LIMITS_H
#define ACCORD_BASE_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* Every size and count Accord accepts from outside has a named limit here.  The values
 * are set once at start-up (defaults below, then configuration) and read everywhere
 * through `limits`.  Each field has a configuration name: ACCORD_LIMIT_<FIELD> in the
 * environment, --limit-<field> on the command line (see cli/config.c, docs/operations.md).
 * Hitting a limit is an error that names it (HTTP 413/400, or a failed process), never a
 * crash. */

/* Bits of the RSA key pairs the server generates (--secret-key-bits), as Concord's
 * secretStore.keySize. */
#define SECRET_KEY_BITS_DEFAULT 4096

struct limits {
	/* HTTP */
	size_t http_header_bytes; /* request line + headers per connection */
	size_t http_body_bytes;	  /* JSON and other non-upload bodies */
	size_t http_upload_bytes; /* multipart uploads (process payloads, secrets) */
	size_t http_connections;  /* concurrent connections */
	unsigned http_timeout_s;  /* idle connection timeout */
	size_t multipart_parts;	  /* parts in one multipart body */
	size_t json_depth;	  /* nesting of request JSON */
	/* Database */
	size_t store_value_bytes; /* one text or blob value (SQLite's SQLITE_LIMIT_LENGTH) */
	/* Secrets */
	size_t secret_bytes;	  /* plaintext of one secret */
	unsigned secret_key_bits; /* RSA key pairs the server generates (Concord's secretStore.keySize) */
	/* Lists */
	size_t list_default; /* items per page when no limit is given */
	size_t list_max;     /* largest limit accepted */
	/* Flows */
	size_t flow_call_depth; /* nested flow calls */
	uint64_t flow_steps;	/* steps executed by one process */
	size_t flow_loop_items; /* items of one loop */
	size_t flow_expr_bytes; /* length of one expression */
	size_t flow_expr_depth; /* nesting of one expression */
	size_t flow_yaml_bytes; /* size of one YAML file */
	size_t flow_yaml_nodes; /* nodes of one YAML file */
	size_t flow_threads;	/* parallel threads of one process */
	/* Archives and processes */
	size_t archive_entries;	    /* entries in one uploaded archive */
	uint64_t archive_bytes;	    /* unpacked bytes of one archive */
	unsigned archive_ratio;	    /* unpacked / packed size */
	uint64_t process_log_bytes; /* log bytes kept per process */
	uint64_t out_bytes;	    /* a process's out variables (out.json, meta.out) */
	uint64_t wal_bytes;	    /* SQLite's write-ahead log truncated beyond this at a heartbeat */
	unsigned process_timeout_s; /* RUNNING time of a process without processTimeout (0: none) */
	size_t process_children;    /* child processes one process may start (concord start/fork) */
	size_t process_depth;	    /* generations of children below a process started by a user */
	size_t running_per_user;    /* top-level processes of one initiator STARTING/RUNNING at once (0: any) */
	size_t running_per_project; /* top-level processes of one project STARTING/RUNNING at once (0: any) */
	uint64_t project_storage_bytes; /* log and attachment bytes one project's processes keep (0: any) */
	/* Repositories */
	size_t repo_files;   /* files and folders of one checkout */
	uint64_t repo_bytes; /* bytes of the files of one checkout */
	/* The http task */
	size_t http_task_request_bytes;	 /* request body read from a file (`request: file`) */
	size_t http_task_response_bytes; /* response body + headers of one call */
	/* Inventory queries */
	unsigned query_timeout_ms; /* run time of one inventory query */
	size_t query_rows;	   /* rows returned by one inventory query */
	size_t query_concurrency;  /* inventory queries running at once (0 at start: half the HTTP workers) */
	size_t query_per_user;	   /* inventory queries one user runs at once */
	size_t json_store_bytes;   /* a JSON store's items without a maxDataSize of its own (0: unbounded) */
	/* Bulk item writes */
	size_t inventory_bulk_items; /* items of one request (inventories, JSON stores) */
	/* Live-log followers (GET …/log?follow=true) */
	size_t log_followers;		  /* in the whole server (0 at start: half the HTTP connections) */
	size_t log_followers_per_user;	  /* of one user */
	size_t log_followers_per_process; /* of one process */
};

extern struct limits limits;

/* Resets `limits` to the built-in defaults. */
void limits_defaults(void);

#endif
