/* The files of an ansible run (ansible_prep.h). */
#include "flow/tasks/ansible_prep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/task.h"

/* Accord's configuration: Concord's defaults (docs/flows.md "ansible"), with every folder
 * Ansible writes to inside the working directory (dir: the run's absolute folder).  The
 * hosts' temporary folder is under $HOME, expanded by each host's shell: a remote user's
 * home there, the working directory (the runner's HOME) on a local connection, where "~"
 * would be the home folder of the runner's user in the password database (/nonexistent
 * for nobody). */
static json_t *cfg_defaults(const char *dir)
{
	char tmp[4200], cb[4200], cp[4200], lk[4200];
	str_fmt_cut(tmp, sizeof tmp, "%s/tmp", dir);
	str_fmt_cut(cb, sizeof cb, "%s/_callbacks", dir);
	str_fmt_cut(cp, sizeof cp, "%s/cp", dir);
	str_fmt_cut(lk, sizeof lk, "%s/lookups", dir);
	return json_pack("{s:{s:b, s:b, s:s, s:s, s:i, s:s, s:s, s:b}, s:{s:b, s:s}}", "defaults", "host_key_checking",
			 0, "retry_files_enabled", 1, "remote_tmp", "$HOME/.ansible/tmp", "local_tmp", tmp, "timeout", 120,
			 "callback_plugins", cb, "lookup_plugins", lk, "nocolor", 1, "ssh_connection", "pipelining", 1,
			 "control_path_dir", cp);
}

/* Sets section.key = v, except that the user's callback_plugins come after Accord's folder
 * (as Concord merges them): replaced, the run would lose its events, outVars and stats. */
static int add_callbacks(json_t *into, const char *section, const char *key, json_t *v)
{
	const char *ours = json_string_value(json_object_get(into, key));
	char *theirs, *both = NULL;
	size_t n;
	int rc = -1;

	if (strcmp(section, "defaults") != 0 || strcmp(key, "callback_plugins") != 0 || !ours)
		return json_object_set(into, key, v);
	if (json_is_null(v))
		return 0;
	if (!(theirs = task_text(v)))
		return -1;
	n = strlen(ours) + strlen(theirs) + 2;
	if (!*theirs)
		rc = 0;
	else if ((both = malloc(n))) {
		str_fmt_cut(both, n, "%s:%s", ours, theirs);
		rc = json_object_set_new(into, key, json_string(both));
	}
	free(both);
	free(theirs);
	return rc;
}

static int cfg_merge(json_t *cfg, json_t *config, struct err *e)
{
	const char *section, *key;
	json_t *kv, *v;

	if (!config || json_is_null(config))
		return 0;
	if (!json_is_object(config))
		return err_set(e, ERR_INVALID,
			       "ansible: 'config' must be a map of sections, e.g. {defaults: {forks: 50}}");
	json_object_foreach(config, section, kv)
	{
		json_t *into = json_object_get(cfg, section);
		if (!json_is_object(kv))
			return err_set(e, ERR_INVALID, "ansible: config section '%s' must be a map of settings",
				       section);
		if (strpbrk(section, "[]\n\r"))
			return err_set(e, ERR_INVALID, "ansible: bad config section name '%s'", section);
		if (!into) {
			into = json_object();
			json_object_set_new(cfg, section, into);
		}
		json_object_foreach(kv, key, v)
		{
			if (strpbrk(key, "=\n\r"))
				return err_set(e, ERR_INVALID, "ansible: bad config key '%s'", key);
			if (add_callbacks(into, section, key, v) < 0)
				return oom_fail(e);
		}
	}
	return 0;
}

static int cfg_render(struct buf *b, json_t *cfg, struct err *e)
{
	const char *section, *key;
	json_t *kv, *v;

	json_object_foreach(cfg, section, kv)
	{
		if (buf_printf(b, e, "[%s]\n", section) < 0)
			return -1;
		json_object_foreach(kv, key, v)
		{
			char *text = json_is_null(v) ? NULL : task_text(v);
			int rc = 0;
			if (text && strpbrk(text, "\n\r"))
				rc = err_set(e, ERR_INVALID, "ansible: config value of '%s' has a line break", key);
			else if (text)
				rc = buf_printf(b, e, "%s = %s\n", key, text);
			free(text);
			if (rc < 0)
				return -1;
		}
		if (buf_printf(b, e, "\n") < 0)
			return -1;
	}
	return 0;
}

char *ansible_cfg_text(const char *dir, json_t *config, size_t *len, struct err *e)
{
	json_t *cfg = cfg_defaults(dir);
	struct buf b;
	char *text = NULL;

	if (!cfg) {
		oom_fail(e);
		return NULL;
	}
	buf_init(&b, 1u << 20);
	if (cfg_merge(cfg, config, e) == 0 && cfg_render(&b, cfg, e) == 0 && (text = malloc(b.len + 1))) {
		memcpy(text, b.data, b.len);
		text[b.len] = '\0';
		*len = b.len;
	}
	buf_cleanup(&b);
	json_decref(cfg);
	return text;
}

/* Vars of a host or group that connects locally get ansible_remote_tmp inside the working
 * directory (the runner may write nowhere else; the default, ~/.ansible/tmp, expands to
 * the user's real home folder), unless they set it. */
static void local_tmp(json_t *vars, const char *remote_tmp)
{
	const char *conn = json_string_value(json_object_get(vars, "ansible_connection"));
	if (conn && strcmp(conn, "local") == 0 && !json_object_get(vars, "ansible_remote_tmp"))
		json_object_set_new(vars, "ansible_remote_tmp", json_string(remote_tmp));
}

/* hosts: [h…] or {h: vars}; every host gets its _meta.hostvars. */
static json_t *inv_hosts(const char *group, json_t *hosts, json_t *hostvars, const char *rtmp, struct err *e)
{
	json_t *out = json_object(), *h;
	const char *name;
	size_t i;

	if (json_is_object(hosts)) {
		json_object_foreach(hosts, name, h)
		{
			json_t *vars = json_is_object(h) ? json_deep_copy(h) : json_object();
			json_object_update_missing(vars, json_object_get(hostvars, name));
			local_tmp(vars, rtmp);
			json_object_set_new(out, name, vars);
		}
		return out;
	}
	json_array_foreach(hosts, i, h)
	{
		if (!json_is_string(h) && !json_is_integer(h)) {
			json_decref(out);
			err_set(e, ERR_INVALID, "ansible: inventory group '%s': hosts must be names", group);
			return NULL;
		}
		char *n = task_text(h);
		json_t *vars = json_object_get(hostvars, n);
		vars = json_is_object(vars) ? json_deep_copy(vars) : json_object();
		local_tmp(vars, rtmp);
		json_object_set_new(out, n, vars);
		free(n);
	}
	return out;
}

static json_t *inv_group(const char *name, json_t *g, json_t *hostvars, const char *rtmp, struct err *e)
{
	json_t *out = json_object(), *v, *c;
	size_t i;

	if (json_is_array(g)) /* {group: [h…]}: the hosts alone */
		g = json_pack("{s:O}", "hosts", g);
	else
		json_incref(g);
	if (!json_is_object(g)) {
		json_decref(g);
		json_decref(out);
		err_set(e, ERR_INVALID, "ansible: inventory group '%s' must be a map (hosts, vars, children)", name);
		return NULL;
	}
	if ((v = json_object_get(g, "hosts"))) {
		json_t *hosts = inv_hosts(name, v, hostvars, rtmp, e);
		if (!hosts)
			goto fail;
		json_object_set_new(out, "hosts", hosts);
	}
	if ((v = json_object_get(g, "vars"))) {
		if (!json_is_object(v)) {
			err_set(e, ERR_INVALID, "ansible: inventory group '%s': vars must be a map", name);
			goto fail;
		}
		v = json_deep_copy(v);
		local_tmp(v, rtmp);
		json_object_set_new(out, "vars", v);
	}
	if ((v = json_object_get(g, "children"))) {
		json_t *ch = json_object();
		json_object_set_new(out, "children", ch);
		json_array_foreach(v, i, c) if (json_is_string(c))
		    json_object_set_new(ch, json_string_value(c), json_object());
	}
	json_decref(g);
	return out;
fail:
	json_decref(g);
	json_decref(out);
	return NULL;
}

char *ansible_inventory_text(json_t *inv, const char *dir, struct err *e)
{
	char rtmp[4200];
	json_t *hostvars = json_object_get(json_object_get(inv, "_meta"), "hostvars"), *out, *g;
	const char *name;
	char *text;
	int rc = 0;

	str_fmt_cut(rtmp, sizeof rtmp, "%s/remote_tmp", dir);
	if (!json_is_object(inv)) {
		err_set(e, ERR_INVALID, "ansible: an inline inventory must be a map of groups");
		return NULL;
	}
	if (!(out = json_object())) {
		oom_fail(e);
		return NULL;
	}
	json_object_foreach(inv, name, g)
	{
		json_t *grp;
		if (strcmp(name, "_meta") == 0)
			continue;
		if (!(grp = inv_group(name, g, hostvars, rtmp, e))) {
			rc = -1;
			break;
		}
		json_object_set_new(out, name, grp);
	}
	text = rc == 0 ? json_dumps(out, JSON_INDENT(1)) : NULL;
	if (rc == 0 && !text)
		oom_fail(e);
	json_decref(out);
	return text;
}

/* Out variables (registered per host) and the statistics of the run, as Concord's
 * concord_out_vars callback and its stats helper collect them, into ACCORD_ANSIBLE_OUT. */
static const char callback_py[] =
    "import json, os\n"
    "from ansible.plugins.callback import CallbackBase\n"
    "\n"
    "class CallbackModule(CallbackBase):\n"
    "    CALLBACK_VERSION = 2.0\n"
    "    CALLBACK_TYPE = 'aggregate'\n"
    "    CALLBACK_NAME = 'accord_out'\n"
    "    CALLBACK_NEEDS_ENABLED = False\n"
    "\n"
    "    def __init__(self):\n"
    "        super(CallbackModule, self).__init__()\n"
    "        names = os.environ.get('ACCORD_ANSIBLE_OUT_VARS', '')\n"
    "        self.names = [n.strip() for n in names.split(',') if n.strip()]\n"
    "        self.path = os.environ.get('ACCORD_ANSIBLE_OUT')\n"
    "        self.vm = None\n"
    "\n"
    "    def v2_playbook_on_play_start(self, play):\n"
    "        self.vm = play.get_variable_manager()\n"
    "\n"
    "    def v2_playbook_on_stats(self, stats):\n"
    "        failures = list(stats.failures.keys())\n"
    "        dark = [h for h in stats.dark.keys() if h not in failures]\n"
    "        changed = [h for h in stats.changed.keys() if h not in failures and h not in dark]\n"
    "        ok = [h for h in stats.ok.keys() if h not in failures and h not in dark and h not in changed]\n"
    "        skipped = [h for h in stats.skipped.keys()\n"
    "                   if h not in failures and h not in dark and h not in changed and h not in ok]\n"
    "        out = {'stats': {'ok': sorted(ok), 'failures': sorted(failures), 'unreachable': sorted(dark),\n"
    "                         'changed': sorted(changed), 'skipped': sorted(skipped)}, 'vars': {}}\n"
    "        facts = self.vm._nonpersistent_fact_cache if self.vm else {}\n"
    "        for name in self.names:\n"
    "            out['vars'][name] = dict((h, v[name]) for h, v in facts.items() if name in v)\n"
    "        if self.path:\n"
    "            with open(self.path, 'w') as f:\n"
    "                json.dump(out, f, default=str)\n";

/* ANSIBLE events as Concord's concord_events callback records them: one when a task starts
 * on a host (phase "pre", status RUNNING) and one with its outcome (phase "post", status
 * OK, CHANGED, FAILED, UNREACHABLE or SKIPPED, the duration in ms, the result without
 * Ansible's internal keys, long strings and lists cut), with Concord's playbookId, playId
 * and taskId (UUIDs made for this run); and Concord's playbook start and end events,
 * ANSIBLE_PLAYBOOK_INFO (the plays with their host counts and tasks, gather_facts and meta
 * left out, the unique hosts and the total work: hosts × tasks) and ANSIBLE_PLAYBOOK_RESULT
 * (OK or FAILED, the duration in ms).  Written a JSON object a line to the descriptor
 * ACCORD_ANSIBLE_EVENTS_FD (the tool layer's event channel, subtypes as {eventType, data}),
 * or in a container to the file ACCORD_ANSIBLE_EVENTS_FILE. */
static const char events_py[] =
    "import fcntl, json, os, time, uuid\n"
    "from ansible.playbook.block import Block\n"
    "from ansible.plugins.callback import CallbackBase\n"
    "\n"
    "MAX_STR, MAX_LIST = 1024, 25\n"
    "SKIP_ACTIONS = ('meta', 'ansible.builtin.meta', 'gather_facts', 'ansible.builtin.gather_facts')\n"
    "\n"
    "def cut(v):\n"
    "    if isinstance(v, str) and len(v) - MAX_STR > MAX_STR // 10:\n"
    "        return v[:MAX_STR] + '...[skipped %d bytes]' % (len(v) - MAX_STR)\n"
    "    if isinstance(v, (list, tuple)):\n"
    "        over = len(v) - MAX_LIST\n"
    "        out = [cut(x) for x in (v[:MAX_LIST] if over > MAX_LIST // 10 else v)]\n"
    "        return out + ['[skipped %d lines]' % over] if over > MAX_LIST // 10 else out\n"
    "    if isinstance(v, dict):\n"
    "        return dict((k, cut(x)) for k, x in v.items()\n"
    "                    if not (isinstance(k, str) and k.startswith('_ansible_'))\n"
    "                    and k not in ('invocation', 'diff', 'exception'))\n"
    "    return v\n"
    "\n"
    "class CallbackModule(CallbackBase):\n"
    "    CALLBACK_VERSION = 2.0\n"
    "    CALLBACK_TYPE = 'notification'\n"
    "    CALLBACK_NAME = 'accord_events'\n"
    "    CALLBACK_NEEDS_ENABLED = False\n"
    "\n"
    "    def __init__(self):\n"
    "        super(CallbackModule, self).__init__()\n"
    "        fd = os.environ.get('ACCORD_ANSIBLE_EVENTS_FD')\n"
    "        path = os.environ.get('ACCORD_ANSIBLE_EVENTS_FILE')\n"
    "        utf8 = {'buffering': 1, 'encoding': 'utf-8'}\n"
    "        self.out = os.fdopen(int(fd), 'w', **utf8) if fd else open(path, 'a', **utf8) if path else None\n"
    "        lock = os.environ.get('ACCORD_ANSIBLE_LOCK')\n"
    "        self.lock = open(lock, 'a') if lock and fd else None\n"
    "        self.started = {}\n"
    "        self.playbook = None\n"
    "        self.playbook_id = str(uuid.uuid4())\n"
    "        self.began = time.time()\n"
    "        self.ids = {}\n"
    "        self.play = None\n"
    "\n"
    "    def uid(self, obj):\n"
    "        return self.ids.setdefault(obj._uuid, str(uuid.uuid4()))\n"
    "\n"
    "    def send(self, data):\n"
    "        if self.out:\n"
    "            # a lone surrogate (bytes Python could not decode) as '?': JSON parsers refuse it\n"
    "            line = json.dumps(data, default=str, ensure_ascii=False) + '\\n'\n"
    "            line = line.encode('utf-8', 'replace').decode('utf-8')\n"
    "            if self.lock:\n"
    "                fcntl.flock(self.lock, fcntl.LOCK_EX)\n"
    "            try:\n"
    "                self.out.write(line)\n"
    "            finally:\n"
    "                if self.lock:\n"
    "                    fcntl.flock(self.lock, fcntl.LOCK_UN)\n"
    "\n"
    "    def base(self, host, task, status, phase):\n"
    "        return {'status': status, 'playbook': self.playbook, 'host': host.name,\n"
    "                'hostGroup': ', '.join(g.name for g in host.get_groups() if g.name != 'all'),\n"
    "                'task': task.get_name(), 'action': task.action,\n"
    "                'correlationId': host.name + task._uuid, 'phase': phase,\n"
    "                'playbookId': self.playbook_id, 'playId': self.uid(self.play) if self.play else None,\n"
    "                'taskId': self.uid(task), 'isHandler': type(task).__name__ == 'Handler'}\n"
    "\n"
    "    def tasks_of(self, play):\n"
    "        out, seen = [], set()\n"
    "        def walk(items):\n"
    "            for t in items:\n"
    "                if isinstance(t, Block):\n"
    "                    walk(t.block)\n"
    "                    walk(t.rescue)\n"
    "                    walk(t.always)\n"
    "                elif t.action not in SKIP_ACTIONS and t._uuid not in seen:\n"
    "                    seen.add(t._uuid)\n"
    "                    out.append({'id': self.uid(t), 'task': t.get_name()})\n"
    "        walk([b for b in play.compile() if b.has_tasks()])\n"
    "        return out\n"
    "\n"
    "    def hosts_of(self, play):\n"
    "        try:\n"
    "            vm = play.get_variable_manager()\n"
    "            from ansible.template import Templar\n"
    "            pattern = Templar(loader=play._loader, variables=vm.get_vars(play=play)).template(play.hosts)\n"
    "            return [h.name for h in vm._inventory.get_hosts(pattern)]\n"
    "        except Exception:\n"
    "            return []\n"
    "\n"
    "    def play_name(self, play):\n"
    "        name = play.get_name()\n"
    "        try:\n"
    "            from ansible.template import Templar\n"
    "            vm = play.get_variable_manager()\n"
    "            v = Templar(loader=play._loader, variables=vm.get_vars(play=play)).template(name)\n"
    "            return v if isinstance(v, str) else str(v)\n"
    "        except Exception:\n"
    "            return name\n"
    "\n"
    "    def v2_playbook_on_start(self, playbook):\n"
    "        self.playbook = playbook._file_name\n"
    "        self.began = time.time()\n"
    "        plays, hosts, work = [], set(), 0\n"
    "        for p in playbook.get_plays():\n"
    "            names, tasks = self.hosts_of(p), self.tasks_of(p)\n"
    "            plays.append({'id': self.uid(p), 'play': self.play_name(p), 'hosts': len(names), 'tasks': tasks})\n"
    "            hosts.update(names)\n"
    "            work += len(names) * len(tasks)\n"
    "        self.send({'eventType': 'ANSIBLE_PLAYBOOK_INFO', 'data': {'playbook': self.playbook,\n"
    "                   'playbookId': self.playbook_id, 'uniqueHosts': len(hosts), 'totalWork': work,\n"
    "                   'plays': plays}})\n"
    "\n"
    "    def v2_playbook_on_stats(self, stats):\n"
    "        failed = len(stats.failures) > 0 or len(stats.dark) > 0\n"
    "        self.send({'eventType': 'ANSIBLE_PLAYBOOK_RESULT', 'data': {'playbook': self.playbook,\n"
    "                   'playbookId': self.playbook_id, 'status': 'FAILED' if failed else 'OK',\n"
    "                   'duration': int((time.time() - self.began) * 1000)}})\n"
    "\n"
    "    def v2_playbook_on_play_start(self, play):\n"
    "        self.play = play\n"
    "\n"
    "    def v2_runner_on_start(self, host, task):\n"
    "        self.started[host.name + task._uuid] = time.time()\n"
    "        self.send(self.base(host, task, 'RUNNING', 'pre'))\n"
    "\n"
    "    def post(self, result, status, **extra):\n"
    "        data = self.base(result._host, result._task, status, 'post')\n"
    "        began = self.started.pop(data['correlationId'], None)\n"
    "        if began is not None:\n"
    "            data['duration'] = int((time.time() - began) * 1000)\n"
    "        data['result'] = cut(result._result)\n"
    "        data.update(extra)\n"
    "        self.send(data)\n"
    "\n"
    "    def v2_runner_on_ok(self, result, **kwargs):\n"
    "        self.post(result, 'CHANGED' if result._result.get('changed') else 'OK')\n"
    "\n"
    "    def v2_runner_on_failed(self, result, ignore_errors=False, **kwargs):\n"
    "        self.post(result, 'FAILED', ignore_errors=bool(ignore_errors))\n"
    "\n"
    "    def v2_runner_on_unreachable(self, result):\n"
    "        self.post(result, 'UNREACHABLE')\n"
    "\n"
    "    def v2_runner_on_skipped(self, result):\n"
    "        self.post(result, 'SKIPPED')\n"
    "\n"
    "    def v2_runner_on_async_failed(self, result, **kwargs):\n"
    "        self.post(result, 'FAILED')\n";

/* enableLogFiltering: Concord's concord_protectdata, Ansible's default output with every
 * value whose key or text names a password, a secret or credentials printed as ******, and
 * no_log for the tasks whose arguments do. */
static const char protect_py[] =
    "from collections.abc import Mapping\n"
    "from ansible.plugins.callback.default import CallbackModule as Default\n"
    "\n"
    "DOCUMENTATION = '''\n"
    "    name: accord_protectdata\n"
    "    type: stdout\n"
    "    short_description: the default output with sensitive values masked\n"
    "    description: Concord's concord_protectdata, as Accord ships it.\n"
    "    extends_documentation_fragment:\n"
    "      - default_callback\n"
    "      - result_format_callback\n"
    "'''\n"
    "\n"
    "WORDS = ('password', 'pwd', 'credentials', 'secret', 'ansible_password', 'vaultpassword')\n"
    "\n"
    "def sensitive(v):\n"
    "    t = str(v).lower()\n"
    "    return any(w in t for w in WORDS)\n"
    "\n"
    "def hide(result):\n"
    "    out = {}\n"
    "    for k, v in result.items():\n"
    "        if isinstance(v, Mapping):\n"
    "            out[k] = hide(v)\n"
    "        elif sensitive(k) or sensitive(v):\n"
    "            out[k] = '******'\n"
    "        else:\n"
    "            out[k] = v\n"
    "    return out\n"
    "\n"
    "class CallbackModule(Default):\n"
    "    CALLBACK_VERSION = 2.0\n"
    "    CALLBACK_TYPE = 'stdout'\n"
    "    CALLBACK_NAME = 'accord_protectdata'\n"
    "\n"
    "    def __init__(self):\n"
    "        super(CallbackModule, self).__init__()\n"
    "        self._display.display('Log filter is enabled...')\n"
    "\n"
    "    def v2_playbook_on_task_start(self, task, is_conditional):\n"
    "        if any(sensitive(v) for v in (task.args or {}).values()):\n"
    "            self._display.display('*********** THIS TASK CONTAINS SENSITIVE INFORMATION. ENABLING NO_LOG '\n"
    "                                  '******************')\n"
    "            task.no_log = True\n"
    "        super(CallbackModule, self).v2_playbook_on_task_start(task, is_conditional)\n"
    "\n"
    "    def _dump_results(self, result, *args, **kwargs):\n"
    "        return super(CallbackModule, self)._dump_results(hide(result), *args, **kwargs)\n";

int ansible_write_protect(const char *dir, struct err *e)
{
	char path[4200];
	str_fmt_cut(path, sizeof path, "%s/_callbacks", dir);
	if (path_mkdirs(path, 0700, e) < 0)
		return -1;
	str_fmt_cut(path, sizeof path, "%s/_callbacks/accord_protectdata.py", dir);
	return path_write_file(path, protect_py, sizeof protect_py - 1, 0600, e);
}

int ansible_write_callbacks(const char *dir, bool events, struct err *e)
{
	char path[4200];
	str_fmt_cut(path, sizeof path, "%s/_callbacks", dir);
	if (path_mkdirs(path, 0700, e) < 0)
		return -1;
	str_fmt_cut(path, sizeof path, "%s/_callbacks/accord_out.py", dir);
	if (path_write_file(path, callback_py, sizeof callback_py - 1, 0600, e) < 0)
		return -1;
	if (!events)
		return 0;
	str_fmt_cut(path, sizeof path, "%s/_callbacks/accord_events.py", dir);
	return path_write_file(path, events_py, sizeof events_py - 1, 0600, e);
}
