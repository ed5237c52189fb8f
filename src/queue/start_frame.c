/* What a supervisor tells its runner at start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "base/jsonx.h"
#include "base/log.h"
#include "base/path.h"
#include "flow/start_def.h"
#include "crypto/session.h"
#include "crypto/signing.h"
#include "queue/tasks/server_tasks.h"
#include "queue/main_json.h"
#include "queue/supervise/supervise.h"
#include "store/policies.h"
#include "store/users.h"

static json_t *user_json(struct store_conn *c, const char *id, const char *username)
{
	struct user u;
	struct err e;
	json_t *v = json_pack("{s:s, s:s}", "id", id, "username", username);

	if (store_user_get(c, id, &u, &e) == 0) {
		json_object_set_new(v, "displayName", json_string(u.display_name[0] ? u.display_name : u.username));
		if (u.email[0])
			json_object_set_new(v, "email", json_string(u.email));
		json_object_set_new(v, "userType", json_string(u.type));
	} else {
		json_object_set_new(v, "displayName", json_string(username));
	}
	return v;
}

/* Concord's usernameSignature of the user's username (crypto/signing.h). */
static int sign_username(const char *pem, json_t *user, struct err *e)
{
	const char *name = json_string_value(json_object_get(user, "username"));
	char *sig = name ? signing_sign(pem, name, e) : NULL;

	if (!sig)
		return name ? -1 : 0;
	json_object_set_new(user, "usernameSignature", json_string(sig));
	free(sig);
	return 0;
}

/* currentUser: the user a form's runAs.keep handed the process to, else the initiator
 * (init, whose reference the result then shares). */
static json_t *current_user(struct running *r, struct store_conn *c, const struct process *p, json_t *init)
{
	char id[UUID_STR_LEN];
	struct user u;
	struct err e;
	json_t *v;

	if (!c || !init || store_process_current_user(c, p->instance_id, id, &e) || !id[0] ||
	    store_user_get(c, id, &u, &e))
		return json_incref(init);
	v = user_json(c, u.id, u.username);
	if (v && r->q->cfg.signing_key && sign_username(r->q->cfg.signing_key, v, &e))
		LOG_W("process %s: no usernameSignature: %s", p->instance_id, e.msg);
	return v;
}

static json_t *sysvars(struct running *r, const char *workdir, json_t *profiles)
{
	const struct process *p = &r->p;
	char token[SESSION_TOKEN_LEN];
	struct err e;
	struct store_conn *c = store_conn(r->q->cfg.store, &e);
	json_t *pi, *proj, *init, *cur, *v;

	session_token(r->q->session_key, p->instance_id, token);
	pi = json_pack("{s:O, s:s, s:s}", "activeProfiles", profiles, "sessionKey", token, "sessionToken", token);
	proj = json_pack("{s:s, s:s}", "orgId", p->org_id, "orgName", p->org_name);
	if (p->project_id[0]) {
		json_object_set_new(proj, "projectId", json_string(p->project_id));
		json_object_set_new(proj, "projectName", json_string(p->project_name));
	}
	init = c ? user_json(c, p->initiator_id, p->initiator) : json_pack("{s:s}", "username", p->initiator);
	if (init && r->q->cfg.signing_key && sign_username(r->q->cfg.signing_key, init, &e))
		LOG_W("process %s: no usernameSignature: %s", p->instance_id, e.msg);
	cur = current_user(r, c, p, init);
	sodium_memzero(token, sizeof token);
	v = json_pack("{s:s, s:s, s:o, s:o, s:o, s:o}", "txId", p->instance_id, "workDir", workdir, "processInfo", pi,
		      "projectInfo", proj, "initiator", init, "currentUser", cur);
	/* A child, a fork or a handler process knows its parent (Concord's server-provided
	 * arguments.parentInstanceId). */
	if (v && p->parent_instance_id[0])
		json_object_set_new(v, "parentInstanceId", json_string(p->parent_instance_id));
	return v;
}

/* The out variable names: the request's, then those the org's and project's cfg name
 * (Concord merges the cfg's `out` into the process configuration like any key). */
static json_t *names_of(json_t *cfg)
{
	json_t *names = json_array(), *req = json_object_get(cfg, "out"),
	       *inherited = json_object_get(json_object_get(cfg, START_DEF_ORG_PROJECT_CFG), "out");

	if (names && json_is_array(req))
		json_array_extend(names, req);
	if (names && json_is_array(inherited))
		json_array_extend(names, inherited);
	return names;
}

static bool dry_run(json_t *v)
{
	return json_is_true(v) || (json_is_string(v) && strcasecmp(json_string_value(v), "true") == 0);
}

/* The rules of the process's policy that the runner applies (store/policies.h), read from
 * the store: the working directory's files are the flow's to change, these are not. */
static int policy_of(struct running *r, json_t *frame, struct err *e)
{
	struct store_conn *c = store_conn(r->q->cfg.store, e);
	json_t *pol = NULL;

	if (!c || store_process_policy_get(c, r->p.instance_id, &pol, e)) {
		json_decref(frame);
		return -1;
	}
	if (pol)
		json_object_set_new(frame, "policy", pol);
	return 0;
}

json_t *supervise_start_frame(struct running *r, const char *workdir, const struct memdir *files, struct err *e)
{
	json_t *cfg = files ? main_json_load_files(files, e) : main_json_load(workdir, e), *args, *profiles, *frame;

	if (!cfg)
		return NULL;
	args = json_object_get(cfg, "arguments");
	/* Without the request's profiles none are named: the runner takes the definition's
	 * configuration.activeProfiles, else "default", and puts them in processInfo. */
	profiles = json_object_get(cfg, "activeProfiles");
	profiles = json_is_array(profiles) ? json_incref(profiles) : json_array();
	frame = json_pack("{s:s, s:s, s:o, s:o, s:o, s:b, s:o}", "type", "start", "entryPoint", r->p.entry_point,
			  "args", json_is_object(args) ? json_incref(args) : json_object(), "out",
			  names_of(cfg), "activeProfiles", json_incref(profiles), "debug",
			  json_is_true(start_def_switch(cfg, "debug")), "sysvars", sysvars(r, workdir, profiles));
	json_decref(profiles);
	/* The org's and the project's cfg arguments, below the definition's (vm_start_defaults). */
	if (frame && json_is_object(json_object_get(json_object_get(cfg, START_DEF_ORG_PROJECT_CFG), "arguments")))
		json_object_set(frame, "defaults",
				json_object_get(json_object_get(cfg, START_DEF_ORG_PROJECT_CFG), "arguments"));
	/* Checked at start (flow/start_def.h): true, or "true" in any case. */
	if (frame && dry_run(start_def_switch(cfg, "dryRun")))
		json_object_set_new(frame, "dryRun", json_true());
	json_decref(cfg);
	if (frame && files && json_object_set_new(frame, "files", memdir_to_json(files))) {
		json_decref(frame);
		frame = NULL;
	}
	if (frame && policy_of(r, frame, e))
		return NULL;
	/* Holds the SMTP password and the Slack token: only ever in this frame (fd 3). */
	if (frame && r->q->cfg.task_defaults)
		json_object_set(frame, "taskDefaults", r->q->cfg.task_defaults);
	if (frame && r->p.resume_event[0]) {
		json_t *sens;
		struct err ce;
		struct store_conn *c = store_conn(r->q->cfg.store, &ce);
		/* A resume: the arguments are the ones it is resumed with, not the start's.  A
		 * restore resumes the checkpoint it names, whatever else the state waits for. */
		size_t pl = strlen(QUEUE_CHECKPOINT_PREFIX);
		if (strncmp(r->p.resume_event, QUEUE_CHECKPOINT_PREFIX, pl) == 0)
			json_object_set_new(frame, "checkpoint", json_string(r->p.resume_event + pl));
		else
			json_object_set_new(frame, "resume", json_string(r->p.resume_event));
		json_object_set_new(frame, "args", r->p.resume_args ? json_incref(r->p.resume_args) : json_object());
		/* The values the runner masked before the suspend (server_tasks.h). */
		if (c && (sens = task_sensitive_load(c, r)))
			json_object_set_new(frame, "sensitive", sens);
	}
	if (!frame)
		err_set(e, ERR_INTERNAL, "out of memory");
	return frame;
}
