#ifndef ACCORD_API_DOC_SCHEMAS_H
#define ACCORD_API_DOC_SCHEMAS_H

/* Pieces of route documentation (struct api_doc) that many routes share.  Schemas are
 * JSON with single quotes in place of double quotes (api/openapi.c turns them back), so
 * that they read in C; they hold no apostrophes. */

#define SCHEMA_DATE "{'type':'string','format':'date-time'}"
#define SCHEMA_UUID "{'type':'string','format':'uuid'}"
#define SCHEMA_OBJECT "{'type':'object'}"
#define SCHEMA_STRINGS "{'type':'array','items':{'type':'string'}}"

/* {"ok":true} */
#define SCHEMA_OK "{'type':'object','properties':{'ok':{'type':'boolean'}}}"
/* {"ok":true,"result":"CREATED|UPDATED|DELETED|…","id":…} */
#define SCHEMA_RESULT                                                                                                  \
	"{'type':'object','required':['ok','result'],'properties':{'ok':{'type':'boolean'},"                           \
	"'result':{'type':'string','enum':['CREATED','UPDATED','DELETED','VALIDATED']},'id':" SCHEMA_UUID "}}"

/* A team access rule (projects, secrets, inventories). */
#define SCHEMA_ACCESS_ENTRY                                                                                            \
	"{'type':'object','properties':{'teamId':" SCHEMA_UUID ",'orgName':{'type':'string'},"                         \
	"'teamName':{'type':'string'},'level':{'enum':['READER','WRITER','OWNER']}}}"
#define SCHEMA_ACCESS_LIST "{'type':'array','items':" SCHEMA_ACCESS_ENTRY "}"

#define SCHEMA_OWNER                                                                                                   \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'username':{'type':'string'},"                            \
	"'userDomain':{'type':'string'},'displayName':{'type':'string'}}}"

/* Bodies of POST …/access (one rule) and …/access/bulk (all rules: replaces them). */
#define SCHEMA_ACCESS_BODY                                                                                             \
	"{'type':'object','required':['level'],'properties':{'teamId':" SCHEMA_UUID ",'orgName':{'type':'string'},"    \
	"'teamName':{'type':'string'},'level':{'enum':['READER','WRITER','OWNER']}}}"
#define SCHEMA_ACCESS_BULK "{'type':'array','items':" SCHEMA_ACCESS_BODY "}"

#define DOC_PROCESS_ID                                                                                                 \
	{                                                                                                              \
		"id", "string", "the process's instance id"                                                            \
	}
#define SCHEMA_PROCESS                                                                                                 \
	"{'type':'object','properties':{'instanceId':" SCHEMA_UUID ",'parentInstanceId':" SCHEMA_UUID                  \
	",'kind':{'type':'string'},'status':{'enum':['NEW','PREPARING','ENQUEUED','WAITING','STARTING','RUNNING',"     \
	"'SUSPENDED','RESUMING','FINISHED','FAILED','CANCELLED','TIMED_OUT']},'orgId':" SCHEMA_UUID                    \
	",'orgName':{'type':'string'},'projectId':" SCHEMA_UUID ",'projectName':{'type':'string'},"                    \
	"'initiator':{'type':'string'},'initiatorId':" SCHEMA_UUID ",'tags':" SCHEMA_STRINGS ",'meta':" SCHEMA_OBJECT  \
	",'createdAt':" SCHEMA_DATE ",'lastUpdatedAt':" SCHEMA_DATE ",'startAt':" SCHEMA_DATE                          \
	",'timeout':{'type':'integer'},'suspendTimeout':{'type':'integer'},'childrenIds':{'type':'array','items'"      \
	":" SCHEMA_UUID "}}}"

/* A bulk item write of an inventory or JSON store, and its answer. */
#define SCHEMA_ITEMS_BULK                                                                                              \
	"{'type':'array','minItems':1,'items':{'type':'object','required':['path','data'],'properties':{"              \
	"'path':{'type':'string','minLength':1},'data':{}}}}"
#define SCHEMA_ITEMS_BULK_RESULT                                                                                       \
	"{'type':'object','required':['ok','items','created','updated'],'properties':{'ok':{'type':'boolean'},"        \
	"'items':{'type':'integer'},'created':{'type':'integer'},'updated':{'type':'integer'}}}"

/* Path and query parameters many routes share. */
#define DOC_ORG                                                                                                        \
	{                                                                                                              \
		"org", "string", "the organization's name"                                                             \
	}
#define DOC_PROJECT                                                                                                    \
	{                                                                                                              \
		"project", "string", "the project's name"                                                              \
	}
#define DOC_TEAM                                                                                                       \
	{                                                                                                              \
		"team", "string", "the team's name"                                                                    \
	}
#define DOC_FILTER                                                                                                     \
	{                                                                                                              \
		"filter", "string", "only names containing this text"                                                  \
	}

/* The three access-rule routes of a resource (a project, a secret, an inventory): docs
 * doc_access_get, doc_access_post and doc_access_bulk for object (its audit object),
 * described as noun ("a project"), with the path parameters given after. */
#define DOC_ACCESS_RULES(object, noun, ...)                                                                            \
	static const struct api_doc doc_access_get = {                                                                 \
	    .summary = "The team access rules of " noun,                                                               \
	    .params = (const struct api_param_doc[]){__VA_ARGS__, {0}},                                                \
	    .response = SCHEMA_ACCESS_LIST,                                                                            \
	    .errors = "403 404",                                                                                       \
	};                                                                                                             \
	static const struct api_doc doc_access_post = {                                                                \
	    .summary = "Set one team's access to " noun,                                                               \
	    .params = (const struct api_param_doc[]){__VA_ARGS__, {0}},                                                \
	    .body = SCHEMA_ACCESS_BODY,                                                                                \
	    .response = SCHEMA_RESULT,                                                                                 \
	    .errors = "400 403 404 415",                                                                               \
	    .audit = {object, "UPDATE", "access"},                                                                     \
	};                                                                                                             \
	static const struct api_doc doc_access_bulk = {                                                                \
	    .summary = "Replace all team access rules of " noun,                                                       \
	    .params = (const struct api_param_doc[]){__VA_ARGS__, {0}},                                                \
	    .body = SCHEMA_ACCESS_BULK,                                                                                \
	    .response = SCHEMA_RESULT,                                                                                 \
	    .errors = "400 403 404 415",                                                                               \
	    .audit = {object, "UPDATE", "access"},                                                                     \
	}

/* limit and offset of a list (api_paging). */
#define DOC_PAGING                                                                                                     \
	{"limit", "integer", "entries per page (default and maximum: --limit-list-default, --limit-list-max)"},        \
	{                                                                                                              \
		"offset", "integer", "entries to skip (default 0)"                                                     \
	}

#endif
