/* The policy of an ansible run, enforced inside Ansible (ansible_policy.h). */
#include "flow/tasks/ansible_policy.h"

#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/el/el.h"
#include "flow/tasks/task.h"
#include "flow/vm_internal.h"

/* Concord's task_policy and process_cfg_policy, as Accord ships them: a callback plugin
 * that, once loaded, wraps the strategies' _queue_task (every task passes there before it
 * runs on a host).  Rules match as Concord's do: action and parameter names and values are
 * patterns matched from the start (Python's re.match); a rule's params match when, for each
 * of them, the first argument whose name matches has a string value matching one of its
 * values, and at least one does.  Beyond Concord: the action matches under its short name
 * too (ansible.builtin.copy as copy), arguments are matched as written and as templated
 * with the host's variables, and a denied task cannot be let pass with ignore_errors or
 * failed_when.  The verbose limits count the unique hosts and hosts × tasks when the
 * playbook starts, and the task results as they come. */
static const char policy_py[] =
    "import json, os, re\n"
    "from ansible.plugins.callback import CallbackBase\n"
    "from ansible.plugins.strategy import StrategyBase\n"
    "from ansible.playbook.block import Block\n"
    "from ansible.template import Templar\n"
    "from ansible.utils.display import Display\n"
    "\n"
    "display = Display()\n"
    "\n"
    "SKIP = ('meta', 'ansible.builtin.meta', 'gather_facts', 'ansible.builtin.gather_facts')\n"
    "BUILTIN = ('ansible.builtin.', 'ansible.legacy.')\n"
    "\n"
    "\n"
    "def load():\n"
    "    path = os.environ.get('ACCORD_ANSIBLE_POLICY')\n"
    "    if not path or not os.path.isfile(path):\n"
    "        return {}\n"
    "    with open(path) as f:\n"
    "        return json.load(f)\n"
    "\n"
    "\n"
    "POLICY = load()\n"
    "\n"
    "\n"
    "def match(pattern, s):\n"
    "    try:\n"
    "        return re.match(str(pattern), s) is not None\n"
    "    except re.error:\n"
    "        return str(pattern) == s\n"
    "\n"
    "\n"
    "def flat(values):\n"
    "    for v in values if isinstance(values, list) else [values]:\n"
    "        if isinstance(v, list):\n"
    "            for x in flat(v):\n"
    "                yield x\n"
    "        elif v is not None:\n"
    "            yield str(v)\n"
    "\n"
    "\n"
    "def params_match(params, args):\n"
    "    found = False\n"
    "    for p in params:\n"
    "        for k, v in args.items():\n"
    "            if match(p.get('name', ''), str(k)):\n"
    "                if not isinstance(v, str) or not any(match(x, str(v)) for x in flat(p.get('values'))):\n"
    "                    return False\n"
    "                found = True\n"
    "                break\n"
    "    return found\n"
    "\n"
    "\n"
    "def rule_matches(rule, actions, arg_sets):\n"
    "    if not any(match(rule.get('action', ''), a) for a in actions):\n"
    "        return False\n"
    "    return 'params' not in rule or any(params_match(rule['params'] or [], a) for a in arg_sets)\n"
    "\n"
    "\n"
    "class Safe(dict):\n"
    "    def __missing__(self, key):\n"
    "        return '{' + key + '}'\n"
    "\n"
    "\n"
    "def message(rule, args):\n"
    "    msg = rule.get('msg')\n"
    "    if not msg:\n"
    "        return ''\n"
    "    msg = ': ' + str(msg)\n"
    "    values = Safe((k, v) for k, v in rule.items() if k != 'msg')\n"
    "    values.update(args)\n"
    "    try:\n"
    "        return msg.format_map(values)\n"
    "    except Exception:\n"
    "        return msg\n"
    "\n"
    "\n"
    "def actions_of(task):\n"
    "    out = []\n"
    "    for a in (task.action, getattr(task, 'resolved_action', None)):\n"
    "        if a and a not in out:\n"
    "            out.append(a)\n"
    "        if a and a.startswith(BUILTIN) and a.split('.', 2)[2] not in out:\n"
    "            out.append(a.split('.', 2)[2])\n"
    "    return out\n"
    "\n"
    "\n"
    "def args_of(task, task_vars, loader):\n"
    "    raw = dict(task.args or {})\n"
    "    try:\n"
    "        done = Templar(loader=loader, variables=task_vars).template(raw, fail_on_undefined=True)\n"
    "        return [raw, done] if isinstance(done, dict) and done != raw else [raw]\n"
    "    except Exception:\n"
    "        return [raw]\n"
    "\n"
    "\n"
    "def verdict(task, task_vars, loader):\n"
    "    rules = POLICY.get('ansible') or {}\n"
    "    if not rules:\n"
    "        return None, None, {}\n"
    "    actions, arg_sets = actions_of(task), args_of(task, task_vars, loader)\n"
    "    for kind in ('allow', 'deny', 'warn'):\n"
    "        for r in rules.get(kind) or []:\n"
    "            if rule_matches(r, actions, arg_sets):\n"
    "                return kind, r, arg_sets[-1]\n"
    "    return None, None, {}\n"
    "\n"
    "\n"
    "def named(text):\n"
    "    name = POLICY.get('policy')\n"
    "    return \"%s (policy '%s')\" % (text, name) if name else text\n"
    "\n"
    "\n"
    "SAID = set()\n"
    "\n"
    "\n"
    "def say(text):\n"
    "    if text not in SAID:\n"
    "        SAID.add(text)\n"
    "        display.display(text, stderr=True)\n"
    "\n"
    "\n"
    "def queue_task(self, host, task, task_vars, play_context):\n"
    "    kind, rule, args = verdict(task, task_vars, self._loader)\n"
    "    if kind == 'deny':\n"
    "        msg = named(\"Task '%s (%s)' is forbidden by the task policy%s\" % (task.get_name(), task.action,\n"
    "                                                                         message(rule, args)))\n"
    "        say('[ERROR]: ' + msg)\n"
    "        task = task.copy(exclude_parent=False, exclude_tasks=False)\n"
    "        task.action = 'ansible.builtin.fail'\n"
    "        if hasattr(task, 'resolved_action'):\n"
    "            task.resolved_action = 'ansible.builtin.fail'\n"
    "        task.args = {'msg': msg}\n"
    "        task.ignore_errors = False\n"
    "        task.failed_when = []\n"
    "    elif kind == 'warn':\n"
    "        text = \"Potentially restricted task '%s (%s)' (task policy%s)\"\n"
    "        say('[WARNING]: ' + named(text % (task.get_name(), task.action, message(rule, args))))\n"
    "    return ORIGINAL(self, host, task, task_vars, play_context)\n"
    "\n"
    "\n"
    "ORIGINAL = getattr(StrategyBase._queue_task, '_accord_original', None) or StrategyBase._queue_task\n"
    "queue_task._accord_original = ORIGINAL\n"
    "StrategyBase._queue_task = queue_task\n"
    "\n"
    "\n"
    "def limit(v):\n"
    "    if isinstance(v, bool):\n"
    "        return None\n"
    "    if isinstance(v, int):\n"
    "        return v\n"
    "    if isinstance(v, str) and v.isdigit():\n"
    "        return int(v)\n"
    "    return None\n"
    "\n"
    "\n"
    "class CallbackModule(CallbackBase):\n"
    "    CALLBACK_VERSION = 2.0\n"
    "    CALLBACK_TYPE = 'notification'\n"
    "    CALLBACK_NAME = 'accord_policy'\n"
    "    CALLBACK_NEEDS_ENABLED = False\n"
    "\n"
    "    def __init__(self):\n"
    "        super(CallbackModule, self).__init__()\n"
    "        limits = ((POLICY.get('processCfg') or {}).get('arguments') or {}).get('ansibleVerboseLimits') or {}\n"
    "        self.max_hosts = limit(limits.get('maxHosts')) if isinstance(limits, dict) else None\n"
    "        self.max_work = limit(limits.get('maxTotalWork')) if isinstance(limits, dict) else None\n"
    "        self.done = 0\n"
    "\n"
    "    def quiet(self, why):\n"
    "        say('[ERROR]: ' + named('Disabling verbose output. ' + why))\n"
    "        self._display.verbosity = 0\n"
    "\n"
    "    def v2_playbook_on_start(self, playbook):\n"
    "        if self._display.verbosity == 0 or (self.max_hosts is None and self.max_work is None):\n"
    "            return\n"
    "        hosts, work = set(), 0\n"
    "        for play in playbook.get_plays():\n"
    "            names, n = hosts_of(play), tasks_of(play)\n"
    "            hosts.update(names)\n"
    "            work += len(names) * n\n"
    "        if self.max_hosts is not None and len(hosts) > self.max_hosts:\n"
    "            self.quiet('Too many hosts for verbose logging: the inventory has %d, the limit is %d.'\n"
    "                       % (len(hosts), self.max_hosts))\n"
    "        elif self.max_work is not None and work > self.max_work:\n"
    "            self.quiet('Too much work for verbose logging: %d expected (hosts times tasks), the limit is %d.'\n"
    "                       % (work, self.max_work))\n"
    "\n"
    "    def count(self, *args, **kwargs):\n"
    "        self.done += 1\n"
    "        if self._display.verbosity > 0 and self.max_work is not None and self.done > self.max_work:\n"
    "            self.quiet('Too much work for verbose logging: %d done so far, the limit is %d.'\n"
    "                       % (self.done, self.max_work))\n"
    "\n"
    "    v2_runner_on_ok = v2_runner_on_failed = v2_runner_on_skipped = v2_runner_on_unreachable = count\n"
    "\n"
    "\n"
    "def hosts_of(play):\n"
    "    try:\n"
    "        vm = play.get_variable_manager()\n"
    "        pattern = Templar(loader=play._loader, variables=vm.get_vars(play=play)).template(play.hosts)\n"
    "        return [h.name for h in vm._inventory.get_hosts(pattern)]\n"
    "    except Exception:\n"
    "        return []\n"
    "\n"
    "\n"
    "def tasks_of(play):\n"
    "    def walk(items):\n"
    "        n = 0\n"
    "        for t in items:\n"
    "            if isinstance(t, Block):\n"
    "                n += walk(t.block) + walk(t.rescue) + walk(t.always)\n"
    "            elif t.action not in SKIP:\n"
    "                n += 1\n"
    "        return n\n"
    "    return walk([b for b in play.compile() if b.has_tasks()])\n";

/* The rules the plugin needs, NEW, or NULL with e set (nothing to enforce: *on false). */
static json_t *rules_of(struct task_ctx *c, bool *on, struct err *e)
{
	const json_t *pol = c->h->policy, *rules = json_object_get(pol, "rules");
	json_t *ansible = json_object_get(rules, "ansible"), *cfg = json_object_get(rules, "processCfg"), *out,
	       *r = NULL;
	struct scope sc;
	struct el_env env;
	int rc = 0;

	*on = json_is_object(ansible) || json_is_object(cfg);
	if (!*on)
		return json_object();
	if (!(out = json_pack("{s:O?, s:O?}", "policy", json_object_get(pol, "policy"), "processCfg", cfg)))
		goto oom;
	if (json_is_object(ansible)) {
		scope_init(&sc, c->vm, c->t);
		scope_env(&sc, &env);
		rc = el_json_eval_value(ansible, 0, &env, &r, e);
		scope_cleanup(&sc);
		if (rc < 0) {
			json_decref(out);
			return NULL;
		}
		json_object_set_new(out, "ansible", r);
	}
	return out;
oom:
	oom_fail(e);
	return NULL;
}

int ansible_policy_write(struct task_ctx *c, const char *dir, bool *on, struct err *e)
{
	json_t *rules = rules_of(c, on, e);
	char path[4200], *text = NULL;
	int rc = -1;

	if (!rules) {
		err_prefix(e, "ansible: the policy's ansible rules");
		return -1;
	}
	if (!*on) {
		json_decref(rules);
		return 0;
	}
	if (!(text = json_dumps(rules, JSON_COMPACT))) {
		oom_fail(e);
		goto out;
	}
	str_fmt_cut(path, sizeof path, "%s/policy.json", dir);
	if (path_write_file(path, text, strlen(text), 0600, e) < 0)
		goto out;
	str_fmt_cut(path, sizeof path, "%s/_callbacks", dir);
	if (path_mkdirs(path, 0700, e) < 0)
		goto out;
	str_fmt_cut(path, sizeof path, "%s/_callbacks/accord_policy.py", dir);
	rc = path_write_file(path, policy_py, sizeof policy_py - 1, 0600, e);
out:
	free(text);
	json_decref(rules);
	return rc;
}
