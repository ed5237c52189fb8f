"""Child processes (issue 9 part 4): the concord task's start/fork/kill, sync, suspend,
outVars, waitForCompletion, getOutVars, listSubprocesses, childrenIds, the
parentInstanceId filter and GET /api/v1/process/{id}/subprocess."""
from conftest import process_log, start_process, wait_process
from proc_util import make_org, make_project, status, wait_for

CHILD = """
flows:
  default:
    - log: "child says ${greeting}"
    - set:
        answer: "${greeting}-42"
"""

FAILING_CHILD = """
flows:
  default:
    - throw: "child broke"
"""

SLOW_CHILD = """
flows:
  default:
    - log: "child sleeping"
    - task: sleep
      in:
        duration: 30
"""


def run(client, flow, files=None, final=True):
    pid = start_process(client, flow, files=files)
    if final:
        p = wait_process(client, pid)
        return pid, p
    return pid, None


def children_of(client, pid):
    r = client.get("/api/v1/process/%s/subprocess" % pid)
    assert r.status_code == 200, r.text
    return r.json()


def test_start_with_payload_folder(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        arguments:
          greeting: hi
        tags: [kid, one]
      out: job
    - log: "started ${job.id} ok=${job.ok} ids=${job.ids}"
"""
    pid, p = run(admin, flow, files={"child/concord.yml": CHILD.encode()})
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    kids = children_of(admin, pid)
    assert len(kids) == 1
    kid = kids[0]["instanceId"]
    assert "started %s ok=true ids=[%s]" % (kid, kid) in log
    assert kids[0]["parentInstanceId"] == pid
    assert sorted(kids[0]["tags"]) == ["kid", "one"]
    c = wait_process(admin, kid)
    assert c["status"] == "FINISHED", process_log(admin, kid)
    assert "child says hi" in process_log(admin, kid)
    assert c["initiator"] == p["initiator"]
    # childrenIds, the parentInstanceId filter, the subprocess endpoint's tags filter
    assert status(admin, pid, include="childrenIds")["childrenIds"] == [kid]
    listed = admin.get("/api/v2/process", params={"parentInstanceId": pid}).json()
    assert [x["instanceId"] for x in listed] == [kid]
    assert [x["instanceId"] for x in admin.get("/api/v1/process/%s/subprocess?tags=kid" % pid).json()] == [kid]
    assert admin.get("/api/v1/process/%s/subprocess?tags=other" % pid).json() == []


def test_subprocess_of_unknown_parent_is_400(admin):
    r = admin.get("/api/v1/process/00000000-0000-4000-8000-000000000000/subprocess")
    assert r.status_code == 400
    assert "Unknown instance ID" in r.json()["message"]


def test_start_sync_returns_out_vars(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        arguments:
          greeting: yo
        outVars: [answer]
      out: job
    - log: "got ${job.answer}"
"""
    pid, p = run(admin, flow, files={"child/concord.yml": CHILD.encode()})
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "got yo-42" in log


def test_payload_must_stay_in_the_workdir(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: ../../etc
"""
    pid, p = run(admin, flow)
    assert p["status"] == "FAILED"
    assert "inside the working directory" in process_log(admin, pid)
    assert children_of(admin, pid) == []


def test_clear_errors_for_repo_and_missing_payload(admin):
    flow = """
flows:
  default:
    - try:
        - task: concord
          in:
            action: start
            project: p
            repo: r
      error:
        - log: "E1 ${lastError.message}"
    - try:
        - task: concord
          in:
            action: start
      error:
        - log: "E2 ${lastError.message}"
"""
    pid, p = run(admin, flow)
    log = process_log(admin, pid)
    assert "E1 Project not found: Default/p" in log
    assert "E2 concord start: 'payload' (a folder or ZIP archive in the working directory) or 'repo'" in log


def test_start_in_a_project_needs_the_right(admin, new_user):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE", visibility="PRIVATE")
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        org: %s
        project: %s
        payload: child
        arguments: {greeting: x}
      out: job
""" % (org, project)
    files = {"child/concord.yml": CHILD.encode()}
    user = new_user()
    pid, p = run(user, flow, files=files)
    assert p["status"] == "FAILED"
    assert "not allowed" in process_log(user, pid).lower() or "forbidden" in process_log(user, pid).lower() or "access" in process_log(user, pid).lower(), process_log(user, pid)
    assert children_of(admin, pid) == []
    pid, p = run(admin, flow, files=files)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    kid = children_of(admin, pid)[0]
    assert kid["projectName"] == project


def test_failing_child_fails_sync_task_unless_ignored(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        ignoreFailures: %s
      out: job
    - log: "after ${job.id}"
"""
    files = {"child/concord.yml": FAILING_CHILD.encode()}
    pid, p = run(admin, flow % "false", files=files)
    assert p["status"] == "FAILED"
    kid = children_of(admin, pid)[0]["instanceId"]
    # Concord's message: the child, its status and the error it ended with
    assert "Child process %s FAILED (error: {" % kid in process_log(admin, pid)
    assert "child broke" in process_log(admin, pid)
    pid, p = run(admin, flow % "true", files=files)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert "after " in process_log(admin, pid)


def test_suspend_until_children_end(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        suspend: true
      out: job
    - log: "resumed after ${job.id}"
"""
    files = {"child/concord.yml": b"flows:\n  default:\n    - task: sleep\n      in:\n        duration: 2\n"}
    pid = start_process(admin, flow, files=files)
    wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert status(admin, pid)["status"] == "SUSPENDED", process_log(admin, pid)
    kid = children_of(admin, pid)[0]["instanceId"]
    assert wait_process(admin, kid)["status"] == "FINISHED"
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "resumed after %s" % kid in log


def test_suspend_when_children_end_first(admin):
    """The child ends before the parent's suspension is stored: still resumed."""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: fork
        entryPoint: quick
        sync: true
        suspend: true
      out: job
    - log: "resumed after ${job.ids}"
  quick:
    - log: "quick"
"""
    for _ in range(3):
        pid, p = run(admin, flow)
        assert p["status"] == "FINISHED", process_log(admin, pid)
        assert "resumed after [" in process_log(admin, pid)


def test_fork_with_out_vars(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: fork
        sync: true
        forks:
          - entryPoint: pick
            arguments: {color: red}
          - entryPoint: pick
            instances: 2
            arguments: {color: blue}
        outVars: [picked]
      out: job
    - log: "forks ${job.ids.size()}"
    - log: "vars ${concord.getOutVars(job.ids)}"
  pick:
    - set:
        picked: "${color}!"
"""
    pid, p = run(admin, flow)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "forks 3" in log
    kids = [k["instanceId"] for k in children_of(admin, pid)]
    assert len(kids) == 3
    for k in kids:
        assert wait_process(admin, k)["status"] == "FINISHED"
    assert log.count("=red!") + log.count("=blue!") >= 3, log
    assert "=red!" in log and "=blue!" in log


def test_fork_single_out_vars_flat(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: fork
        entryPoint: child
        sync: true
        arguments: {base: 5}
        outVars: [x]
      out: job
    - log: "x=${job.x} ${job.id == job.ids[0]}"
  child:
    - set:
        x: "${base + 1}"
"""
    pid, p = run(admin, flow)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert "x=6 true" in process_log(admin, pid)


def test_wait_for_completion_and_list(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: fork
        entryPoint: child
        tags: [t1]
      out: job
    - log: "listed ${concord.listSubprocesses(txId, 't1')}"
    - expr: "${concord.waitForCompletion(job.ids)}"
      out: done
    - log: "status ${done[job.id].status}"
    - log: "vars ${concord.getOutVars(job.id)}"
  child:
    - set:
        v: 7
"""
    pid, p = run(admin, flow)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    kid = children_of(admin, pid)[0]["instanceId"]
    assert "listed [%s]" % kid in log
    assert "status FINISHED" in log


def test_kill_a_child(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
      out: job
    - task: concord
      in:
        action: kill
        instanceId: ${job.id}
        sync: true
    - log: "killed ${job.id}"
"""
    pid, p = run(admin, flow, files={"child/concord.yml": SLOW_CHILD.encode()})
    assert p["status"] == "FINISHED", process_log(admin, pid)
    kid = children_of(admin, pid)[0]["instanceId"]
    assert status(admin, kid)["status"] == "CANCELLED"


def test_stop_parent_waiting_in_sync(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
    - log: "never"
"""
    pid = start_process(admin, flow, files={"child/concord.yml": SLOW_CHILD.encode()})
    wait_for(lambda: len(children_of(admin, pid)) == 1)
    kid = children_of(admin, pid)[0]["instanceId"]
    wait_for(lambda: status(admin, kid)["status"] == "RUNNING")
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code == 204, r.text
    assert wait_process(admin, pid)["status"] == "CANCELLED"
    assert "never" not in process_log(admin, pid)
    admin.delete("/api/v1/process/%s" % kid)
    assert wait_process(admin, kid)["status"] == "CANCELLED"


def test_wait_for_completion_timeout(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
      out: job
    - try:
        - ${concord.waitForCompletion(job.ids, 300)}
      error:
        - log: "E ${lastError.message}"
    - task: concord
      in:
        action: kill
        instanceId: ${job.id}
"""
    pid, p = run(admin, flow, files={"child/concord.yml": SLOW_CHILD.encode()})
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "[INFO ] E while evaluating expression" in log and "Timeout waiting for processes to complete" in log
    kid = children_of(admin, pid)[0]["instanceId"]
    assert wait_process(admin, kid)["status"] == "CANCELLED"


def test_cancelled_suspended_parent_is_not_resumed(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        suspend: true
    - log: "never"
"""
    pid = start_process(admin, flow, files={"child/concord.yml": SLOW_CHILD.encode()})
    assert wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))["status"] == "SUSPENDED"
    kid = children_of(admin, pid)[0]["instanceId"]
    assert admin.delete("/api/v1/process/%s" % pid).status_code == 204
    assert wait_process(admin, pid)["status"] == "CANCELLED"
    assert admin.delete("/api/v1/process/%s" % kid).status_code == 204
    assert wait_process(admin, kid)["status"] == "CANCELLED"
    assert status(admin, pid)["status"] == "CANCELLED"
    assert "never" not in process_log(admin, pid)


def test_child_definition_is_read(admin):
    """The child's own configuration gives its entry point and timeouts, and a broken
    child definition fails the step at once with the reason."""
    child = """
configuration:
  entryPoint: main
  processTimeout: PT1H
flows:
  main:
    - log: "child entered main"
"""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
      out: job
    - log: "child done ${job.id}"
"""
    pid, p = run(admin, flow, files={"child/concord.yml": child.encode()})
    assert p["status"] == "FINISHED", process_log(admin, pid)
    kid = children_of(admin, pid)[0]
    kid_id = kid["instanceId"] if isinstance(kid, dict) else kid
    assert "child entered main" in process_log(admin, kid_id)
    rec = status(admin, kid_id)
    assert rec["meta"]["entryPoint"] == "main"
    assert rec["timeout"] == 3600

    broken = "flows:\n  default:\n    - nosuchstep: 1\n"
    pid, p = run(admin, flow, files={"child/concord.yml": broken.encode()})
    assert p["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "the child's definition" in log, log
    assert children_of(admin, pid) == []


FORK_BOMB = """
flows:
  default:
    - log: "generation ${hasVariable('gen') ? gen : 0}"
    - task: concord
      in:
        action: fork
        instances: 2
        arguments:
          gen: "${(hasVariable('gen') ? gen : 0) + 1}"
"""


def test_children_and_generations_are_bounded(fresh_server):
    """--limit-process-children and --limit-process-depth stop a flow that multiplies
    itself (a fork bomb made 511 processes in 8 s): the call over the limit fails the step
    with a message naming the setting."""
    from conftest import ADMIN_KEY, Client
    srv = fresh_server(args=["--limit-process-depth", "2", "--limit-process-children", "3"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    pid, p = run(admin, FORK_BOMB)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    wait_for(lambda: len(admin.get("/api/v2/process", params={"limit": 100}).json()) >= 7)
    everyone = admin.get("/api/v2/process", params={"limit": 100}).json()
    for x in everyone:
        wait_process(admin, x["instanceId"])
    everyone = admin.get("/api/v2/process", params={"limit": 100}).json()
    assert len(everyone) == 1 + 2 + 4, [x["status"] for x in everyone]  # 3 generations, no more
    failed_deep = [x for x in everyone if "--limit-process-depth 2" in process_log(admin, x["instanceId"])]
    assert len(failed_deep) == 4, [process_log(admin, x["instanceId"]) for x in everyone]
    many = """
flows:
  default:
    - task: concord
      in:
        action: fork
        instances: 4
"""
    pid, p = run(admin, many.replace("default:\n    - task", "default:\n    - task", 1) + "  other:\n    - log: x\n")
    log = process_log(admin, pid)
    assert p["status"] == "FAILED" and "--limit-process-children 3" in log, log


def test_the_default_process_timeout(fresh_server):
    from conftest import ADMIN_KEY, Client
    srv = fresh_server(args=["--default-process-timeout", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    pid, p = run(admin, SLOW_CHILD)
    log = process_log(admin, pid)
    assert p["status"] == "TIMED_OUT", log
    assert "--default-process-timeout" in log, log
    quick = start_process(admin, CHILD.replace("${greeting}", "hi"))
    assert wait_process(admin, quick)["status"] == "FINISHED"


def test_a_child_sees_its_parent_instance_id(admin):
    """Concord's ProcessIT.testForkVariablesAfterForm: a fork made after a form logs the
    parent's id as parentInstanceId and its own as txId, and has the form's values; a
    started child and a handler process see parentInstanceId too."""
    flow = """
forms:
  myForm:
    - name: { type: "string" }
flows:
  default:
    - form: myForm
    - task: concord
      in:
        action: fork
        entryPoint: newProcess
        sync: true
    - task: concord
      in:
        action: start
        payload: child
        sync: true
    - throw: "boom"
  newProcess:
    - log: "parentInstanceId: ${parentInstanceId} txId: ${txId}:"
    - log: "form name: ${myForm.name}"
  onFailure:
    - log: "handler of ${parentInstanceId}"
"""
    child = "flows:\n  default:\n    - log: \"started by ${parentInstanceId}\"\n"
    pid = start_process(admin, flow, files={"child/concord.yml": child.encode()})
    assert wait_process(admin, pid, ("SUSPENDED", "FAILED"))["status"] == "SUSPENDED", process_log(admin, pid)
    r = admin.post("/api/v1/process/%s/form/myForm" % pid, json={"name": "test"})
    assert r.status_code == 200 and r.json()["ok"], r.text
    assert wait_process(admin, pid)["status"] == "FAILED"
    wait_for(lambda: len(children_of(admin, pid)) == 3)
    kids = {}
    for k in children_of(admin, pid):
        wait_process(admin, k["instanceId"])
        kids[k["instanceId"]] = process_log(admin, k["instanceId"])
    assert not any("parentInstanceId" not in status(admin, k) for k in kids), kids
    fork = [k for k, log in kids.items() if "txId:" in log]
    assert len(fork) == 1, kids
    assert "parentInstanceId: %s txId: %s:" % (pid, fork[0]) in kids[fork[0]]
    assert "form name: test" in kids[fork[0]]  # the parent's arguments as it resumed
    assert sum("started by %s" % pid in log for log in kids.values()) == 1, kids
    assert sum("handler of %s" % pid in log for log in kids.values()) == 1, kids


def test_a_first_process_has_no_parent_instance_id(admin):
    flow = "flows:\n  default:\n    - log: \"has parent: ${hasVariable('parentInstanceId')}\"\n"
    pid, p = run(admin, flow)
    assert "has parent: false" in process_log(admin, pid)


def test_suspended_parent_gets_the_child_out_vars(admin):
    """Concord's ConcordTaskIT.testSuspendParentProcess: `sync` + `suspend` with outVars:
    after the parent resumes, the step's out holds the child's out variables."""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: payload
        sync: true
        suspend: true
        arguments:
          name: "Concord"
        outVars:
          - xyz
      out: jobOut
    - log: "${jobOut.xyz}"
    - log: "id ${jobOut.id} ids ${jobOut.ids} nested ${jobOut[jobOut.id].xyz}"
"""
    child = "flows:\n  default:\n    - set:\n        xyz: \"Hello, ${name}!\"\n"
    pid = start_process(admin, flow, files={"payload/concord.yml": child.encode()})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    kid = children_of(admin, pid)[0]["instanceId"]
    assert "[INFO ] Hello, Concord!" in log
    assert "id %s ids [%s] nested Hello, Concord!" % (kid, kid) in log
    # it did suspend: the resume is in its history
    st = admin.get("/api/v1/process/%s/event" % pid, params={"type": "PROCESS_STATUS"}).json()
    assert "SUSPENDED" in [e["data"]["status"] for e in st], st


def test_suspended_parent_gets_the_forks_out_vars(admin):
    """Concord's ConcordTaskIT.testForkSuspend: two forks, `sync` + `suspend`, outVars: the
    out holds each fork's variables under its id."""
    flow = """
flows:
  default:
    - task: concord
      in:
        action: fork
        forks:
          - entryPoint: onFork
            arguments:
              msg: "Hello"
          - entryPoint: onFork
            arguments:
              msg: "Bye"
        sync: true
        suspend: true
        outVars:
          - varFromFork
      out: jobOut
    - log: "${jobOut}"
  onFork:
    - log: "Running in a fork"
    - set:
        varFromFork: "${msg}, ${name}"
"""
    pid = start_process(admin, flow, parts={"arguments.name": "n42"})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "{varFromFork=Hello, n42}" in log and "{varFromFork=Bye, n42}" in log, log
    out = [line for line in log.splitlines() if "{varFromFork=Hello" in line][0]
    assert "ids=[" in out and " id=" not in out, out  # "id" only for a single child


def test_suspended_parent_fails_for_a_failed_child_unless_ignored(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        suspend: true
        ignoreFailures: %s
      out: job
    - log: "after ${job.id}"
"""
    files = {"child/concord.yml": FAILING_CHILD.encode()}
    pid = start_process(admin, flow % "false", files=files)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    kid = children_of(admin, pid)[0]["instanceId"]
    assert "All 1 child processes ended: resuming" in log
    assert "Child process %s FAILED (error: {" % kid in log and "child broke" in log, log
    assert "after " not in log
    pid = start_process(admin, flow % "true", files=files)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    kid = children_of(admin, pid)[0]["instanceId"]
    assert "after %s" % kid in log


def test_suspended_parent_catches_a_failed_child(admin):
    """The failure after the resume is the step's error: a try/error around it handles it."""
    flow = """
flows:
  default:
    - try:
        - task: concord
          in:
            action: start
            payload: child
            sync: true
            suspend: true
      error:
        - log: "caught ${lastError.message}"
    - log: "went on"
"""
    pid = start_process(admin, flow, files={"child/concord.yml": FAILING_CHILD.encode()})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "caught Child process" in log and "went on" in log
