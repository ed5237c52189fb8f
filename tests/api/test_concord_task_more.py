"""The concord task's remaining parts (issue 26 part 4): suspendForCompletion,
requirements, attachments, startExternal, apiKey and baseUrl."""
from conftest import ADMIN_KEY, Client, make_user, process_log, start_process, wait_process
from proc_util import make_org, make_project, status
from repo_util import REPO_API, git  # noqa: F401 (a fixture)

SLEEPY = b"flows:\n  default:\n    - task: sleep\n      in:\n        duration: 2\n    - log: child done\n"
FAILING = b"flows:\n  default:\n    - throw: child broke\n"


def children_of(client, pid):
    r = client.get("/api/v1/process/%s/subprocess" % pid)
    assert r.status_code == 200, r.text
    return r.json()


def finished(client, flow, files=None):
    """Runs flow to its end, which must be FINISHED: (instance id, log)."""
    pid = start_process(client, flow, files=files)
    p = wait_process(client, pid)
    log = process_log(client, pid)
    assert p["status"] == "FINISHED", log
    return pid, log


def failed(client, flow, why, files=None):
    """Runs flow to its end, which must be FAILED with why in the log: (instance id, log)."""
    pid = start_process(client, flow, files=files)
    assert wait_process(client, pid)["status"] == "FAILED"
    log = process_log(client, pid)
    assert why in log, log
    return pid, log


def statuses(client, pid):
    st = client.get("/api/v1/process/%s/event" % pid, params={"type": "PROCESS_STATUS"}).json()
    return [e["data"]["status"] for e in st]


def test_suspend_for_completion(admin):
    """Concord's example: two children started, then ${concord.suspendForCompletion(ids)}:
    the parent suspends (no runner) and goes on with the next step once both ended, even
    when one failed."""
    flow = """
flows:
  default:
    - set:
        children: []
    - task: concord
      in:
        action: start
        payload: slow
      out: jobOut
    - ${children.add(jobOut.id)}
    - task: concord
      in:
        action: start
        payload: broken
      out: jobOut
    - ${children.add(jobOut.id)}
    - ${concord.suspendForCompletion(children)}
    - log: "process is resumed."
"""
    pid = start_process(admin, flow, files={"slow/concord.yml": SLEEPY, "broken/concord.yml": FAILING})
    wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert status(admin, pid)["status"] == "SUSPENDED", process_log(admin, pid)
    kids = [k["instanceId"] for k in children_of(admin, pid)]
    assert len(kids) == 2
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "process is resumed." in log
    for k in kids:
        assert status(admin, k)["status"] in ("FINISHED", "FAILED")
    assert "SUSPENDED" in statuses(admin, pid)


def test_suspend_for_completion_of_ended_and_no_children(admin):
    """Children that ended before the parent suspended, and an empty list (no suspension)."""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: quick
        sync: true
      out: jobOut
    - ${concord.suspendForCompletion([])}
    - log: "not suspended"
    - ${concord.suspendForCompletion([jobOut.id])}
    - log: "resumed after ${jobOut.id}"
"""
    pid, log = finished(admin, flow, {"quick/concord.yml": b"flows:\n  default:\n    - log: hi\n"})
    assert "not suspended" in log and "resumed after " in log


def test_suspend_for_completion_checks_ids(admin):
    flow = """
flows:
  default:
    - ${concord.suspendForCompletion(["not-an-id"])}
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    assert p["status"] == "FAILED"
    assert "not a process ID: not-an-id" in process_log(admin, pid)
    flow = """
flows:
  default:
    - ${concord.suspendForCompletion([txId])}
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    assert p["status"] == "FAILED"
    assert "cannot wait for itself" in process_log(admin, pid)


READER = b"""flows:
  default:
    - log: "a=${resource.asString('a.txt')} c=${resource.asString('sub/c.json')}"
"""


def test_attachments_and_requirements(admin):
    """`attachments`: a path (the file lands at the child's root under its own name) and a
    {src, dest} map; `requirements` is accepted (it routes nothing)."""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        requirements:
          agent:
            flavor: big
        attachments:
          - ${workDir}/data/a.txt
          - src: b.json
            dest: sub/c.json
      out: job
    - log: "child ${job.id} done"
"""
    files = {"child/concord.yml": READER, "data/a.txt": b"alpha", "b.json": b"{\"x\": 1}"}
    pid, log = finished(admin, flow, files)
    kid = children_of(admin, pid)[0]["instanceId"]
    klog = process_log(admin, kid)
    assert 'a=alpha c={"x": 1}' in klog


def test_attachments_stay_in_the_workdir(admin):
    for bad, why in (("/etc/passwd", "outside the working directory"),
                     ("missing.txt", "not found in the working directory"),
                     ("{src: a.txt, dest: ../x}", "relative path without '..'"),
                     ("42", "must be a path or a map")):
        flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        attachments:
          - %s
""" % bad
        pid = start_process(admin, flow, files={"child/concord.yml": READER, "a.txt": b"a"})
        p = wait_process(admin, pid)
        log = process_log(admin, pid)
        assert p["status"] == "FAILED", log
        assert why in log, (bad, log)
        assert children_of(admin, pid) == []


def test_requirements_must_be_a_map(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        requirements: big
"""
    failed(admin, flow, "'requirements' must be an object", {"child/concord.yml": READER})


QUICK = b"flows:\n  default:\n    - log: \"child of ${initiator.username}\"\n"


def test_api_key_starts_as_its_owner(admin, new_user):
    """`apiKey`: the child is started as the key's owner (its initiator), with that user's
    rights; a wrong key fails the step without saying more."""
    user = new_user()
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        apiKey: %s
        sync: true
      out: job
    - log: "started ${job.id}"
""" % user.key
    pid, log = finished(admin, flow, {"child/concord.yml": QUICK})
    assert user.key not in log
    kid = children_of(admin, pid)[0]
    assert kid["initiator"] == user.username
    assert "child of %s" % user.username in process_log(admin, kid["instanceId"])
    r = admin.get("/api/v1/audit", params={"object": "PROCESS", "action": "START", "limit": 1000})
    assert r.status_code == 200, r.text
    starts = [a for a in r.json() if a["details"].get("instanceId") == kid["instanceId"]]
    assert len(starts) == 1 and starts[0]["user"]["username"] == user.username, starts

    bad = flow.replace(user.key, "bm90LWEta2V5LW5vdC1hLWtleQ")
    failed(admin, bad, "'apiKey' is not a valid API key", {"child/concord.yml": QUICK})


def test_api_key_rights_are_the_owners(admin, new_user):
    """The key's owner has no right in a private org's project: refused, even though the
    parent's initiator (admin) has it."""
    user = new_user()
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, visibility="PRIVATE", rawPayloadMode="EVERYONE")
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        org: %s
        project: %s
        apiKey: %s
""" % (org, project, user.key)
    pid = start_process(admin, flow, files={"child/concord.yml": QUICK})
    assert wait_process(admin, pid)["status"] == "FAILED"
    assert children_of(admin, pid) == []
    assert user.key not in process_log(admin, pid)


def test_start_external_without_base_url(admin, new_user):
    """startExternal on this server: a process of its own (no parent), as the key's owner;
    apiKey is required and suspend is refused."""
    user = new_user()
    flow = """
flows:
  default:
    - task: concord
      in:
        action: startExternal
        payload: child
        apiKey: %s
        sync: true
      out: job
    - log: "external ${job.id}"
""" % user.key
    pid, log = finished(admin, flow, {"child/concord.yml": QUICK})
    ext = log.split("external ")[1].split()[0]
    assert children_of(admin, pid) == []
    st = admin.get("/api/v2/process/%s" % ext).json()
    assert st["status"] == "FINISHED" and st["initiator"] == user.username
    assert not st.get("parentInstanceId")
    for extra, why in (("", "'apiKey' is required"), ("apiKey: x\n        suspend: true", "'suspend' is not supported")):
        flow = "flows:\n  default:\n    - task: concord\n      in:\n        action: startExternal\n        payload: child\n        sync: true\n        %s\n" % extra
        failed(admin, flow, why, {"child/concord.yml": QUICK})


REMOTE_CHILD = b"""flows:
  default:
    - log: "remote hello ${greeting} by ${initiator.username} file=${resource.asString('a.txt')}"
"""


def test_base_url_starts_on_another_server(admin, fresh_server):
    """`baseUrl` + `apiKey`: the process starts on another Accord server, as the key's owner
    there (a user this server does not know), with the payload, attachments and arguments."""
    other = fresh_server().start()
    oadmin = Client(other.url, ADMIN_KEY, "admin")
    ouser = make_user(oadmin)
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        baseUrl: "%s/"
        apiKey: %s
        payload: child
        arguments:
          greeting: hi
        tags: [far]
        attachments:
          - a.txt
      out: job
    - log: "remote id ${job.id}"
""" % (other.url, ouser.key)
    pid, log = finished(admin, flow, {"child/concord.yml": REMOTE_CHILD, "a.txt": b"alpha"})
    assert ouser.key not in log
    rid = log.split("remote id ")[1].split()[0]
    assert admin.get("/api/v2/process/%s" % rid).status_code == 404
    rp = wait_process(oadmin, rid)
    assert rp["status"] == "FINISHED" and rp["initiator"] == ouser.username
    assert rp["tags"] == ["far"]
    assert "remote hello hi by %s file=alpha" % ouser.username in process_log(oadmin, rid)

    for extra, why in (
        ("apiKey: bm90LWEta2V5LW5vdC1hLWtleQ", "refused the start (HTTP 401)"),
        ("apiKey: %s\n        sync: true" % ouser.key, "'sync' and 'suspend' are not supported with 'baseUrl'"),
        ("", "'apiKey' is required with 'baseUrl'"),
    ):
        flow = ("flows:\n  default:\n    - task: concord\n      in:\n        action: start\n"
                "        baseUrl: %s\n        payload: child\n        %s\n" % (other.url, extra))
        pid = start_process(admin, flow, files={"child/concord.yml": REMOTE_CHILD})
        assert wait_process(admin, pid)["status"] == "FAILED"
        log = process_log(admin, pid)
        assert why in log, log
        assert ouser.key not in log
    other.stop()
    flow = ("flows:\n  default:\n    - task: concord\n      in:\n        action: start\n"
            "        baseUrl: %s\n        apiKey: %s\n        payload: child\n" % (other.url, ouser.key))
    failed(admin, flow, "cannot start the process on %s/api/v1/process" % other.url, {"child/concord.yml": REMOTE_CHILD})


def test_fork_with_api_key(admin, new_user):
    user = new_user()
    flow = """
flows:
  default:
    - task: concord
      in:
        action: fork
        entryPoint: kid
        apiKey: %s
        sync: true
      out: job
    - log: "forked ${job.ids}"
  kid:
    - log: "fork of ${initiator.username}"
""" % user.key
    pid, log = finished(admin, flow)
    kid = children_of(admin, pid)[0]
    assert kid["initiator"] == user.username
    assert "fork of %s" % user.username in process_log(admin, kid["instanceId"])
    flow = "flows:\n  default:\n    - task: concord\n      in:\n        action: fork\n        baseUrl: http://x\n"
    failed(admin, flow, "a fork runs on this server")


def test_handler_retried_until_it_finishes(admin):
    """A handler that fails is started again (Concord's retry); once one FINISHED, no more."""
    flow = """
flows:
  default:
    - throw: "boom"
  onFailure:
    - if: ${concord.listSubprocesses(parentInstanceId).size() < 2}
      then:
        - throw: "first try fails"
    - log: "handler try ${concord.listSubprocesses(parentInstanceId).size()} finished"
"""
    pid = start_process(admin, flow)
    assert wait_process(admin, pid)["status"] == "FAILED"

    def handlers():
        r = admin.get("/api/v2/process", params={"parentInstanceId": pid})
        assert r.status_code == 200, r.text
        return sorted(r.json(), key=lambda k: k["createdAt"])

    import time
    deadline = time.time() + 60
    while not any(k["status"] == "FINISHED" for k in handlers()):
        assert time.time() < deadline, handlers()
        time.sleep(0.1)
    kids = handlers()
    assert [k["status"] for k in kids] == ["FAILED", "FINISHED"], kids
    assert all(k["kind"] == "FAILURE_HANDLER" for k in kids)
    assert "first try fails" in process_log(admin, kids[0]["instanceId"])
    assert "handler try 2 finished" in process_log(admin, kids[1]["instanceId"])


def test_inventory_task(admin, new_user):
    """Concord's inventory task: query(...) returns the rows of a named query (with
    parameters); ansible(...) shapes them as an Ansible dynamic inventory (hosts of the
    group, their variables under _meta.hostvars, the group's vars)."""
    name = "inv-" + new_user().username
    r = admin.post("/api/v1/org/Default/jsonstore", json={"name": name})
    assert r.status_code == 200, r.text
    base = "/api/v1/org/Default/jsonstore/" + name
    for i, loc in ((1, "eastus"), (2, "westus"), (3, "westus")):
        r = admin.put(base + "/item/h%d" % i, json={"host": "h%d.example.com" % i, "location": loc, "n": i})
        assert r.status_code == 200, r.text
    r = admin.post(base + "/query", json={"name": "by-loc",
                                         "text": "select item_data from inventory_data where item_data @> ?::jsonb"})
    assert r.status_code == 200, r.text
    flow = """
flows:
  default:
    - set:
        rows: "${inventory.query('%(n)s', 'by-loc', {'location': 'westus'})}"
    - log: "rows=${rows.size()}"
    - set:
        inv: "${inventory.ansible('Default', '%(n)s', 'west', 'by-loc', {'location': 'westus'}, {'color': 'blue'})}"
    - log: "hosts=${inv.west.hosts.size()} vars=${inv.west.vars.color} h2=${inv._meta.hostvars['h2.example.com'].n}"
    - set:
        inv: "${inventory.ansible('%(n)s', 'east', 'by-loc', {'location': 'eastus'})}"
    - log: "east=${inv.east.hosts} hasHost=${inv._meta.hostvars['h1.example.com'].containsKey('host')}"
""" % {"n": name}
    pid, log = finished(admin, flow)
    assert "rows=2" in log
    assert "hosts=2 vars=blue h2=2" in log
    assert "east=[h1.example.com] hasHost=false" in log

    # the initiator's rights: a user who cannot read the store
    other = new_user()
    r = admin.post(base, json={"name": name, "visibility": "PRIVATE"})
    pid = start_process(other, "flows:\n  default:\n    - log: \"${inventory.query('%s', 'by-loc', {'a': 1})}\"\n" % name)
    assert wait_process(other, pid)["status"] == "FAILED"
    log = process_log(other, pid)
    assert "h1.example.com" not in log
    assert "doesn't have the necessary access level (READER) to the JSON store: %s" % name in log



def test_project_task_creates_and_updates(admin, new_user, git):
    """Concord's project task (action create): the project and its repositories created,
    then updated, as POST /api/v1/org/{org}/project does, with the initiator's rights."""
    org, _ = make_org(admin)
    repo = git()
    flow = """
flows:
  default:
    - task: project
      in:
        action: create
        org: %s
        name: made-by-flow
        repositories:
          - name: %s
            url: "%s"
            branch: main
      out: res
    - log: "result=${res.result} ok=${res.ok}"
"""
    pid, log = finished(admin, flow % (org, "first", repo.url))
    assert "result=CREATED ok=true" in log
    r = admin.get("/api/v1/org/%s/project/made-by-flow" % org)
    assert r.status_code == 200, r.text
    assert list(r.json()["repositories"]) == ["first"]
    assert r.json()["repositories"]["first"]["url"] == repo.url

    pid = start_process(admin, flow % (org, "second", repo.url))
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "result=UPDATED ok=true" in process_log(admin, pid)
    assert list(admin.get("/api/v1/org/%s/project/made-by-flow" % org).json()["repositories"]) == ["second"]

    # the initiator's rights: a user of no team of the org may not create there
    user = new_user()
    failed(user, flow.replace("made-by-flow", "not-mine") % (org, "x", repo.url), "(HTTP 403)")
    assert admin.get("/api/v1/org/%s/project/not-mine" % org).status_code == 404

    bad = "flows:\n  default:\n    - task: project\n      in:\n        action: delete\n        name: x\n"
    failed(admin, bad, "Unknown action: 'delete'. Available actions: [CREATE]")


NO_TRIGGERS = "flows:\n  default:\n    - log: hi\n"
WITH_TRIGGER = NO_TRIGGERS + "triggers:\n  - manual:\n      name: run it\n      entryPoint: default\n"


def test_repository_refresh_task(admin, git):
    """Concord's repositoryRefresh task: the repositories of repositoryInfo fetched again,
    their triggers renewed; a definition that does not load fails the step."""
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": NO_TRIGGERS})
    r = admin.post(REPO_API % (org, project), json={"name": "rrr", "url": repo.url, "branch": "main"})
    assert r.status_code == 200, r.text
    rid = r.json()["id"]
    path = REPO_API % (org, project) + "/rrr"
    assert admin.get(path + "/trigger").json() == []
    repo.commit({"concord.yml": WITH_TRIGGER}, "add a trigger")
    flow = """
flows:
  default:
    - task: repositoryRefresh
      in:
        repositoryInfo:
          - repositoryId: "%s"
    - log: "refreshed"
""" % rid
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert [t["eventSource"] for t in admin.get(path + "/trigger").json()] == ["manual"]

    repo.commit({"concord.yml": "flows:\n  default:\n  - log: [x\n"}, "break it")
    failed(admin, flow, "(HTTP 400)")
    for info, why in (("[]", "no repository info"), ("[{repositoryId: nope}]", "no valid 'repositoryId'"),
                      ("[{repositoryId: %s}]" % "00000000-0000-4000-8000-000000000000", "Repository not found")):
        pid = start_process(admin, "flows:\n  default:\n    - task: repositoryRefresh\n      in:\n"
                                   "        repositoryInfo: %s\n" % info)
        assert wait_process(admin, pid)["status"] == "FAILED"
        assert why in process_log(admin, pid)


def test_a_script_cannot_suspend(admin):
    """From a script neither suspendForCompletion nor `sync` + `suspend` suspends (a script
    cannot be left half-way): a clear error, and the process goes on."""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: quick
        sync: true
      out: job
    - script: python
      body: |
        c = tasks.get('concord')
        for call in (lambda: c.suspendForCompletion([execution.variables().get('job')['id']]),
                     lambda: c.execute({'action': 'start', 'payload': 'quick', 'sync': True, 'suspend': True})):
            try:
                call()
                print('no error')
            except Exception as e:
                print('refused:', e)
    - log: "went on"
"""
    pid, log = finished(admin, flow, {"quick/concord.yml": b"flows:\n  default:\n    - log: hi\n"})
    assert log.count("a process cannot suspend from a script") == 2, log
    assert "no error" not in log and "went on" in log
    assert "SUSPENDED" not in statuses(admin, pid)
    assert len(children_of(admin, pid)) == 1  # the refused start started nothing
