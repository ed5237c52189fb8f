#include "base/limits.h"

struct limits limits;

void limits_defaults(void)
{
	limits = (struct limits){
	    .http_header_bytes = 32 * 1024,
	    .http_body_bytes = 1024 * 1024,
	    .http_upload_bytes = 64 * 1024 * 1024,
	    .http_connections = 1024,
	    .http_timeout_s = 60,
	    .multipart_parts = 256,
	    .json_depth = 64,
	    .store_value_bytes = 1000 * 1000 * 1000,
	    .secret_bytes = 1024 * 1024,
	    .list_default = 100,
	    .list_max = 1000,
	    .flow_call_depth = 128,
	    .flow_steps = 10 * 1000 * 1000,
	    .flow_loop_items = 100 * 1000,
	    .flow_expr_bytes = 64 * 1024,
	    .flow_expr_depth = 128,
	    .flow_yaml_bytes = 4 * 1024 * 1024,
	    .flow_yaml_nodes = 200 * 1000,
	    .flow_threads = 1024,
	    .archive_entries = 10 * 1000,
	    .archive_bytes = 512ULL * 1024 * 1024,
	    .archive_ratio = 100,
	    .process_log_bytes = 256ULL * 1024 * 1024,
	    .out_bytes = 4ULL * 1024 * 1024,
	    .wal_bytes = 64ULL * 1024 * 1024,
	    .process_timeout_s = 0,
	    .process_children = 1000,
	    .process_depth = 16,
	    .repo_files = 10 * 1000,
	    .repo_bytes = 512ULL * 1024 * 1024,
	    .http_task_request_bytes = 64 * 1024 * 1024,
	    .http_task_response_bytes = 64 * 1024 * 1024,
	    .query_timeout_ms = 5000,
	    .query_rows = 10000,
	    .query_concurrency = 2,
	    .query_per_user = 2,
	    .inventory_bulk_items = 1000,
	    .log_followers = 512,
	    .log_followers_per_user = 16,
	    .log_followers_per_process = 64,
	};
}
