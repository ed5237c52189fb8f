/* Secrets used by server tasks as the process's initiator (queue/tasks/task_secret.h). */
#include "queue/tasks/task_secret.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/entity_policy.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/names.h"
#include "base/str.h"
#include "crypto/seal.h"
#include "crypto/storepass.h"
#include "store/projects.h"
#include "store/users.h"

int task_initiator(struct task_call *tc, struct principal *who, struct err *e)
{
	const struct process *p = &tc->r->p;
	char buf[UUID_STR_LEN];
	const char *user_id = task_call_user_id(tc, buf);
	int rc;

	memset(who, 0, sizeof *who);
	who->method = AUTH_SESSION;
	if (!user_id[0])
		return err_set(e, ERR_FORBIDDEN, "the process has no initiator to act as");
	if ((rc = store_user_get(tc->c, user_id, &who->user, e)))
		return rc;
	if (who->user.disabled)
		return err_set(e, ERR_FORBIDDEN, "the process's initiator '%s' is disabled", who->user.username);
	if (str_fmt(who->session_process, sizeof who->session_process, "%s", p->instance_id) ||
	    str_fmt(who->session_project, sizeof who->session_project, "%s", p->project_id))
		return err_set(e, ERR_INTERNAL, "process id too long: %s", p->instance_id);
	if ((rc = task_scopes_load(tc, &who->scopes, e)))
		return rc;
	return rbac_grants_load(tc->c, who, e);
}

int task_secret_org(struct task_call *tc, const struct principal *who, const char *org, struct org *o, struct err *e)
{
	int rc = org ? store_org_find(tc->c, org, o, e) : store_org_get(tc->c, tc->r->p.org_id, o, e);

	return rc ? rc : rbac_org(tc->c, who, o, RBAC_ORG_MEMBER, e);
}

/* May the process use s?  A secret restricted to projects serves their processes only. */
static int check_projects(struct task_call *tc, const struct secret *s, struct err *e)
{
	const struct process *p = &tc->r->p;
	char projects[512];
	bool ok;
	int rc;

	if ((rc = store_secret_project_allowed(tc->c, s, p->project_id, &ok, e)) || ok)
		return rc;
	store_secret_projects_text(tc->c, s, projects, sizeof projects);
	return err_set(e, ERR_FORBIDDEN, "Secret '%s' is restricted to %s and cannot be used by a process %s%s%s",
		       s->name, projects, p->project_id[0] ? "of project '" : "without a project",
		       p->project_id[0] ? p->project_name : "", p->project_id[0] ? "'" : "");
}

int task_secret_find(struct task_call *tc, const char *org, const char *name, enum access_level level, bool use,
		     struct secret *s, struct err *e)
{
	struct principal who;
	struct rbac_resource res;
	struct org o;
	int rc;

	if (org && (rc = store_org_find(tc->c, org, &o, e)))
		return rc;
	if ((rc = store_secret_find(tc->c, org ? o.id : tc->r->p.org_id, name, s, e)) ||
	    (use && (rc = check_projects(tc, s, e))))
		return rc;
	if ((rc = task_initiator(tc, &who, e)) ||
	    (rc = task_scope_need(&who, SCOPE_SECRET, level == ACCESS_READER ? SCOPE_READ : SCOPE_WRITE, e))) {
		err_prefix(e, "Secret '%s'", s->name);
		return rc;
	}
	res = (struct rbac_resource){SECRET_RESOURCE, "secret", s->id, s->name, s->org_id, s->owner_id, s->is_public};
	return rbac_check(tc->c, &who, &res, level, e);
}

int task_secret_open(struct task_call *tc, const struct secret *s, const char *password, unsigned char **pt,
		     size_t *pt_len, struct err *e)
{
	const struct masterkey *mk = tc->r->q ? tc->r->q->cfg.master_key : NULL;
	unsigned char *env = NULL;
	size_t env_len = 0;
	int rc;

	*pt = NULL;
	if (!mk)
		return err_set(e, ERR_UNAVAILABLE, "the server's master key is not available to processes");
	if (s->password_protected && !password)
		return err_set(e, ERR_INVALID,
			       "Error while fetching a secret '%s': The secret '%s' requires a password to decrypt",
			       s->name, s->name);
	if (!s->password_protected && password)
		return err_set(e, ERR_INVALID,
			       "Error while fetching a secret '%s': Not a password-protected secret '%s'", s->name,
			       s->name);
	if ((rc = store_secret_envelope_of(tc->c, s, &env, &env_len, e)))
		return rc;
	rc = seal_decrypt(mk, password, &(struct seal_binding){s->org_id, s->name}, env, env_len, pt, pt_len, e);
	if (rc == 0) /* the store password is as secret as the value it opens */
		task_call_sensitive(tc, password);
	if (rc && e->code == ERR_INVALID)
		err_prefix(e, "Error while fetching a secret '%s'", s->name);
	free(env);
	return rc;
}

/* One project of the organization by name, READER checked, added to ps unless there. */
static int add_project(struct task_call *tc, const struct principal *who, const struct org *o, json_t *name,
		       bool by_id, struct secret_project *ps, size_t *n, struct err *e)
{
	struct rbac_resource r = {"PROJECT", "project", NULL, NULL, o->id, NULL, false};
	const char *v = json_string_value(name);
	struct project p;
	int rc;

	if (!v)
		return err_set(e, ERR_INVALID, "projects must be given as a name (id) or a list of names (ids)");
	if (by_id)
		rc = uuid_valid(v, strlen(v)) ? store_project_get(tc->c, v, &p, e) : -ERR_NOT_FOUND;
	else
		rc = store_project_find(tc->c, o->id, v, &p, e);
	if (rc == 0 && strcmp(p.org_id, o->id) != 0)
		rc = -ERR_NOT_FOUND;
	if (rc == -ERR_NOT_FOUND)
		return err_set(e, ERR_INVALID, "Project not found: %.128s", json_string_value(name));
	if (rc)
		return rc;
	r.id = p.id;
	r.name = p.name;
	r.owner_id = p.owner_id;
	r.is_public = strcmp(p.visibility, "PUBLIC") == 0;
	if ((rc = rbac_check(tc->c, who, &r, ACCESS_READER, e)))
		return rc;
	for (size_t i = 0; i < *n; i++)
		if (strcmp(ps[i].id, p.id) == 0)
			return 0;
	if (*n == SECRET_PROJECTS_MAX)
		return err_set(e, ERR_INVALID, "A secret can be restricted to at most %d projects",
			       SECRET_PROJECTS_MAX);
	memcpy(ps[*n].id, p.id, sizeof ps[*n].id);
	memcpy(ps[*n].name, p.name, sizeof ps[*n].name);
	(*n)++;
	return 0;
}

int task_secret_projects(struct task_call *tc, const struct principal *who, const struct org *o, json_t *projects,
			 bool by_id, struct secret_project **ps, size_t *n, struct err *e)
{
	size_t i;
	json_t *v;
	int rc = 0;

	*ps = NULL;
	*n = 0;
	if (!projects || json_is_null(projects))
		return 0;
	if (!(*ps = calloc(SECRET_PROJECTS_MAX, sizeof **ps)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (!json_is_array(projects))
		return add_project(tc, who, o, projects, by_id, *ps, n, e);
	json_array_foreach(projects, i, v) {
		if ((rc = add_project(tc, who, o, v, by_id, *ps, n, e)))
			return rc;
	}
	return 0;
}

/* The store password: the given one (policy checked), a generated one, or none. */
static int store_password(const struct task_secret_new *n, const struct principal *who, char **out, struct err *e)
{
	char gen[STOREPASS_GEN_LEN + 1];

	*out = NULL;
	if (n->store_password && *n->store_password) {
		if (storepass_check(n->store_password, who->user.username, e))
			return -ERR_INVALID;
		*out = strdup(n->store_password);
	} else if (n->generate_password) {
		storepass_generate(gen);
		*out = strdup(gen);
		sodium_memzero(gen, sizeof gen);
	} else {
		return 0;
	}
	return *out ? 0 : err_set(e, ERR_INTERNAL, "out of memory");
}

static int fill(const struct task_secret_new *n, const struct org *o, const struct principal *who, struct secret *s,
		struct err *e)
{
	if (!n->name || name_check(n->name, "secret", NAME_PLAIN, e))
		return n->name ? -ERR_INVALID : err_set(e, ERR_INVALID, "'secretName' is required");
	if (n->visibility && strcmp(n->visibility, "PUBLIC") != 0 && strcmp(n->visibility, "PRIVATE") != 0)
		return err_set(e, ERR_INVALID, "Invalid visibility value: %.32s (expected PUBLIC or PRIVATE)",
			       n->visibility);
	memset(s, 0, sizeof *s);
	uuid_v4(s->id);
	memcpy(s->org_id, o->id, sizeof s->org_id);
	memcpy(s->org_name, o->name, sizeof s->org_name);
	if (str_fmt(s->name, sizeof s->name, "%s", n->name))
		return err_set(e, ERR_INVALID, "secret name is longer than %zu characters", sizeof s->name - 1);
	s->type = n->type;
	s->is_public = !n->visibility || strcmp(n->visibility, "PUBLIC") == 0;
	str_set_lit(s->store_type, "concord");
	memcpy(s->owner_id, who->user.id, sizeof s->owner_id);
	s->created_at = dt_now_ms();
	return 0;
}

int task_secret_create(struct task_call *tc, const struct task_secret_new *n, char id[UUID_STR_LEN], char **password,
		       struct err *e)
{
	const struct masterkey *mk = tc->r->q ? tc->r->q->cfg.master_key : NULL;
	struct secret_project *ps = NULL;
	unsigned char *env = NULL;
	size_t n_ps = 0, env_len = 0;
	struct principal who;
	struct secret s;
	struct org o;
	int rc;

	*password = NULL;
	if (!mk)
		return err_set(e, ERR_UNAVAILABLE, "the server's master key is not available to processes");
	if ((rc = task_initiator(tc, &who, e)) || (rc = task_scope_need(&who, SCOPE_SECRET, SCOPE_WRITE, e)) ||
	    (rc = task_secret_org(tc, &who, n->org, &o, e)) ||
	    (rc = fill(n, &o, &who, &s, e)) || (rc = task_secret_projects(tc, &who, &o, n->projects, false, &ps, &n_ps, e)) ||
	    (rc = entity_policy_secret(tc->c, &who, &s, n_ps ? ps[0].id : NULL, false, e)) ||
	    (rc = store_password(n, &who, password, e)))
		goto out;
	s.n_projects = n_ps;
	s.password_protected = *password != NULL;
	if ((rc = seal_encrypt(mk, *password, &(struct seal_binding){s.org_id, s.name}, n->pt, n->pt_len, &env,
			       &env_len, e)) ||
	    (rc = store_secret_insert(tc->c, &s, ps, n_ps, env, env_len, e)))
		goto out;
	memcpy(id, s.id, UUID_STR_LEN);
out:
	free(ps);
	free(env);
	if (rc) {
		task_secret_password_free(*password);
		*password = NULL;
	}
	return rc;
}

void task_secret_password_free(char *password)
{
	if (password)
		sodium_memzero(password, strlen(password));
	free(password);
}
