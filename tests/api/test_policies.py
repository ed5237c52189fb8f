"""Policies (issue 30 part 4, docs/security.md "Policies"): the /api/v2/policy endpoints,
validation of the rules document, the choice of the effective policy, and the rules
enforced at start, at dispatch and while a process runs.  Policies are linked to fresh
orgs and projects here, so that the shared server's other tests see none."""
import pytest

from conftest import make_user, process_log, start_process, unique, wait_process
from proc_util import HELLO, make_org, make_project, sleeper, status, wait_for


def put_policy(admin, rules, name=None, parent=None, expect=200):
    body = {"name": name or unique("pol"), "rules": rules}
    if parent:
        body["parentId"] = parent
    r = admin.post("/api/v2/policy", json=body)
    assert r.status_code == expect, r.text
    return (body["name"], r.json().get("id")) if expect == 200 else r


def link(admin, name, expect=200, **place):
    r = admin.put("/api/v2/policy/%s/link" % name, json=place)
    assert r.status_code == expect, r.text
    return r


def project_with(admin, rules):
    """A fresh org and project (raw payloads allowed) with a policy linked to the project."""
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org, projectName=project)
    return org, project, name


# ---- the API --------------------------------------------------------------------------------


def test_create_get_update_list_delete(admin):
    name, pid = put_policy(admin, {"queue": {"forkDepth": {"max": 3}}})
    r = admin.get("/api/v2/policy/%s" % name)
    assert r.status_code == 200, r.text
    assert r.json() == {"id": pid, "name": name, "rules": {"queue": {"forkDepth": {"max": 3}}}}
    r = admin.post("/api/v2/policy", json={"name": name, "rules": {"task": {"deny": [{"taskName": "http"}]}}})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED" and r.json()["id"] == pid, r.text
    assert admin.get("/api/v2/policy/%s" % name).json()["rules"] == {"task": {"deny": [{"taskName": "http"}]}}
    org, _ = make_org(admin)
    link(admin, name, orgName=org)
    listed = [p for p in admin.get("/api/v2/policy").json() if p["name"] == name]
    assert len(listed) == 1 and len(listed[0]["links"]) == 1 and "orgId" in listed[0]["links"][0]
    r = admin.delete("/api/v2/policy/%s" % name)
    assert r.status_code == 200 and r.json()["result"] == "DELETED", r.text
    assert admin.get("/api/v2/policy/%s" % name).status_code == 404


@pytest.mark.parametrize(
    "rules, where",
    [
        ({"queue": {"concurrent": {"maxPerOrg": "ten"}}}, "rules.queue.concurrent.maxPerOrg"),
        ({"queue": {"forkDepht": {"max": 1}}}, "forkDepht"),
        ({"tasks": {"deny": []}}, "unknown rule 'tasks'"),
        ({"task": {"deny": {"taskName": "x"}}}, "rules.task.deny"),
        ({"task": {"deny": [{"taskName": "x", "colour": 1}]}}, "rules.task.deny[0]: unknown field 'colour'"),
        ({"task": {"deny": [{"taskName": "(unclosed"}]}}, "rules.task.deny[0].taskName"),
        ({"queue": {"processTimeout": {"max": "an hour"}}}, "rules.queue.processTimeout.max"),
        ({"queue": {"processPerOrg": {"RUNING": 1}}}, "unknown field 'RUNING'"),
        ([1, 2], "rules: expected an object"),
    ],
)
def test_a_bad_document_is_refused_saying_where(admin, rules, where):
    name = unique("pol")
    r = admin.post("/api/v2/policy", json={"name": name, "rules": rules})
    assert r.status_code == 400, r.text
    assert where in r.json()["message"], r.text
    assert admin.get("/api/v2/policy/%s" % name).status_code == 404


def test_a_body_that_is_not_json_is_refused(admin):
    r = admin.post("/api/v2/policy", data="{rules:", headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text


def test_only_admins_change_policies(server, admin):
    user = make_user(admin)
    r = user.post("/api/v2/policy", json={"name": unique("pol"), "rules": {}})
    assert r.status_code == 403, r.text
    name, _ = put_policy(admin, {})
    assert user.put("/api/v2/policy/%s/link" % name, json={}).status_code == 403
    assert user.delete("/api/v2/policy/%s" % name).status_code == 403
    assert user.get("/api/v2/policy/%s" % name).status_code == 403


def test_link_and_unlink_by_query(admin):
    org, _ = make_org(admin)
    user = make_user(admin)
    name, _ = put_policy(admin, {})
    r = admin.put("/api/v2/policy/%s/link?orgName=%s&userName=%s" % (name, org, user.username))
    assert r.status_code == 200, r.text
    links = [p for p in admin.get("/api/v2/policy").json() if p["name"] == name][0]["links"]
    assert links == [{"orgId": links[0]["orgId"], "userId": user.user_id, "orgName": org, "userName": user.username}]
    r = admin.delete("/api/v2/policy/%s/link?orgName=%s&userName=%s" % (name, org, user.username))
    assert r.status_code == 200 and r.json()["result"] == "DELETED", r.text
    r = admin.delete("/api/v2/policy/%s/link?orgName=%s" % (name, org))
    assert r.status_code == 404, r.text
    r = admin.put("/api/v2/policy/%s/link" % name, json={"orgName": unique("nope")})
    assert r.status_code == 400, r.text
    r = admin.put("/api/v2/policy/%s/link" % name, json={"projectName": "p"})
    assert r.status_code == 400, r.text


def test_the_list_names_where_each_policy_is_linked(admin):
    """Names beside the ids, so that a link can be shown and unlinked by name (the console's
    policy page): a project's link names its org too."""
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    name, _ = put_policy(admin, {})
    link(admin, name, orgName=org, projectName=project)
    links = [p for p in admin.get("/api/v2/policy").json() if p["name"] == name][0]["links"]
    assert links == [{"projectId": links[0]["projectId"], "orgName": org, "projectName": project}]
    r = admin.delete("/api/v2/policy/%s/link?orgName=%s&projectName=%s" % (name, links[0]["orgName"],
                                                                          links[0]["projectName"]))
    assert r.status_code == 200, r.text


def test_a_parent_cycle_is_refused(admin):
    a, a_id = put_policy(admin, {})
    b, b_id = put_policy(admin, {}, parent=a_id)
    r = admin.post("/api/v2/policy", json={"name": a, "parentId": b_id, "rules": {}})
    assert r.status_code == 400 and "ancestor" in r.json()["message"], r.text


# ---- the effective policy -------------------------------------------------------------------

TIMEOUT_FLOW = """
configuration:
  processTimeout: "PT1H"
flows:
  default:
    - log: "hello"
"""


def test_the_most_specific_link_wins_and_parents_merge(admin):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    user = make_user(admin)
    parts = {"org": org, "project": project}
    # the org's policy refuses an hour; a child of it linked to the project allows it
    strict, strict_id = put_policy(admin, {"queue": {"processTimeout": {"max": "PT30M", "msg": "too long: {0}"}}})
    link(admin, strict, orgName=org)
    r = start_process(admin, TIMEOUT_FLOW, parts=parts, expect=400)
    assert "too long: 3600s" in r.json()["message"] and strict in r.json()["message"], r.text
    loose, _ = put_policy(admin, {"queue": {"processTimeout": {"max": "PT2H"}}}, parent=strict_id)
    link(admin, loose, orgName=org, projectName=project)
    assert wait_process(admin, start_process(admin, TIMEOUT_FLOW, parts=parts))["status"] == "FINISHED"
    # the child keeps the parent's message
    r = start_process(admin, TIMEOUT_FLOW.replace("PT1H", "PT3H"), parts=parts, expect=400)
    assert "too long: 10800s" in r.json()["message"] and loose in r.json()["message"], r.text
    # a user's policy within the project wins over the project's, for that user only
    mine, _ = put_policy(admin, {"queue": {"processTimeout": {"max": "PT10M"}}})
    link(admin, mine, orgName=org, projectName=project, userName=user.username)
    r = admin.post("/api/v1/org/%s/project/%s/access" % (org, project), json={"teamName": "default", "level": "WRITER"})
    r = admin.put("/api/v1/org/%s/team/default/users" % org, json=[{"username": user.username, "role": "MEMBER"}])
    assert r.status_code == 200, r.text
    r = start_process(user, TIMEOUT_FLOW, parts=parts, expect=400)
    assert mine in r.json()["message"], r.text
    assert wait_process(admin, start_process(admin, TIMEOUT_FLOW, parts=parts))["status"] == "FINISHED"


# ---- queue rules ----------------------------------------------------------------------------


def test_concurrent_per_project_holds_the_next_in_the_queue(admin):
    org, project, _ = project_with(admin, {"queue": {"concurrent": {"maxPerProject": 1}}})
    parts = {"org": org, "project": project}
    first = start_process(admin, sleeper(300), parts=parts)
    wait_process(admin, first, statuses=("RUNNING",), timeout=60)
    second = start_process(admin, HELLO, parts=parts)
    # another project of the same org is not held
    other, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    assert wait_process(admin, start_process(admin, HELLO, parts={"org": org, "project": other}))["status"] == "FINISHED"
    assert status(admin, second)["status"] == "ENQUEUED"
    assert admin.delete("/api/v1/process/%s" % first).status_code in (200, 204)
    assert wait_process(admin, second, timeout=60)["status"] == "FINISHED"


def test_concurrent_per_org(admin):
    org, _ = make_org(admin)
    a, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    b, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    name, _ = put_policy(admin, {"queue": {"concurrent": {"maxPerOrg": "1"}}})
    link(admin, name, orgName=org)
    first = start_process(admin, sleeper(300), parts={"org": org, "project": a})
    wait_process(admin, first, statuses=("RUNNING",), timeout=60)
    second = start_process(admin, HELLO, parts={"org": org, "project": b})
    assert wait_process(admin, start_process(admin, HELLO))["status"] == "FINISHED"  # Default org: not held
    assert status(admin, second)["status"] == "ENQUEUED"
    assert admin.delete("/api/v1/process/%s" % first).status_code in (200, 204)
    assert wait_process(admin, second, timeout=60)["status"] == "FINISHED"


def test_process_per_org_by_status_refuses_at_start(admin):
    org, project, name = project_with(admin, {"queue": {"processPerOrg": {"RUNNING": 1, "msg": "busy: {0} max {1}"}}})
    parts = {"org": org, "project": project}
    first = start_process(admin, sleeper(300), parts=parts)
    wait_process(admin, first, statuses=("RUNNING",), timeout=60)
    before = len(admin.get("/api/v2/process", params={"orgName": org}).json())
    r = start_process(admin, HELLO, parts=parts, expect=400)
    assert r.json()["message"] == "busy: RUNNING max 1 (policy '%s')" % name, r.text
    assert len(admin.get("/api/v2/process", params={"orgName": org}).json()) == before  # nothing stored
    assert admin.delete("/api/v1/process/%s" % first).status_code in (200, 204)
    wait_process(admin, first)
    assert wait_process(admin, start_process(admin, HELLO, parts=parts))["status"] == "FINISHED"


FORK = """
flows:
  default:
    - task: concord
      in:
        action: fork
        entryPoint: child
        sync: true
  child:
    - task: concord
      in:
        action: fork
        entryPoint: leaf
        sync: true
  leaf:
    - log: "leaf"
"""


def test_fork_depth(admin):
    org, project, name = project_with(admin, {"queue": {"forkDepth": {"max": 2}}})
    pid = start_process(admin, FORK, parts={"org": org, "project": project})
    p = wait_process(admin, pid, timeout=60)
    assert p["status"] == "FAILED", p
    children = admin.get("/api/v1/process/%s/subprocess" % pid).json()
    assert len(children) == 1, children
    child = children[0]["instanceId"]
    assert wait_process(admin, child)["status"] == "FAILED"
    assert "Maximum fork depth exceeded" in process_log(admin, child), process_log(admin, child)


def test_process_timeout_limit(admin):
    org, project, name = project_with(admin, {"queue": {"processTimeout": {"max": "PT1H"}}})
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=dict(parts, processTimeout="PT2H"), expect=400)
    assert "processTimeout" in r.json()["message"] and name in r.json()["message"], r.text
    assert wait_process(admin, start_process(admin, HELLO, parts=dict(parts, processTimeout="PT10M")))[
        "status"
    ] == "FINISHED"


# ---- process configuration ------------------------------------------------------------------

ARGS_FLOW = """
configuration:
  arguments:
    a: "from the definition"
    b: "from the definition"
flows:
  default:
    - log: "a=${a} b=${b} c=${c}"
"""


def test_process_cfg_overrides_and_default_process_cfg_underlies(admin):
    org, project, _ = project_with(
        admin,
        {
            "processCfg": {"arguments": {"a": "forced"}},
            "defaultProcessCfg": {"arguments": {"b": "default", "c": "default"}},
        },
    )
    pid = start_process(admin, ARGS_FLOW, parts={"org": org, "project": project, "arguments.a": "asked"})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "a=forced b=from the definition c=default" in process_log(admin, pid)


# ---- task rules -----------------------------------------------------------------------------

TASKS_FLOW = """
flows:
  default:
    - log: "before"
    - task: throw
      in:
        exception: "not denied"
"""


def test_a_denied_task_fails_the_step_with_the_rule_message(admin):
    org, project, name = project_with(admin, {"task": {"deny": [{"taskName": "thr.*", "msg": "no throwing"}]}})
    pid = start_process(admin, TASKS_FLOW, parts={"org": org, "project": project})
    assert wait_process(admin, pid)["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "before" in log and "no throwing (policy '%s')" % name in log and "not denied" not in log, log


def test_a_method_denied_by_argument(admin):
    flow = """
flows:
  default:
    - log: "${datetime.format(datetime.current(), 'yyyy')}"
    - log: "${datetime.format(datetime.current(), 'HH')}"
"""
    rules = {"task": {"deny": [{"taskName": "datetime", "method": "format", "params": [{"index": 1, "values": ["HH"]}]}]}}
    org, project, name = project_with(admin, rules)
    pid = start_process(admin, flow, parts={"org": org, "project": project})
    assert wait_process(admin, pid)["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "is forbidden by the task policy" in log and name in log, log


def test_an_allowed_task_passes_and_warn_logs(admin):
    rules = {
        "task": {
            "allow": [{"taskName": "log"}],
            "deny": [{"taskName": "throw"}],
            "warn": [{"taskName": "sleep", "msg": "sleeping is wasteful"}],
        }
    }
    org, project, name = project_with(admin, rules)
    pid = start_process(admin, sleeper(0), parts={"org": org, "project": project})
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    log = process_log(admin, pid)
    assert "sleeping is wasteful (policy '%s')" % name in log and "woke up" in log, log


# ---- workspace and runtime ------------------------------------------------------------------


def test_workspace_size_and_files(admin):
    org, project, name = project_with(admin, {"workspace": {"maxSizeInBytes": 1000, "maxFileCount": 3}})
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=parts, files={"big.bin": b"x" * 2000}, expect=413)
    assert "Workspace too big" in r.json()["message"] and name in r.json()["message"], r.text
    many = {"f%d.txt" % i: b"x" for i in range(5)}
    r = start_process(admin, HELLO, parts=parts, files=many, expect=413)
    assert "Too many files" in r.json()["message"], r.text
    assert wait_process(admin, start_process(admin, HELLO, parts=parts))["status"] == "FINISHED"


def test_file_rule(admin):
    rules = {"file": {"deny": [{"names": [".*\\.exe"], "msg": "no executables: {0}"}]}}
    org, project, name = project_with(admin, rules)
    r = start_process(admin, HELLO, parts={"org": org, "project": project}, files={"tool.exe": b"MZ"}, expect=400)
    assert r.json()["message"] == "no executables: tool.exe (policy '%s')" % name, r.text


def test_runtime_rule(admin):
    org, project, name = project_with(admin, {"runtime": {"runtimes": ["concord-v1"], "msg": "{0} is not allowed"}})
    r = start_process(admin, HELLO, parts={"org": org, "project": project}, expect=400)
    assert r.json()["message"] == "concord-v2 is not allowed (policy '%s')" % name, r.text


# ---- entity, raw payload and attachments ----------------------------------------------------


def test_entity_rule_denies_creating_a_project_by_name(admin):
    org, _ = make_org(admin)
    rules = {
        "entity": {
            "deny": [
                {
                    "entity": "project",
                    "action": "create",
                    "conditions": {"entity": {"name": "forbidden-.*"}, "owner": {"userType": "LOCAL"}},
                    "msg": "no forbidden projects",
                }
            ]
        }
    }
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org)
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": unique("forbidden-")})
    assert r.status_code == 403, r.text
    assert r.json()["message"] == "no forbidden projects (policy '%s')" % name, r.text
    assert admin.post("/api/v1/org/%s/project" % org, json={"name": unique("fine")}).status_code == 200
    assert len(admin.get("/api/v1/org/%s/project" % org).json()) == 1  # nothing half-stored


def test_entity_rule_denies_a_secret_type(admin):
    org, _ = make_org(admin)
    name, _ = put_policy(admin, {"entity": {"deny": [{"entity": "secret", "conditions": {"entity": {"type": "DATA"}}}]}})
    link(admin, name, orgName=org)
    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, unique("s")), "type": (None, "data"),
                                                        "data": ("d", b"x")})
    assert r.status_code == 403 and name in r.json()["message"], r.text
    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, unique("s")), "type": (None, "username_password"),
                                                        "username": (None, "u"), "password": (None, "p")})
    assert r.status_code == 200, r.text


def test_entity_rule_on_an_org_update(fresh_server):
    from conftest import ADMIN_KEY, Client

    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    name, _ = put_policy(admin, {"entity": {"deny": [{"entity": "org", "action": "update", "msg": "frozen"}]}})
    link(admin, name)  # the server's policy
    r = admin.post("/api/v1/org", json={"name": org, "visibility": "PRIVATE"})
    assert r.status_code == 403 and r.json()["message"] == "frozen (policy '%s')" % name, r.text
    assert admin.post("/api/v1/org", json={"name": unique("porg")}).status_code == 200  # create is not denied


def test_raw_payload_size(admin):
    org, project, name = project_with(admin, {"rawPayload": {"maxSizeInBytes": 200}})
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=parts, files={"data.bin": b"x" * 300}, expect=413)
    assert r.json()["message"].startswith("Raw payload size too big: current"), r.text
    assert name in r.json()["message"]
    assert wait_process(admin, start_process(admin, HELLO, parts=parts))["status"] == "FINISHED"


def test_attachments_size_fails_the_process(admin):
    org, project, name = project_with(admin, {"attachments": {"maxSizeInBytes": 100}})
    parts = {"org": org, "project": project}
    pid = start_process(admin, HELLO, parts=parts, files={"_attachments/big.txt": b"x" * 500})
    p = wait_process(admin, pid, timeout=60)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    assert "The size of process attachments exceeds the allowed value: current 500 byte(s)" in log, log
    assert name in log
    assert wait_process(admin, start_process(admin, HELLO, parts=parts))["status"] == "FINISHED"


# ---- cron triggers --------------------------------------------------------------------------


def cron_flow(spec):
    return """
flows:
  default:
    - log: "tick"
triggers:
  - cron:
      spec: "%s"
      entryPoint: default
""" % spec


def test_cron_trigger_min_interval(admin):
    from repo_util import REPO_API, GitRepo, create_repo

    org, project, name = project_with(admin, {"cronTrigger": {"minInterval": 120}})
    often, hourly = GitRepo({"concord.yml": cron_flow("*/1 * * * *")}), GitRepo({"concord.yml": cron_flow("0 * * * *")})
    try:
        r = create_repo(admin, org, project, often.url, expect=400, branch="main")
        assert "minimum interval of 120 second(s)" in r.json()["message"] and name in r.json()["message"], r.text
        assert admin.get(REPO_API % (org, project)).json() == []  # nothing stored
        repo, _ = create_repo(admin, org, project, hourly.url, branch="main")
        r = admin.get((REPO_API % (org, project)) + "/%s/trigger" % repo)
        assert r.status_code == 200 and len(r.json()) == 1, r.text
    finally:
        often.cleanup()
        hourly.cleanup()


# ---- JSON stores ----------------------------------------------------------------------------


def test_json_store_count_per_org_and_data_size(admin):
    org, _ = make_org(admin)
    rules = {"jsonStore": {"store": {"maxNumberPerOrg": 1, "msg": "one store: {0}/{1}"}, "data": {"maxSizeInBytes": 50}}}
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org)
    store = unique("js")
    assert admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": store}).status_code == 200
    r = admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": unique("js")})
    assert r.status_code == 400 and r.json()["message"] == "one store: 1/1 (policy '%s')" % name, r.text
    assert len(admin.get("/api/v1/org/%s/jsonstore" % org).json()) == 1
    # updating the existing store is not a new one
    assert admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": store, "visibility": "PRIVATE"}).status_code == 200
    item = "/api/v1/org/%s/jsonstore/%s/item/" % (org, store)
    assert admin.put(item + "a", json={"v": "x" * 10}).status_code == 200
    r = admin.put(item + "b", json={"v": "x" * 60})
    assert r.status_code == 413 and "Maximum data size in the JSON store exceeded" in r.json()["message"], r.text
    cap = admin.get("/api/v1/org/%s/jsonstore/%s/capacity" % (org, store)).json()
    assert cap["maxSize"] == 50, cap


def test_entity_rule_denies_a_repository_url(admin):
    from repo_util import REPO_API, GitRepo, create_repo

    rules = {"entity": {"deny": [{"entity": "repository", "conditions": {"entity": {"url": "file://.*"}}, "msg": "local"}]}}
    org, project, name = project_with(admin, rules)
    repo = GitRepo({"concord.yml": HELLO})
    try:
        r = create_repo(admin, org, project, repo.url, expect=403, branch="main")
        assert r.json()["message"] == "local (policy '%s')" % name, r.text
        assert admin.get(REPO_API % (org, project)).json() == []
    finally:
        repo.cleanup()


def test_entity_rule_denies_a_blanket_github_trigger(admin):
    from repo_util import REPO_API, GitRepo, create_repo

    rules = {
        "entity": {
            "deny": [
                {
                    "entity": "trigger",
                    "action": "create",
                    "conditions": {"entity": {"eventSource": "github", "params": {"githubRepo": "\\.\\*"}}},
                    "msg": "Blanket GitHub triggers are disallowed",
                }
            ]
        }
    }
    org, project, name = project_with(admin, rules)
    flow = HELLO + """
triggers:
  - github:
      version: 2
      entryPoint: default
      conditions:
        type: push
        githubRepo: "%s"
"""
    blanket, narrow = GitRepo({"concord.yml": flow % ".*"}), GitRepo({"concord.yml": flow % "mine"})
    try:
        r = create_repo(admin, org, project, blanket.url, expect=400, branch="main")
        assert r.json()["message"] == "Blanket GitHub triggers are disallowed (policy '%s')" % name, r.text
        assert admin.get(REPO_API % (org, project)).json() == []
        create_repo(admin, org, project, narrow.url, branch="main")
    finally:
        blanket.cleanup()
        narrow.cleanup()


def test_changes_are_audited(admin):
    from test_audit import one

    name, _ = put_policy(admin, {})
    org, _ = make_org(admin)
    link(admin, name, orgName=org)
    assert admin.delete("/api/v2/policy/%s" % name).status_code == 200
    one(admin, "POLICY", "CREATE", policyName=name)
    one(admin, "POLICY", "UPDATE", policyName=name)
    one(admin, "POLICY", "DELETE", policyName=name)


def test_entity_rules_on_json_store_items_and_queries(admin):
    org, _ = make_org(admin)
    rules = {
        "entity": {
            "deny": [
                {"entity": "jsonStoreItem", "action": "update", "msg": "items are frozen"},
                {"entity": "jsonStoreItem", "conditions": {"entity": {"data": {"kind": "secret"}}}, "msg": "no secrets"},
                {"entity": "jsonStoreQuery", "conditions": {"entity": {"name": "adhoc-.*"}}, "msg": "no ad hoc"},
            ]
        }
    }
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org)
    store = unique("js")
    assert admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": store}).status_code == 200
    base = "/api/v1/org/%s/jsonstore/%s" % (org, store)
    assert admin.put(base + "/item/a", json={"kind": "plain"}).status_code == 200
    r = admin.put(base + "/item/a", json={"kind": "other"})
    assert r.status_code == 403 and r.json()["message"] == "items are frozen (policy '%s')" % name, r.text
    r = admin.put(base + "/item/b", json={"kind": "secret"})
    assert r.status_code == 403 and "no secrets" in r.json()["message"], r.text
    assert admin.get(base + "/item").json() == ["a"]  # nothing stored
    r = admin.post(base + "/query", json={"name": unique("adhoc-"), "text": "select 1"})
    assert r.status_code == 403 and "no ad hoc" in r.json()["message"], r.text
    assert admin.post(base + "/query", json={"name": unique("q"), "text": "select item_data from inventory_data"}).status_code == 200


# ---- kv -------------------------------------------------------------------------------------


def test_kv_max_entries(admin):
    org, project, name = project_with(admin, {"kv": {"maxEntries": 2, "msg": "kv full: {0}/{1}"}})
    flow = """
flows:
  default:
    - ${kv.putString('a', 'x')}
    - ${kv.inc('b')}
    - ${kv.putString('a', 'y')}
    - ${kv.inc('b')}
    - log: "a=${kv.getString('a')} b=${kv.getLong('b')}"
    - ${kv.putLong('c', 1)}
"""
    pid = start_process(admin, flow, parts={"org": org, "project": project})
    assert wait_process(admin, pid, timeout=60)["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "a=y b=2" in log and "kv full: 2/2 (policy '%s')" % name in log, log
    cap = "/api/v1/org/%s/project/%s/kv/capacity" % (org, project)
    assert admin.get(cap).json() == {"size": 2, "maxSize": 2}
    # a removed entry makes room
    flow = "flows:\n  default:\n    - ${kv.remove('a')}\n    - ${kv.putLong('c', 1)}\n    - log: \"c=${kv.getLong('c')}\"\n"
    pid = start_process(admin, flow, parts={"org": org, "project": project})
    assert wait_process(admin, pid, timeout=60)["status"] == "FINISHED"
    assert "c=1" in process_log(admin, pid)
    # without a kv rule the maximum is left out, as Concord does
    other, _ = make_project(admin, org)
    assert admin.get("/api/v1/org/%s/project/%s/kv/capacity" % (org, other)).json() == {"size": 0}
    assert admin.get("/api/v1/org/%s/project/%s/kv/capacity" % (org, unique("nope"))).status_code == 404


def test_policies_apply_from_the_first_link_and_after_a_restart(fresh_server):
    """A server without policies reads none per process (store/policies.c: known once, kept by
    its own writes); the first link applies at once, and a restarted server finds the links."""
    from conftest import ADMIN_KEY, Client

    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    parts = {"org": org, "project": project}
    before = start_process(admin, TASKS_FLOW, parts=parts)  # no policy anywhere yet
    assert wait_process(admin, before)["status"] == "FAILED"
    assert "not denied" in process_log(admin, before)
    name, _ = put_policy(admin, {"task": {"deny": [{"taskName": "thr.*", "msg": "no throwing"}]},
                                 "queue": {"concurrent": {"maxPerProject": 1}}})
    link(admin, name, orgName=org, projectName=project)
    pid = start_process(admin, TASKS_FLOW, parts=parts)
    assert wait_process(admin, pid)["status"] == "FAILED"
    assert "no throwing (policy '%s')" % name in process_log(admin, pid)

    srv.stop()
    srv2 = fresh_server(data_dir=srv.data_dir).start()
    admin = Client(srv2.url, ADMIN_KEY)
    pid = start_process(admin, TASKS_FLOW, parts=parts)
    assert wait_process(admin, pid)["status"] == "FAILED"
    assert "no throwing (policy '%s')" % name in process_log(admin, pid)
    # The queue rule too: the second waits while the first runs.
    first = start_process(admin, sleeper(300), parts=parts)
    wait_process(admin, first, statuses=("RUNNING",), timeout=60)
    second = start_process(admin, HELLO, parts=parts)
    assert wait_process(admin, start_process(admin, HELLO, parts={"org": org}))["status"] == "FINISHED"
    assert status(admin, second)["status"] == "ENQUEUED"
    assert admin.delete("/api/v1/process/%s" % first).status_code in (200, 204)
    assert wait_process(admin, second, timeout=60)["status"] == "FINISHED"
