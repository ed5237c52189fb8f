#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/jsonx.h"
#include "base/oom.h"
#include "base/path.h"
#include "flow/copy.h"
#include "flow/el/el.h"
#include "flow/model_load.h"

static const char *const top_keys[] = {"configuration", "flows",   "forms",    "profiles", "publicFlows",
				       "resources",	"imports", "triggers", NULL};
static const char *const profile_keys[] = {"configuration", "flows", "forms", NULL};

enum cfg_type { C_STRING, C_MAP, C_LIST, C_BOOL, C_INT_OR_EXPR, C_DURATION, C_ANY };

struct cfg_key {
	const char *name;
	enum cfg_type type;
};

static const struct cfg_key cfg_keys[] = {
    {"runtime", C_STRING},
    {"entryPoint", C_STRING},
    {"arguments", C_MAP},
    {"dependencies", C_LIST},
    {"extraDependencies", C_LIST},
    {"meta", C_MAP},
    {"requirements", C_MAP},
    {"processTimeout", C_DURATION},
    {"suspendTimeout", C_DURATION},
    {"activeProfiles", C_LIST},
    {"exclusive", C_MAP},
    {"events", C_MAP},
    {"out", C_LIST},
    {"debug", C_BOOL},
    {"template", C_STRING},
    {"parallelLoopParallelism", C_INT_OR_EXPR},
    {"validation", C_MAP},
};

/* A merged view of all definition files and active profiles, as ynodes. */
struct merged {
	struct ynode *flows, *forms, *profiles, *config, *args;
	json_t *triggers, *imports, *public_flows;
};

static struct ynode *map_new(struct model *m, const struct ynode *like, size_t cap)
{
	struct ynode *n = arena_alloc(&m->arena, sizeof *n);
	*n = *like;
	n->n = 0;
	n->kids = arena_alloc(&m->arena, (2 * cap + 2) * sizeof *n->kids);
	return n;
}

/* Deep merge of two mapping nodes into a new node (b wins; maps on both sides merge). */
static struct ynode *ymerge(struct model *m, struct ynode *a, struct ynode *b, bool deep)
{
	struct ynode *r;
	if (!a)
		return b;
	if (!b || b->kind != YN_MAP || a->kind != YN_MAP)
		return b ? b : a;
	r = map_new(m, a, a->n + b->n);
	for (size_t i = 0; i < a->n; i++) {
		struct ynode *over = ynode_get(b, a->kids[2 * i]->s), *v = a->kids[2 * i + 1];
		r->kids[2 * r->n] = a->kids[2 * i];
		r->kids[2 * r->n++ + 1] = over ? (deep ? ymerge(m, v, over, true) : over) : v;
	}
	for (size_t i = 0; i < b->n; i++)
		if (!ynode_get(a, b->kids[2 * i]->s)) {
			r->kids[2 * r->n] = b->kids[2 * i];
			r->kids[2 * r->n++ + 1] = b->kids[2 * i + 1];
		}
	return r;
}

static bool is_duration(const char *s)
{
	bool t = false, any = false;
	if (*s++ != 'P')
		return false;
	while (*s) {
		if (*s == 'T' && !t) {
			t = true;
			s++;
			continue;
		}
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while ((*s >= '0' && *s <= '9') || *s == '.')
			s++;
		if (!*s || !strchr(t ? "HMS" : "YMWD", *s))
			return false;
		s++;
		any = true;
	}
	return any;
}

static int check_cfg_value(const struct cfg_key *k, const struct ynode *v, struct err *e)
{
	const char *tn = ynode_type_name(v);
	switch (k->type) {
	case C_STRING:
		return compile_want_string(v, k->name, e);
	case C_MAP:
		return compile_want(v, YN_MAP, k->name, e);
	case C_LIST:
		if (compile_want(v, YN_SEQ, k->name, e) < 0)
			return -1;
		for (size_t i = 0; i < v->n; i++)
			if (compile_want_string(v->kids[i], k->name, e) < 0)
				return -1;
		return 0;
	case C_BOOL:
		return strcmp(tn, "BOOLEAN") == 0 ? 0 : yerr(e, v, "'%s' must be a boolean, got %s", k->name, tn);
	case C_INT_OR_EXPR:
		if (strcmp(tn, "INT") == 0 || (v->kind == YN_SCALAR && el_has_template(v->s, v->len)))
			return 0;
		return yerr(e, v, "'%s' must be an integer, got %s", k->name, tn);
	case C_DURATION: /* as the start request takes it (base/duration.h): seconds or ISO-8601 */
		if (v->kind == YN_SCALAR && (is_duration(v->s) || (strcmp(tn, "INT") == 0 && v->s[0] != '-')))
			return 0;
		return yerr(e, v, "'%s' must be a number of seconds or an ISO-8601 duration (e.g. PT1H), got '%s'",
			    k->name, v->kind == YN_SCALAR ? v->s : tn);
	default:
		return 0;
	}
}

static int check_config(const struct ynode *c, struct err *e)
{
	if (compile_want(c, YN_MAP, "configuration", e) < 0)
		return -1;
	for (size_t i = 0; i < c->n; i++) {
		const struct ynode *k = c->kids[2 * i], *v = c->kids[2 * i + 1];
		const struct cfg_key *def = NULL;
		for (size_t j = 0; j < sizeof cfg_keys / sizeof cfg_keys[0] && !def; j++)
			if (strcmp(cfg_keys[j].name, k->s) == 0)
				def = &cfg_keys[j];
		if (!def)
			return yerr(e, k,
				    "Unknown configuration key '%s', expected one of: runtime, entryPoint, arguments, "
				    "dependencies, extraDependencies, meta, requirements, processTimeout, "
				    "suspendTimeout, activeProfiles, exclusive, events, out, debug, template, "
				    "parallelLoopParallelism, validation",
				    k->s);
		if (check_cfg_value(def, v, e) < 0)
			return -1;
		if (strcmp(k->s, "runtime") == 0 && strcmp(v->s, "concord-v2") != 0)
			return yerr(e, v,
				    "runtime '%s' is not supported: Accord runs flows with the concord-v2 runtime "
				    "only (remove 'configuration.runtime' or set it to concord-v2)",
				    v->s);
	}
	return 0;
}

static int check_named_map(const struct ynode *n, const char *what, enum ynode_kind kind, struct err *e)
{
	if (compile_want(n, YN_MAP, what, e) < 0)
		return -1;
	for (size_t i = 0; i < n->n; i++)
		if (compile_want(n->kids[2 * i + 1], kind, what, e) < 0)
			return -1;
	return 0;
}

static int check_profile(const struct ynode *p, struct err *e)
{
	const struct ynode *c;
	if (compile_want(p, YN_MAP, "profile", e) < 0 || compile_check_keys(p, profile_keys, e) < 0)
		return -1;
	if ((c = ynode_get(p, "configuration")) && check_config(c, e) < 0)
		return -1;
	if ((c = ynode_get(p, "flows")) && check_named_map(c, "flows", YN_SEQ, e) < 0)
		return -1;
	if ((c = ynode_get(p, "forms")) && check_named_map(c, "forms", YN_SEQ, e) < 0)
		return -1;
	return 0;
}

static int append_json_list(json_t **dst, const struct ynode *n, const char *what, struct err *e)
{
	json_t *v;
	if (compile_want(n, YN_SEQ, what, e) < 0)
		return -1;
	v = ynode_to_json(n);
	if (!*dst)
		*dst = json_array();
	json_array_extend(*dst, v);
	json_decref(v);
	return 0;
}

static int check_doc(const struct ynode *r, struct err *e)
{
	const struct ynode *n;
	if (compile_want(r, YN_MAP, "definition", e) < 0 || compile_check_keys(r, top_keys, e) < 0)
		return -1;
	if ((n = ynode_get(r, "configuration")) && check_config(n, e) < 0)
		return -1;
	if ((n = ynode_get(r, "flows")) && check_named_map(n, "flows", YN_SEQ, e) < 0)
		return -1;
	if ((n = ynode_get(r, "forms")) && check_named_map(n, "forms", YN_SEQ, e) < 0)
		return -1;
	if ((n = ynode_get(r, "profiles"))) {
		if (compile_want(n, YN_MAP, "profiles", e) < 0)
			return -1;
		for (size_t i = 0; i < n->n; i++)
			if (check_profile(n->kids[2 * i + 1], e) < 0)
				return -1;
	}
	if ((n = ynode_get(r, "resources"))) {
		static const char *const rk[] = {"concord", NULL};
		if (compile_want(n, YN_MAP, "resources", e) < 0 || compile_check_keys(n, rk, e) < 0)
			return -1;
	}
	return 0;
}

static int merge_docs(struct model *m, struct merged *g, struct err *e)
{
	for (size_t i = 0; i < m->n_docs; i++) {
		struct ynode *r = m->docs[i].root, *n;
		if (!r)
			continue;
		if (check_doc(r, e) < 0)
			return -1;
		g->flows = ymerge(m, g->flows, ynode_get(r, "flows"), false);
		g->forms = ymerge(m, g->forms, ynode_get(r, "forms"), false);
		g->profiles = ymerge(m, g->profiles, ynode_get(r, "profiles"), false);
		if ((n = ynode_get(r, "triggers")) && append_json_list(&g->triggers, n, "triggers", e) < 0)
			return -1;
		if ((n = ynode_get(r, "imports")) && append_json_list(&g->imports, n, "imports", e) < 0)
			return -1;
		if ((n = ynode_get(r, "publicFlows")) && append_json_list(&g->public_flows, n, "publicFlows", e) < 0)
			return -1;
		n = ynode_get(r, "configuration");
		if (n && i + 1 == m->n_docs)
			g->config = n; /* every key but arguments comes from the root file only */
		if (n && ynode_get(n, "arguments"))
			g->args = ymerge(m, g->args, ynode_get(n, "arguments"), true);
	}
	return 0;
}

static json_t *profile_names(const struct model_opts *o, const struct ynode *config)
{
	json_t *names = json_array();
	const struct ynode *ap = config ? ynode_get(config, "activeProfiles") : NULL;
	if (o->n_profiles) {
		for (size_t i = 0; i < o->n_profiles; i++)
			json_array_append_new(names, json_string(o->profiles[i]));
	} else if (ap) {
		for (size_t i = 0; i < ap->n; i++)
			json_array_append_new(names, json_string(ap->kids[i]->s));
	} else {
		json_array_append_new(names, json_string("default"));
	}
	return names;
}

static void apply_profiles(struct model *m, struct merged *g)
{
	size_t i;
	json_t *name;
	json_array_foreach(m->active_profiles, i, name)
	{
		struct ynode *p = g->profiles ? ynode_get(g->profiles, json_string_value(name)) : NULL, *c;
		if (!p)
			continue;
		g->flows = ymerge(m, g->flows, ynode_get(p, "flows"), false);
		g->forms = ymerge(m, g->forms, ynode_get(p, "forms"), false);
		if ((c = ynode_get(p, "configuration"))) {
			g->config = ymerge(m, g->config, c, true);
			g->args = ymerge(m, g->args, ynode_get(c, "arguments"), true);
		}
	}
}

static int compile_flows(struct model *m, const struct merged *g, struct err *e)
{
	size_t n = g->flows ? g->flows->n : 0, nf = g->forms ? g->forms->n : 0;
	m->flows = arena_alloc(&m->arena, (n + 1) * sizeof *m->flows);
	m->forms = arena_alloc(&m->arena, (nf + 1) * sizeof *m->forms);
	for (size_t i = 0; i < n; i++) {
		struct flow_def *f = &m->flows[m->n_flows++];
		f->name = g->flows->kids[2 * i]->s;
		f->file = g->flows->kids[2 * i]->file;
		if (compile_steps(m, g->flows->kids[2 * i + 1], f->name, &f->body, e) < 0)
			return -1;
	}
	for (size_t i = 0; i < nf; i++) {
		struct form_def *d;
		if (compile_form_fields(m, g->forms->kids[2 * i + 1], g->forms->kids[2 * i]->s, &d, e) < 0)
			return -1;
		m->forms[m->n_forms++] = *d;
	}
	return 0;
}

/* Flows of profiles that are not active are compiled too, so that the whole definition is
 * validated; they are not reachable. */
static int compile_inactive(struct model *m, const struct merged *g, struct err *e)
{
	for (size_t i = 0; g->profiles && i < g->profiles->n; i++) {
		const struct ynode *p = g->profiles->kids[2 * i + 1], *fl = ynode_get(p, "flows");
		const struct ynode *fo = ynode_get(p, "forms");
		struct steps *body;
		struct form_def *d;
		for (size_t j = 0; fl && j < fl->n; j++)
			if (compile_steps(m, fl->kids[2 * j + 1], fl->kids[2 * j]->s, &body, e) < 0)
				return -1;
		for (size_t j = 0; fo && j < fo->n; j++)
			if (compile_form_fields(m, fo->kids[2 * j + 1], fo->kids[2 * j]->s, &d, e) < 0)
				return -1;
	}
	return 0;
}

static int compile_model(struct model *m, const struct model_opts *o, struct err *e)
{
	struct merged g = {0};
	int rc = -1;
	if (merge_docs(m, &g, e) < 0)
		goto out;
	m->active_profiles = profile_names(o, g.config);
	m->profiles = json_array();
	for (size_t i = 0; g.profiles && i < g.profiles->n; i++)
		json_array_append_new(m->profiles, json_string(g.profiles->kids[2 * i]->s));
	m->declared_args = g.args ? ynode_to_json(g.args) : json_object();
	apply_profiles(m, &g);
	m->configuration = g.config ? ynode_to_json(g.config) : json_object();
	json_object_del(m->configuration, "arguments");
	if (g.args && !(m->arguments = tval_compile(m, g.args, e)))
		goto out;
	if (compile_flows(m, &g, e) < 0 || compile_inactive(m, &g, e) < 0)
		goto out;
	m->triggers = g.triggers ? g.triggers : json_array();
	m->imports = g.imports ? g.imports : json_array();
	m->public_flows = g.public_flows ? g.public_flows : json_array();
	g.triggers = g.imports = g.public_flows = NULL;
	rc = 0;
out:
	json_decref(g.triggers);
	json_decref(g.imports);
	json_decref(g.public_flows);
	return rc;
}

static void hash_profiles(struct model *m)
{
	char *dump = jsonx_dump(m->active_profiles);
	unsigned char digest[32];
	crypto_generichash_state h;
	crypto_generichash_init(&h, NULL, 0, sizeof digest);
	crypto_generichash_update(&h, (const unsigned char *)m->hash, strlen(m->hash));
	if (dump)
		crypto_generichash_update(&h, (const unsigned char *)dump, strlen(dump));
	crypto_generichash_final(&h, digest, sizeof digest);
	sodium_bin2hex(m->hash, sizeof m->hash, digest, sizeof digest);
	free(dump);
}

struct model *model_load(const struct model_opts *o, struct err *e)
{
	struct model *m = calloc(1, sizeof *m);
	if (!m) {
		oom_fail(e);
		return NULL;
	}
	arena_init(&m->arena);
	m->server_imports = o->server_imports;
	m->importer = o->importer;
	if (model_load_files(m, o, e) < 0 || compile_model(m, o, e) < 0) {
		model_free(m);
		return NULL;
	}
	hash_profiles(m);
	return m;
}

struct model *model_load_buffer(const char *name, const char *data, size_t len, struct err *e)
{
	struct model_opts o = {0};
	struct model *m = calloc(1, sizeof *m);
	if (!m) {
		oom_fail(e);
		return NULL;
	}
	arena_init(&m->arena);
	m->root_dir = arena_strdup(&m->arena, ".");
	m->docs = calloc(1, sizeof *m->docs);
	if (!m->docs) {
		model_free(m);
		return NULL;
	}
	m->n_docs = 1;
	if (ydoc_parse(&m->docs[0], name, data, len, e) < 0 || compile_model(m, &o, e) < 0) {
		model_free(m);
		return NULL;
	}
	unsigned char digest[32];
	crypto_generichash(digest, sizeof digest, (const unsigned char *)data, len, NULL, 0);
	sodium_bin2hex(m->hash, sizeof m->hash, digest, sizeof digest);
	hash_profiles(m);
	return m;
}

void model_free(struct model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_owned_json; i++)
		json_decref(m->owned_json[i]);
	for (size_t i = 0; i < m->n_owned_expr; i++)
		el_free(m->owned_expr[i]);
	for (size_t i = 0; i < m->n_docs; i++)
		ydoc_cleanup(&m->docs[i]);
	free(m->docs);
	json_decref(m->configuration);
	json_decref(m->triggers);
	json_decref(m->imports);
	json_decref(m->public_flows);
	json_decref(m->active_profiles);
	json_decref(m->profiles);
	json_decref(m->declared_args);
	arena_cleanup(&m->arena);
	free(m);
}

const struct flow_def *model_flow(const struct model *m, const char *name)
{
	for (size_t i = 0; i < m->n_flows; i++)
		if (strcmp(m->flows[i].name, name) == 0)
			return &m->flows[i];
	return NULL;
}

json_t *model_entry_points(const struct model *m)
{
	json_t *names = json_array(), *v;
	size_t i;

	for (size_t f = 0; names && f < m->n_flows; f++) {
		bool listed = !json_array_size(m->public_flows);
		json_array_foreach(m->public_flows, i, v) listed =
		    listed || (json_is_string(v) && strcmp(json_string_value(v), m->flows[f].name) == 0);
		if (listed && json_array_append_new(names, json_string(m->flows[f].name))) {
			json_decref(names);
			return NULL;
		}
	}
	return names;
}

const struct form_def *model_form(const struct model *m, const char *name)
{
	for (size_t i = 0; i < m->n_forms; i++)
		if (strcmp(m->forms[i].name, name) == 0)
			return &m->forms[i];
	return NULL;
}

int model_root_patterns(struct model *m, json_t **out, struct err *e)
{
	const struct ynode *r = m->docs[0].root, *res, *c;
	*out = NULL;
	if (!r || r->kind != YN_MAP || !(res = ynode_get(r, "resources")) || res->kind != YN_MAP)
		return 0;
	if (!(c = ynode_get(res, "concord")))
		return 0;
	if (c->kind == YN_SCALAR) {
		*out = json_array();
		json_array_append_new(*out, ynode_to_json(c));
		return 0;
	}
	if (compile_want(c, YN_SEQ, "resources.concord", e) < 0)
		return -1;
	*out = ynode_to_json(c);
	return 0;
}

/* A git or mvn import: handed to the importer (model_opts), with its dest resolved. */
static int import_remote(struct model *m, const char *kind, const struct ynode *spec, struct err *e)
{
	static const char *const git_keys[] = {"url", "name", "version", "path", "dest", "exclude", "secret", NULL};
	static const char *const mvn_keys[] = {"url", "dest", NULL};
	const struct ynode *dest;
	json_t *js;
	char *to;
	int rc;

	if (!m->importer)
		return yerr(e, spec, "'%s' imports are not available when running locally", kind);
	if (!m->importer->fetch)
		return 0;
	if (compile_want(spec, YN_MAP, kind, e) < 0 ||
	    compile_check_keys(spec, strcmp(kind, "git") == 0 ? git_keys : mvn_keys, e) < 0)
		return -1;
	dest = ynode_get(spec, "dest");
	if (dest && dest->kind != YN_SCALAR)
		return yerr(e, dest, "Expected a string for 'dest'");
	if (!(to = path_join_safe(m->root_dir, dest ? dest->s : "concord", e)))
		return -1;
	if (!(js = ynode_to_json(spec))) {
		free(to);
		return oom_fail(e);
	}
	rc = m->importer->fetch(m->importer->ctx, kind, js, to, e);
	if (rc < 0)
		rc = yerr(e, spec, "%s import failed: %s", kind, e->msg);
	json_decref(js);
	free(to);
	return rc;
}

static int import_one(struct model *m, const struct ynode *imp, struct err *e)
{
	static const char *const dir_keys[] = {"src", "dest", NULL};
	const struct ynode *d, *src, *dest;
	char *from = NULL, *to = NULL;
	int rc;
	if (imp->kind != YN_MAP || imp->n != 1)
		return yerr(e, imp, "an import must be a map with one key: git, mvn or dir");
	if (!(d = ynode_get(imp, "dir"))) {
		if ((d = ynode_get(imp, "git")) || (d = ynode_get(imp, "mvn")))
			return import_remote(m, imp->kids[0]->s, d, e);
		return yerr(e, imp, "Unknown import '%s', expected git, mvn or dir", imp->kids[0]->s);
	}
	if (compile_want(d, YN_MAP, "dir", e) < 0 || compile_check_keys(d, dir_keys, e) < 0)
		return -1;
	if (!(src = ynode_get(d, "src")))
		return yerr(e, d, "Mandatory parameter 'src' not found");
	dest = ynode_get(d, "dest");
	if (src->s[0] == '/' && m->server_imports)
		return yerr(e, src, "import of '%s': an absolute 'src' is not allowed on the server (import a folder of the payload)",
			    src->s);
	if (src->s[0] == '/' && !(from = strdup(src->s)))
		return oom_fail(e);
	else if (src->s[0] != '/')
		from = path_join_safe(m->root_dir, src->s, e);
	to = path_join_safe(m->root_dir, dest ? dest->s : "concord", e);
	rc = from && to ? flow_copy_tree(from, to, NULL, e) : -1;
	if (rc < 0 && from && to)
		rc = yerr(e, src, "import of '%s' failed: %s", src->s, e->msg);
	free(from);
	free(to);
	return rc;
}

int model_import_dirs(struct model *m, struct err *e)
{
	const struct ynode *r = m->docs[0].root, *imps;
	if (!r || r->kind != YN_MAP || !(imps = ynode_get(r, "imports")))
		return 0;
	if (compile_want(imps, YN_SEQ, "imports", e) < 0)
		return -1;
	for (size_t i = 0; i < imps->n; i++)
		if (import_one(m, imps->kids[i], e) < 0)
			return -1;
	return 0;
}
