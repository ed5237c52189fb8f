"""Who a trigger-started process acts as (issue 23 item 1).  Every cron-triggered process
runs as the one built-in `cron` user, and a process's session token acts as its initiator:
without more, a cron flow of one org reached (listed, read, stopped) the cron processes of
every other org.  Here two PRIVATE orgs each have a PRIVATE project whose repository has
cron and generic triggers; a cron-started flow of org A turns its session token (and the
concord task) against org B's trigger processes and is refused, while what Concord allows
within its own project still works.  Rights an org gives the user `cron` serve that org's
cron processes only; a cron trigger's `runAs: {withSecret}` runs the process as the owner
of the API key in a secret of its own project (Concord's runAs).

The repositories are local git folders (repo_util.GitRepo); the server runs the cron
scheduler on a test clock (--test-cron-minute-seconds, as test_triggers.py)."""
import re

import pytest

from conftest import ADMIN_KEY, Client, unique, wait_process
from proc_util import make_org, make_project, make_team, wait_for
from test_triggers import repos  # noqa: F401 (a fixture, used as an argument)

MINUTE_S = 2
ARGS = ["--test-cron-minute-seconds", str(MINUTE_S), "--repo-fetch-max-age", "0", "--workers", "12"]

VICTIM_FLOW = """
flows:
  victim:
    - log: "VICTIM ${txId}"
    - task: sleep
      in:
        duration: 600
triggers:
  - cron:
      spec: "* * * * *"
      entryPoint: victim
  - %s:
      version: 2
      entryPoint: victim
"""


@pytest.fixture
def srv(fresh_server):
    return fresh_server(args=ARGS).start()


class Tenant:
    """A PRIVATE org with a PRIVATE project, a user who may start processes in it (WRITER),
    and the repositories of the project."""

    def __init__(self, admin):
        self.admin = admin
        self.org, self.org_id = make_org(admin, visibility="PRIVATE")
        self.proj, self.proj_id = make_project(admin, self.org, visibility="PRIVATE", rawPayloadMode="EVERYONE")
        self.user = new_user(admin)
        self.team = make_team(admin, self.org, [(self.user, "MEMBER")], self.proj, "WRITER")

    def path(self, rest=""):
        return "/api/v1/org/%s/project/%s/repository%s" % (self.org, self.proj, rest)

    def add_repo(self, repo):
        name = unique("repo")
        r = self.admin.post(self.path(), json={"name": name, "url": repo.url, "branch": "main"})
        assert r.status_code == 200, r.text
        return name

    def set_triggers(self, name, enabled):
        cur = self.admin.get(self.path("/" + name)).json()
        body = {k: cur[k] for k in ("id", "name", "url", "branch") if k in cur}
        body["triggersDisabled"] = not enabled
        r = self.admin.post(self.path(), json=body)
        assert r.status_code == 200, r.text
        if enabled:
            assert self.admin.post(self.path("/%s/refresh" % name)).status_code == 200

    def processes(self):
        r = self.admin.get("/api/v2/process", params={"projectId": self.proj_id, "limit": 1000})
        assert r.status_code == 200, r.text
        return r.json()

    def cron_processes(self, repo_name):
        return [p for p in self.processes() if p["initiator"] == "cron" and p.get("repoName") == repo_name]


def new_user(admin):
    name = unique("user")
    r = admin.post("/api/v1/user", json={"username": name, "type": "LOCAL"})
    assert r.status_code == 200, r.text
    uid = r.json()["id"]
    r = admin.post("/api/v1/apikey", json={"username": name})
    assert r.status_code == 200, r.text
    return Client(admin.url, r.json()["key"], name, uid, r.json()["key"])


FORM_FLOW = """
flows:
  asker:
    - form: approval
      runAs:
        username: cron
      fields:
        - approved: {type: boolean}
    - log: "APPROVED ${approval.approved}"
triggers:
  - cron:
      spec: "* * * * *"
      entryPoint: asker
"""


def form_victim(t, repos):
    """A cron process of t's project waiting on a form that names `cron` in its runAs."""
    name = t.add_repo(repos({"concord.yml": FORM_FLOW}))
    pid = wait_for(lambda: t.cron_processes(name), timeout=30)[-1]["instanceId"]
    t.set_triggers(name, False)
    assert wait_process(t.admin, pid, statuses=("SUSPENDED",), timeout=60)["status"] == "SUSPENDED"
    return pid


def victims(t, repos, src=None):
    """Starts one cron and one generic (sent by t.user) victim in t's project; returns
    (cron instance id, generic instance id) once both run, the triggers disabled again."""
    src = src or unique("ev")
    name = t.add_repo(repos({"concord.yml": VICTIM_FLOW % src}))
    r = t.user.post("/api/v1/events/%s" % src, json={"x": 1})
    assert r.status_code == 200, r.text
    [generic] = r.json()["instanceIds"]
    first = wait_for(lambda: t.cron_processes(name), timeout=30)[-1]["instanceId"]
    t.set_triggers(name, False)
    for pid in (first, generic):
        assert wait_process(t.admin, pid, statuses=("RUNNING",), timeout=60)["status"] == "RUNNING"
    return first, generic


def http_step(label, method, url, body=None):
    """An API call with the process's session token; body: a JSON object's YAML text."""
    return """
    - task: http
      in:
        method: %s
        url: "${server}%s"
        headers:
          X-Concord-SessionToken: "${processInfo.sessionToken}"%s
        response: string
        ignoreErrors: true
      out: r
    - log: "R %s ${r.statusCode} ${r.content}"
""" % (method, url, "\n        request: json\n        body: %s" % body if body else "", label)


def task_step(label, step):
    return """
    - try:
%s
        - log: "T %s ok"
      error:
        - log: "T %s refused: ${lastError.message}"
""" % ("\n".join("        " + line for line in step.strip("\n").splitlines()), label, label)


def attack_flow(server, requests, tasks):
    steps = "".join(http_step(*r) for r in requests) + "".join(task_step(*t) for t in tasks)
    return """
configuration:
  arguments:
    server: "%s"
flows:
  attack:
%s
    - log: "ATTACK DONE"
  child:
    - log: "CHILD RAN"
triggers:
  - cron:
      spec: "* * * * *"
      entryPoint: attack
""" % (server, steps)


def run_attack(t, repos, flow):
    """Adds a repository whose cron trigger runs `attack` in t's project; returns the log
    of the first attack process (the trigger disabled again)."""
    name = t.add_repo(repos({"concord.yml": flow, "child/concord.yml": "flows:\n  default:\n    - log: CHILD RAN\n"}))
    pid = wait_for(lambda: t.cron_processes(name), timeout=30)[-1]["instanceId"]
    t.set_triggers(name, False)
    p = wait_process(t.admin, pid, timeout=120)
    log = t.admin.get("/api/v1/process/%s/log" % pid).text
    assert p["status"] == "FINISHED" and "ATTACK DONE" in log, log
    return log


def results(log):
    """{label: (status code, content)} of the R lines, {label: text} of the T lines."""
    http = {m[0]: (int(m[1]), m[2]) for m in re.findall(r"R (\S+) (\d+) ?(.*)", log)}
    tasks = {m[0]: m[1] for m in re.findall(r"T (\S+) (.*)", log)}
    return http, tasks


def test_cron_process_reaches_no_other_projects_processes(srv, repos):
    admin = Client(srv.url, ADMIN_KEY, "admin")
    a, b = Tenant(admin), Tenant(admin)
    a_cron, a_generic = victims(a, repos)
    b_cron, b_generic = victims(b, repos)
    b_form = form_victim(b, repos)
    form = "/api/v1/process/%s/form/approval" % b_form
    v1 = "/api/v1/process/" + b_cron
    requests = [("list", "GET", "/api/v2/process?limit=1000"),
                ("count", "GET", "/api/v2/process/count?projectId=" + b.proj_id),
                ("countOwn", "GET", "/api/v2/process/count?projectId=" + a.proj_id),
                ("status", "GET", "/api/v2/process/" + b_cron),
                ("statusV1", "GET", v1),
                ("log", "GET", v1 + "/log"),
                ("events", "GET", v1 + "/event"),
                ("attachments", "GET", v1 + "/attachment"),
                ("children", "GET", v1 + "/subprocess"),
                ("checkpoints", "GET", v1 + "/checkpoint"),
                ("forms", "GET", v1 + "/form"),
                ("stop", "DELETE", v1),
                ("generic", "GET", "/api/v2/process/" + b_generic),
                ("stopGeneric", "DELETE", "/api/v1/process/" + b_generic),
                ("form", "GET", form),
                ("submit", "POST", form, "{approved: true}"),
                ("own", "GET", "/api/v2/process/" + a_cron)]
    tasks = [("kill", "- task: concord\n  in:\n    action: kill\n    instanceId: %s" % b_cron),
             ("subprocesses", "- log: \"${concord.listSubprocesses('%s')}\"" % b_cron),
             ("outVars", "- log: \"${concord.getOutVars('%s')}\"" % b_cron),
             ("killOwn", "- task: concord\n  in:\n    action: kill\n    instanceId: %s" % a_cron)]
    http, task = results(run_attack(a, repos, attack_flow(srv.url, requests, tasks)))

    # The list and the counts show only processes of the attacker's own project.
    code, listed = http["list"]
    assert code == 200 and b_cron not in listed and b_generic not in listed, listed
    assert a_cron in listed, listed
    assert http["count"] == (200, "0") and int(http["countOwn"][1]) >= 1, (http["count"], http["countOwn"])
    # Every door of org B's processes is closed.
    for label in ("status", "statusV1", "log", "events", "attachments", "children", "checkpoints", "forms", "stop",
                  "generic", "stopGeneric", "form", "submit"):
        assert http[label][0] == 403, (label, http[label])
    for label in ("kill", "subprocesses", "outVars"):
        assert task[label].startswith("refused") and "not allowed" in task[label], (label, task[label])
    # B's processes run on; the attacker's own project is its to act on, as in Concord.
    for pid in (b_cron, b_generic):
        assert admin.get("/api/v2/process/" + pid).json()["status"] == "RUNNING", pid
    assert admin.get("/api/v2/process/" + b_form).json()["status"] == "SUSPENDED"
    assert http["own"][0] == 200 and task["killOwn"] == "ok", (http["own"], task["killOwn"])
    assert wait_process(admin, a_cron)["status"] == "CANCELLED"
    for pid in (a_generic, b_cron, b_generic, b_form):
        admin.delete("/api/v1/process/" + pid)


def test_rights_given_to_cron_stay_in_their_project(srv, repos):
    """B's owners let their cron processes write to B's project (cron in a team of B): that
    grant serves B's cron processes, never the cron processes of another org."""
    admin = Client(srv.url, ADMIN_KEY, "admin")
    a, b = Tenant(admin), Tenant(admin)
    r = admin.put("/api/v1/org/%s/team/%s/users" % (b.org, b.team),
                  json=[{"username": b.user.username, "role": "MEMBER"}, {"username": "cron", "role": "MEMBER"}])
    assert r.status_code == 200, r.text
    src = unique("ev")
    b_cron, b_generic = victims(b, repos, src)
    requests = [("count", "GET", "/api/v2/process/count?projectId=" + b.proj_id),
                ("orgs", "GET", "/api/v1/org?limit=1000"),
                ("secrets", "GET", "/api/v1/org/%s/secret" % b.org),
                ("generic", "GET", "/api/v2/process/" + b_generic),
                ("stopGeneric", "DELETE", "/api/v1/process/" + b_generic)]
    start_b = "- task: concord\n  in:\n    action: start\n    org: %s\n    project: %s\n    payload: child" % (
        b.org, b.proj)
    start_default = "- task: concord\n  in:\n    action: start\n    org: Default\n    payload: child"
    event = [("eventInB", "POST", "/api/v1/events/" + src, "{x: 2}")]
    http, task = results(run_attack(a, repos, attack_flow(srv.url, requests + event,
                                                          [("startInB", start_b), ("startInDefault", start_default)])))
    assert http["count"] == (200, "0"), http["count"]
    assert http["orgs"][0] == 200 and b.org not in http["orgs"][1] and a.org not in http["orgs"][1], http["orgs"]
    assert http["secrets"][0] == 404, http["secrets"]
    assert http["eventInB"] == (200, '{"ok":true,"instanceIds":[]}'), http["eventInB"]
    assert http["generic"][0] == 403 and http["stopGeneric"][0] == 403, http
    for label in ("startInB", "startInDefault"):
        assert task[label].startswith("refused") and "own process only" in task[label], task
    assert [p for p in b.processes() if p["initiator"] == "cron" and not p.get("repoName")] == []
    # B's own cron process holds the grant: it reads and stops B's generic process.
    http, _ = results(run_attack(b, repos, attack_flow(srv.url, requests, [])))
    assert http["count"][0] == 200 and int(http["count"][1]) >= 2, http["count"]
    assert b.org in http["orgs"][1] and http["secrets"][0] == 200, (http["orgs"], http["secrets"])
    assert http["generic"][0] == 200 and http["stopGeneric"][0] == 204, http
    assert wait_process(admin, b_generic)["status"] == "CANCELLED"
    admin.delete("/api/v1/process/" + b_cron)


RUN_AS_FLOW = """
flows:
  tick:
    - log: "TICK as ${initiator.username}"
triggers:
  - cron:
      spec: "* * * * *"
      entryPoint: tick
      runAs:
        withSecret: %s
"""


def data_secret(t, value, **parts):
    name = unique("key")
    files = {"name": (None, name), "type": (None, "data"), "data": (None, value)}
    files.update({k: (None, v) for k, v in parts.items()})
    r = t.admin.post("/api/v1/org/%s/secret" % t.org, files=files)
    assert r.status_code == 200, r.text
    return name


def test_cron_run_as_with_secret(srv, repos):
    """runAs.withSecret names a project secret holding a user's API key: the process runs as
    that user (Concord's cron runAs).  A secret of the org not restricted to the project, or
    one that holds no key, starts nothing; the key never shows in the server's log."""
    admin = Client(srv.url, ADMIN_KEY, "admin")
    a = Tenant(admin)
    good = data_secret(a, a.user.key, projectId=a.proj_id)
    name = a.add_repo(repos({"concord.yml": RUN_AS_FLOW % good}))
    p = wait_for(lambda: [x for x in a.processes() if x.get("repoName") == name], timeout=30)[-1]
    a.set_triggers(name, False)
    assert p["initiator"] == a.user.username and p["initiatorId"] == a.user.user_id, p
    assert wait_process(admin, p["instanceId"])["status"] == "FINISHED"
    assert "TICK as %s" % a.user.username in admin.get("/api/v1/process/%s/log" % p["instanceId"]).text

    scoped = a.user.post("/api/v1/apikey", json={"scopes": ["process:read"]})
    assert scoped.status_code == 200, scoped.text
    # the four refusals side by side (one test minute for all, not one each)
    refused = {}
    for secret, why in ((data_secret(a, a.user.key), "must be restricted to the trigger's project"),
                        (data_secret(a, scoped.json()["key"], projectId=a.proj_id), "holds an API key with scopes"),
                        (data_secret(a, "not-a-key", projectId=a.proj_id), "does not hold a valid API key"),
                        (unique("missing"), "Secret not found")):
        refused[a.add_repo(repos({"concord.yml": RUN_AS_FLOW % secret}))] = why
    for why in refused.values():  # each refusal's reason is its own
        wait_for(lambda why=why: re.search(r"cron trigger \S+ \(repository [^)]*\) did not start a process: .*%s"
                                           % re.escape(why), srv.read_log()), timeout=30)
    for name, why in refused.items():
        a.set_triggers(name, False)
        assert [x for x in a.processes() if x.get("repoName") == name] == [], why
    assert a.user.key not in srv.read_log()

    bad = a.admin.post(a.path(), json={"name": unique("repo"), "url": repos({"concord.yml": RUN_AS_FLOW % "[x]"}).url,
                                       "branch": "main"})
    assert bad.status_code == 400 and "runAs.withSecret" in bad.json()["message"], bad.text
