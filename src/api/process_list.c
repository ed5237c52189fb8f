/* GET /api/v2/process and /api/v2/process/count (spec "List filters", reference §6.4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/process_json.h"
#include "api/process_routes.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/str.h"
#include "store/orgs.h"

#define LIST_DEFAULT_LIMIT 30
#define OUT_BUDGET_MULTIPLE 4 /* include=out: answer bytes of out variables, in limit-out-bytes */

static const char *const meta_ops[] = {
    [META_CONTAINS] = "contains",	    [META_NOT_CONTAINS] = "notContains",
    [META_EQ] = "eq",			    [META_NOT_EQ] = "notEq",
    [META_STARTS_WITH] = "startsWith",	    [META_NOT_STARTS_WITH] = "notStartsWith",
    [META_ENDS_WITH] = "endsWith",	    [META_NOT_ENDS_WITH] = "notEndsWith",
};

struct query {
	struct api_call *c;
	struct process_filter f;
	struct org org;
	struct project project;
	bool has_org, has_project;
	char key_copies[PROCESS_FILTER_MAX_META][256];
	int rc;
};

static int date_param(struct api_call *c, const char *name, int64_t *out)
{
	const char *v = http_query(c->req, name);

	*out = 0;
	if (!v || !*v)
		return 0;
	if (dt_parse_iso(v, strlen(v), true, out, name, &c->err))
		return api_recode(c, ERR_INVALID);
	return 0;
}

/* meta.<key>[.<op>]: the key is everything up to a last ".<op>" that names an operation. */
static int meta_param(struct query *q, const char *key, const char *value)
{
	const char *name = key + 5, *dot = strrchr(name, '.');
	size_t i = q->f.n_meta, klen = strlen(name);
	enum meta_op op = META_CONTAINS;

	if (i >= PROCESS_FILTER_MAX_META)
		return q->rc = api_fail(q->c, ERR_INVALID, "too many meta filters (at most %d)", PROCESS_FILTER_MAX_META);
	if (dot) {
		for (size_t k = 0; k < sizeof meta_ops / sizeof meta_ops[0]; k++)
			if (strcmp(dot + 1, meta_ops[k]) == 0) {
				op = (enum meta_op)k;
				klen = (size_t)(dot - name);
				break;
			}
	}
	if (klen == 0 || klen >= sizeof q->key_copies[i])
		return q->rc = api_fail(q->c, ERR_INVALID, "invalid meta filter '%.128s'", key);
	memcpy(q->key_copies[i], name, klen);
	q->key_copies[i][klen] = '\0';
	q->f.meta[i].key = q->key_copies[i];
	q->f.meta[i].value = value;
	q->f.meta[i].op = op;
	q->f.n_meta++;
	return 0;
}

static int each_param(void *ctx, const char *key, const char *value)
{
	struct query *q = ctx;

	if (strcmp(key, "tags") == 0) {
		if (!*value)
			return 0;
		if (q->f.n_tags >= PROCESS_FILTER_MAX_TAGS)
			return q->rc = api_fail(q->c, ERR_INVALID, "too many tags filters (at most %d)",
						PROCESS_FILTER_MAX_TAGS);
		q->f.tags[q->f.n_tags++] = value;
	} else if (strncmp(key, "meta.", 5) == 0) {
		return meta_param(q, key, value);
	}
	return 0;
}

static int org_and_project(struct query *q)
{
	struct api_call *c = q->c;
	const char *org_id = http_query(c->req, "orgId"), *org_name = http_query(c->req, "orgName");
	const char *project_id = http_query(c->req, "projectId"), *project_name = http_query(c->req, "projectName");
	int rc = 0;

	if (org_id && *org_id)
		rc = uuid_valid(org_id, strlen(org_id)) ? store_org_get(c->db, org_id, &q->org, &c->err)
							: api_fail(c, ERR_INVALID, "invalid orgId: %.64s", org_id);
	else if (org_name && *org_name)
		rc = store_org_find(c->db, org_name, &q->org, &c->err);
	else
		rc = 1;
	if (rc < 0)
		return c->err.code == ERR_NOT_FOUND ? api_recode(c, ERR_INVALID) : rc;
	q->has_org = rc == 0;
	if (project_id && *project_id) {
		if (!uuid_valid(project_id, strlen(project_id)))
			return api_fail(c, ERR_INVALID, "invalid projectId: %.64s", project_id);
		if (store_project_get(c->db, project_id, &q->project, &c->err))
			return -1;
		q->has_project = true;
	} else if (project_name && *project_name) {
		if (!q->has_org)
			return api_fail(c, ERR_INVALID, "Organization name or ID is required");
		if (store_project_find(c->db, q->org.id, project_name, &q->project, &c->err))
			return -1;
		q->has_project = true;
	}
	if (q->has_org)
		q->f.org_id = q->org.id;
	if (q->has_project)
		q->f.project_id = q->project.id;
	return 0;
}

/* Which processes the caller may see (docs/security.md "Processes"): everything for admins
 * and global readers; with a project filter, all of that project's for its readers;
 * otherwise the caller's own and those of every project they may read. */
static int visibility(struct query *q, json_t **projects)
{
	struct api_call *c = q->c;
	struct org *orgs = NULL;
	struct org_query oq = {.user_id = c->who.user.id, .include_public = false, .limit = 100000};
	size_t n_orgs = 0;
	struct err ignored;
	int rc;

	*projects = NULL;
	if (principal_is_admin(&c->who) || (c->who.user.roles & (ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER)) ||
	    rbac_permitted(&c->who, PERM_GET_PROCESS_QUEUE_ALL_ORGS))
		return 0;
	q->f.restrict_to_visible = true;
	/* "Own" processes: a system user's (cron's) only of the project it acts for (auth/principal.h). */
	if (!user_id_is_system(c->who.user.id))
		q->f.visible_user_id = c->who.user.id;
	else if (principal_acts_in(&c->who, c->who.session_project)) {
		q->f.visible_user_id = c->who.user.id;
		q->f.visible_user_project_id = c->who.session_project;
	}
	*projects = json_array();
	if (q->has_project) {
		struct rbac_resource res = {.type = "PROJECT",
					    .kind = "project",
					    .id = q->project.id,
					    .name = q->project.name,
					    .org_id = q->project.org_id,
					    .owner_id = q->project.owner_id,
					    .is_public = strcmp(q->project.visibility, "PUBLIC") == 0};
		if (rbac_check(c->db, &c->who, &res, ACCESS_READER, &ignored) == 0)
			q->f.restrict_to_visible = false;
		return 0;
	}
	if ((rc = store_org_list(c->db, &oq, &orgs, &n_orgs, &c->err)))
		return rc;
	for (size_t i = 0; i < n_orgs && rc == 0; i++) {
		struct project *ps = NULL;
		size_t n = 0;
		if ((rc = store_project_list(c->db, orgs[i].id, NULL, &ps, &n, &c->err)))
			break;
		for (size_t k = 0; k < n; k++) {
			struct rbac_resource res = {.type = "PROJECT",
						    .kind = "project",
						    .id = ps[k].id,
						    .name = ps[k].name,
						    .org_id = ps[k].org_id,
						    .owner_id = ps[k].owner_id,
						    .is_public = strcmp(ps[k].visibility, "PUBLIC") == 0};
			if (rbac_check(c->db, &c->who, &res, ACCESS_READER, &ignored) == 0)
				json_array_append_new(*projects, json_string(ps[k].id));
		}
		free(ps);
	}
	free(orgs);
	return rc;
}

static int parse(struct query *q, json_t **projects)
{
	struct api_call *c = q->c;
	const char *status = http_query(c->req, "status"), *initiator = http_query(c->req, "initiator");
	const char *parent = http_query(c->req, "parentInstanceId");
	const char *entry = http_query(c->req, "entryPoint"), *min_rt = http_query(c->req, "minRuntimeMs");
	int rc;

	q->f.status = -1;
	if ((rc = org_and_project(q)) || (rc = date_param(c, "afterCreatedAt", &q->f.after_created)) ||
	    (rc = date_param(c, "beforeCreatedAt", &q->f.before_created)))
		return rc;
	if (status && *status && (q->f.status = proc_status_parse(status)) < 0)
		return api_fail(c, ERR_INVALID, "unknown status '%.32s'", status);
	if (initiator && *initiator)
		q->f.initiator_prefix = initiator;
	if (parent && *parent) {
		if (!uuid_valid(parent, strlen(parent)))
			return api_fail(c, ERR_INVALID, "invalid parentInstanceId: %.64s", parent);
		q->f.parent_instance_id = parent;
	}
	if (entry && *entry)
		q->f.entry_point = entry;
	if (min_rt && *min_rt &&
	    str_to_i64(str_from(min_rt), 0, INT64_MAX / 2, &q->f.min_runtime_ms, "minRuntimeMs", &c->err))
		return api_fail(c, ERR_INVALID, "'minRuntimeMs' must be a number of milliseconds, 0 or more");
	http_query_each(c->req, each_param, q);
	if (q->rc)
		return q->rc;
	if (q->f.n_meta && !q->has_project && !q->f.parent_instance_id)
		return api_fail(c, ERR_INVALID, "Process metadata filters require a project name or project ID or a "
						"parent process ID to be included in the query.");
	if ((rc = visibility(q, projects)))
		return rc;
	if (*projects && !(q->f.visible_projects_json = jsonx_dump(*projects)))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	return 0;
}

static int paging(struct api_call *c, size_t *limit, size_t *offset)
{
	const char *l = http_query(c->req, "limit"), *o = http_query(c->req, "offset");
	int64_t v;

	*limit = LIST_DEFAULT_LIMIT;
	*offset = 0;
	if (l && *l) {
		if (str_to_i64(str_from(l), 1, (int64_t)limits.list_max, &v, "limit", &c->err))
			return api_fail(c, ERR_INVALID, "'limit' must be a positive number (at most %zu)", limits.list_max);
		*limit = (size_t)v;
	}
	if (o && *o) {
		if (str_to_i64(str_from(o), 0, INT32_MAX, &v, "offset", &c->err))
			return api_fail(c, ERR_INVALID, "'offset' must be a positive number or zero");
		*offset = (size_t)v;
	}
	return 0;
}

/* include=out: the out variables of the process whose entry is v (the list leaves them
 * out), within *budget bytes for the whole answer (413 beyond: it stays bounded). */
static int add_out(struct api_call *c, const char *id, json_t *v, size_t *budget)
{
	struct process p;
	json_t *out, *meta;
	size_t len;
	int rc = 0;

	if (store_process_get(c->db, id, &p, &c->err))
		return c->err.code == ERR_NOT_FOUND ? 0 : -1;
	if ((out = json_object_get(p.meta, "out"))) {
		len = json_dumpb(out, NULL, 0, JSON_COMPACT);
		if (len > *budget) {
			rc =
			    api_fail(c, ERR_TOO_LARGE,
				     "the out variables of these processes exceed %zu bytes (%d times limit-out-bytes, "
				     "for include=out): ask for fewer with 'limit', or read each process's status",
				     OUT_BUDGET_MULTIPLE * (size_t)limits.out_bytes, OUT_BUDGET_MULTIPLE);
			goto out;
		}
		*budget -= len;
		if (!(meta = json_object_get(v, "meta")))
			json_object_set_new(v, "meta", meta = json_object());
		json_object_set(meta, "out", out);
	}
out:
	store_process_cleanup(&p);
	return rc;
}

int api_process_list(struct api_call *c)
{
	struct query q = {.c = c};
	struct process *list = NULL;
	json_t *projects = NULL, *out = NULL;
	size_t limit, offset, n = 0, budget = OUT_BUDGET_MULTIPLE * (size_t)limits.out_bytes;
	unsigned includes;
	int rc;

	if ((rc = paging(c, &limit, &offset)) || (rc = api_process_includes(c, &includes)) ||
	    (rc = parse(&q, &projects)) ||
	    (rc = store_process_list(c->db, &q.f, limit, offset, &list, &n, &c->err)))
		goto out;
	out = json_array();
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *v;
		if ((rc = api_process_json(c, &list[i], includes, &v)) == 0)
			json_array_append_new(out, v);
		if (rc == 0 && (includes & INC_OUT))
			rc = add_out(c, list[i].instance_id, v, &budget);
	}
	if (rc == 0) {
		rc = api_reply(c, out);
		out = NULL;
	}
out:
	json_decref(out);
	store_process_list_free(list, n);
	json_decref(projects);
	free((char *)q.f.visible_projects_json);
	return rc;
}

int api_process_count(struct api_call *c)
{
	struct query q = {.c = c};
	json_t *projects = NULL;
	int64_t n = 0;
	int rc;

	if ((rc = parse(&q, &projects)) || (rc = store_process_count(c->db, &q.f, &n, &c->err)))
		goto out;
	rc = api_reply(c, json_integer(n));
out:
	json_decref(projects);
	free((char *)q.f.visible_projects_json);
	return rc;
}
