/* Concord's lookup plugins for the ansible task (ansible_lookup.h). */
#include "flow/tasks/ansible_lookup.h"

#include <string.h>

#include "base/path.h"
#include "base/str.h"

/* What every plugin shares: one request, one answer, under the channel's lock. */
static const char common_py[] =
    "import fcntl, json, os\n"
    "from ansible.errors import AnsibleError\n"
    "\n"
    "def accord_ask(req):\n"
    "    w, r = os.environ.get('ACCORD_ANSIBLE_REQUEST_FD'), os.environ.get('ACCORD_ANSIBLE_REPLY_FD')\n"
    "    if not w or not r:\n"
    "        raise AnsibleError('Concord lookups cannot reach the server from here (dockerImage)')\n"
    "    with open(os.environ['ACCORD_ANSIBLE_LOCK'], 'a') as lock:\n"
    "        fcntl.flock(lock, fcntl.LOCK_EX)\n"
    "        os.write(int(w), (json.dumps({'request': req}) + '\\n').encode())\n"
    "        line = b''\n"
    "        while not line.endswith(b'\\n'):\n"
    "            chunk = os.read(int(r), 65536)\n"
    "            if not chunk:\n"
    "                raise AnsibleError('Accord did not answer the lookup')\n"
    "            line += chunk\n"
    "    answer = json.loads(line)\n"
    "    if 'error' in answer:\n"
    "        raise AnsibleError(answer['error'])\n"
    "    return answer['value']\n";

/* The start of a plugin: its imports (the shared part beside it) and run()'s head. */
#define LOOKUP_HEAD                                                                                                    \
	"import os, sys\n"                                                                                             \
	"from ansible.errors import AnsibleError\n"                                                                    \
	"from ansible.plugins.lookup import LookupBase\n"                                                              \
	"sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))\n"                                             \
	"from accord_lookup import accord_ask\n"                                                                       \
	"\n"                                                                                                           \
	"class LookupModule(LookupBase):\n"                                                                            \
	"    def run(self, terms, variables=None, **kwargs):\n"

/* concord_data_secret([org,] name, password): the data secret as text (Concord's). */
static const char secret_py[] = LOOKUP_HEAD
    "        if len(terms) < 2:\n"
    "            raise AnsibleError('Invalid lookup format. Expected: [orgName], secretName, storePassword')\n"
    "        org, name, pw = (None, terms[0], terms[1]) if len(terms) < 3 else (terms[0], terms[1], terms[2])\n"
    "        return [accord_ask({'type': 'secret', 'org': org, 'name': name, 'password': pw})]\n";

/* concord_public_key_secret([org,] name): a key pair's public key (Concord's). */
static const char public_key_py[] = LOOKUP_HEAD
    "        if len(terms) not in (1, 2):\n"
    "            raise AnsibleError('Invalid lookup format. Expected: [orgName], secretName')\n"
    "        org, name = (None, terms[0]) if len(terms) == 1 else (terms[0], terms[1])\n"
    "        return [accord_ask({'type': 'public_key', 'org': org, 'name': name})]\n";

/* concord_inventory(inventory, "query [result=N]", params): the query's rows, or the first
 * with result (Concord's). */
static const char inventory_py[] = LOOKUP_HEAD
    "        from ansible.parsing.splitter import parse_kv\n"
    "        if len(terms) < 2:\n"
    "            raise AnsibleError('Invalid lookup format. Expected: inventoryName, queryName')\n"
    "        parts = terms[1].split(' ', 1)\n"
    "        opts = parse_kv(parts[1]) if len(parts) > 1 else {}\n"
    "        params = terms[2] if len(terms) > 2 else {}\n"
    "        rows = accord_ask({'type': 'inventory', 'inventory': terms[0], 'query': parts[0], 'params': params})\n"
    "        return [rows[0] if int(opts.get('result', -1)) != -1 and rows else rows]\n";

int ansible_lookup_write(const char *dir, struct err *e)
{
	static const struct {
		const char *name, *text;
		size_t len;
	} files[] = {{"accord_lookup.py", common_py, sizeof common_py - 1},
		     {"concord_data_secret.py", secret_py, sizeof secret_py - 1},
		     {"concord_secret.py", secret_py, sizeof secret_py - 1},
		     {"concord_public_key_secret.py", public_key_py, sizeof public_key_py - 1},
		     {"concord_inventory.py", inventory_py, sizeof inventory_py - 1}};
	char path[4300];

	str_fmt_cut(path, sizeof path, "%s/lookups", dir);
	if (path_mkdirs(path, 0700, e) < 0)
		return -1;
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		str_fmt_cut(path, sizeof path, "%s/lookups/%s", dir, files[i].name);
		if (path_write_file(path, files[i].text, files[i].len, 0600, e) < 0)
			return -1;
	}
	return 0;
}

static json_t *answer_task(struct task_ctx *c, const char *task, const char *method, json_t *args, bool secret)
{
	const struct flow_host *h = c->h;
	struct err e = {0};
	json_t *out = NULL, *answer;

	if (!args)
		return json_pack("{s:s}", "error", "out of memory");
	if (h->ops->server_task(h->ctx, task, method, args, &out, NULL, &e) < 0) {
		json_decref(args);
		return json_pack("{s:s}", "error", e.msg[0] ? e.msg : "the lookup failed");
	}
	json_decref(args);
	if (secret && json_is_string(out) && h->ops->sensitive)
		h->ops->sensitive(h->ctx, json_string_value(out), true);
	answer = json_pack("{s:o?}", "value", out);
	return answer ? answer : json_pack("{s:s}", "error", "out of memory");
}

json_t *ansible_lookup_answer(void *ctx, json_t *req)
{
	const char *type = json_string_value(json_object_get(req, "type"));
	json_t *v;

	if (type && strcmp(type, "secret") == 0) {
		if (!json_is_string(json_object_get(req, "name")))
			return json_pack("{s:s}", "error", "concord_data_secret: the secret's name must be a string");
		v = json_object_get(req, "password");
		return answer_task(ctx, "crypto", "exportAsString",
				   json_pack("[O, O, O]",
					     json_object_get(req, "org") ? json_object_get(req, "org") : json_null(),
					     json_object_get(req, "name"), json_is_string(v) ? v : json_null()),
				   true);
	}
	if (type && strcmp(type, "public_key") == 0) {
		if (!json_is_string(json_object_get(req, "name")))
			return json_pack("{s:s}", "error", "concord_public_key_secret: the secret's name must be a string");
		v = json_object_get(req, "org");
		return answer_task(ctx, "crypto", "publicKey",
				   json_pack("[O, O]", json_is_string(v) ? v : json_null(), json_object_get(req, "name")),
				   false);
	}
	if (type && strcmp(type, "inventory") == 0) {
		v = json_object_get(req, "params");
		if (!json_is_string(json_object_get(req, "inventory")) ||
		    !json_is_string(json_object_get(req, "query")))
			return json_pack("{s:s}", "error",
					 "concord_inventory: the inventory and query names must be strings");
		return answer_task(ctx, "inventory", "query",
				   json_pack("[O, O, o]", json_object_get(req, "inventory"),
					     json_object_get(req, "query"),
					     json_is_object(v) ? json_incref(v) : json_object()),
				   false);
	}
	return json_pack("{s:s}", "error", "unknown Accord lookup request");
}
