"""Policies' entity rules on every path that writes an entity, and the warn lists (issue 30
part 4, docs/security.md "Policies"): JSON stores, their items and queries written by the
`jsonStore` task and through the inventory API, secrets created by the `crypto` task and
updated by `concordSecrets` or the v2 API, repositories named in a project's body; warn
rules log and let the action pass.  Policies are linked to fresh orgs here, so that the
shared server's other tests see none."""
from conftest import process_log, start_process, unique, wait_process
from proc_util import HELLO, make_org, make_project
from test_policies import link, put_policy


def org_with(admin, rules):
    """A fresh org with the policy linked to it, and a project of it for raw payloads."""
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org)
    return org, project, name


def run(admin, org, project, flow, expect="FINISHED"):
    pid = start_process(admin, flow, parts={"org": org, "project": project})
    p = wait_process(admin, pid, timeout=60)
    log = process_log(admin, pid)
    assert p["status"] == expect, log
    return log


JSON_RULES = {
    "entity": {
        "deny": [
            {"entity": "jsonStore", "action": "create", "conditions": {"entity": {"name": "deny-.*"}},
             "msg": "no such stores"},
            {"entity": "jsonStore", "action": "update", "conditions": {"entity": {"name": "frozen-.*"}},
             "msg": "frozen stores"},
            {"entity": "jsonStoreItem", "conditions": {"entity": {"data": {"kind": "secret"}}}, "msg": "no secrets"},
            {"entity": "jsonStoreQuery", "conditions": {"entity": {"name": "adhoc-.*"}}, "msg": "no ad hoc"},
        ]
    }
}


def test_the_json_store_task_obeys_entity_rules(admin):
    org, project, name = org_with(admin, JSON_RULES)
    store = unique("js")
    assert admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": store}).status_code == 200
    base = "/api/v1/org/%s/jsonstore/%s" % (org, store)
    denied, frozen = unique("deny"), unique("frozen")
    assert admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": frozen}).status_code == 200
    for step, msg in (
        ("${jsonStore.createOrUpdateStore('%s')}" % frozen, "frozen stores"),
        ("${jsonStore.put('%s', 'a', {'kind': 'secret'})}" % store, "no secrets"),
        ("${jsonStore.upsert('%s', 'a', {'kind': 'secret'})}" % denied, "no such stores"),
        ("${jsonStore.createOrUpdateStore('%s')}" % denied, "no such stores"),
        ("${jsonStore.upsertQuery('%s', 'adhoc-1', 'select 1')}" % store, "no ad hoc"),
    ):
        log = run(admin, org, project, "flows:\n  default:\n    - \"%s\"\n" % step, expect="FAILED")
        assert "%s (policy '%s')" % (msg, name) in log, log
    r = admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": frozen, "visibility": "PUBLIC"})
    assert r.status_code == 403 and "frozen stores" in r.json()["message"], r.text
    # nothing of it was stored
    assert admin.get(base + "/item").json() == []
    assert admin.get(base + "/query").json() == []
    assert admin.get("/api/v1/org/%s/jsonstore/%s" % (org, denied)).status_code == 404
    # what the rules do not name passes
    flow = """
flows:
  default:
    - "${jsonStore.put('%(s)s', 'a', {'kind': 'plain'})}"
    - "${jsonStore.createOrUpdateStore('%(s)s-2')}"
    - "${jsonStore.upsertQuery('%(s)s', 'qry1', 'select item_data from json_store_data')}"
""" % {"s": store}
    run(admin, org, project, flow)
    assert admin.get(base + "/item/a").json() == {"kind": "plain"}


def test_the_inventory_api_obeys_json_store_rules(admin):
    rules = dict(JSON_RULES, jsonStore={"store": {"maxNumberPerOrg": 2, "msg": "stores: {0}/{1}"}})
    org, _, name = org_with(admin, rules)
    api = "/api/v1/org/%s/inventory" % org
    r = admin.post(api, json={"name": unique("deny")})
    assert r.status_code == 403 and r.json()["message"] == "no such stores (policy '%s')" % name, r.text
    inv = unique("inv")
    assert admin.post(api, json={"name": inv}).status_code == 200
    r = admin.post(api + "/%s/data/host1" % inv, json={"kind": "secret"})
    assert r.status_code == 403 and "no secrets" in r.json()["message"], r.text
    assert admin.post(api + "/%s/data/host1" % inv, json={"kind": "plain"}).status_code == 200
    r = admin.post(api + "/%s/query/%s" % (inv, unique("adhoc")), data="select item_data from inventory_data",
                   headers={"Content-Type": "text/plain"})
    assert r.status_code == 403 and "no ad hoc" in r.json()["message"], r.text
    # the JSON store API and the inventory API count the same stores
    assert admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": unique("js")}).status_code == 200
    r = admin.post(api, json={"name": unique("inv")})
    assert r.status_code == 400 and r.json()["message"] == "stores: 2/2 (policy '%s')" % name, r.text
    assert len(admin.get(api).json()) == 2


def test_a_json_store_owner_is_named(admin):
    rules = {"entity": {"deny": [{"entity": "jsonStore", "conditions": {"entity": {"ownerName": "admin"}},
                                  "msg": "not by admin"}]}}
    org, _, name = org_with(admin, rules)
    r = admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": unique("js")})
    assert r.status_code == 403 and r.json()["message"] == "not by admin (policy '%s')" % name, r.text


def test_the_json_store_task_obeys_the_store_count(admin):
    org, project, name = org_with(admin, {"jsonStore": {"store": {"maxNumberPerOrg": 1}}})
    run(admin, org, project, "flows:\n  default:\n    - \"${jsonStore.createOrUpdateStore('%s')}\"\n" % unique("a"))
    log = run(admin, org, project, "flows:\n  default:\n    - \"${jsonStore.upsert('%s', 'x', {'a': 1})}\"\n"
              % unique("b"), expect="FAILED")
    assert "Too many JSON stores in the organization: current 1, limit 1 (policy '%s')" % name in log, log
    assert len(admin.get("/api/v1/org/%s/jsonstore" % org).json()) == 1


SECRET_RULES = {
    "entity": {
        "deny": [
            {"entity": "secret", "action": "create", "conditions": {"entity": {"name": "deny-.*"}},
             "msg": "no such secrets"},
            {"entity": "secret", "action": "update", "conditions": {"entity": {"name": "frozen-.*"}},
             "msg": "frozen secrets"},
        ]
    }
}


def test_secrets_of_tasks_and_updates_obey_entity_rules(admin):
    org, project, name = org_with(admin, SECRET_RULES)
    denied = unique("deny")
    flow = """
flows:
  default:
    - task: crypto
      in:
        action: create
        secretName: %s
        stringValue: "v-1"
"""
    log = run(admin, org, project, flow % denied, expect="FAILED")
    assert "no such secrets (policy '%s')" % name in log, log
    assert admin.get("/api/v1/org/%s/secret/%s" % (org, denied)).status_code == 404
    log = run(admin, org, project, flow.replace("crypto", "concordSecrets").replace("secretName", "name")
              .replace("stringValue", "data") % denied, expect="FAILED")
    assert "no such secrets" in log, log
    assert admin.get("/api/v1/org/%s/secret/%s" % (org, denied)).status_code == 404
    # updates: the v2 API and concordSecrets
    frozen = unique("frozen")
    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, frozen), "type": (None, "data"),
                                                        "data": ("d", b"one")})
    assert r.status_code == 200, r.text
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, frozen), files={"data": (None, "two")})
    assert r.status_code == 403 and r.json()["message"] == "frozen secrets (policy '%s')" % name, r.text
    update = """
flows:
  default:
    - task: concordSecrets
      in:
        action: update
        name: %s
        data: "three"
"""
    log = run(admin, org, project, update % frozen, expect="FAILED")
    assert "frozen secrets (policy '%s')" % name in log, log
    export = admin.post("/api/v1/org/%s/secret/%s/data" % (org, frozen))
    assert export.content == b"one"
    # others pass
    run(admin, org, project, flow % unique("fine"))


def test_repositories_in_a_project_body_obey_entity_rules(admin):
    from repo_util import GitRepo

    rules = {"entity": {"deny": [{"entity": "repository", "conditions": {"entity": {"name": "bad-.*"}},
                                  "msg": "no bad repositories"}]}}
    org, _, name = org_with(admin, rules)
    repo = GitRepo({"concord.yml": HELLO})
    try:
        project = unique("p")
        body = {"name": project, "repositories": {unique("bad"): {"url": repo.url, "branch": "main"}}}
        r = admin.post("/api/v1/org/%s/project" % org, json=body)
        assert r.status_code == 403 and r.json()["message"] == "no bad repositories (policy '%s')" % name, r.text
        assert admin.get("/api/v1/org/%s/project/%s" % (org, project)).status_code == 404  # nothing stored
        body["repositories"] = {unique("good"): {"url": repo.url, "branch": "main"}}
        assert admin.post("/api/v1/org/%s/project" % org, json=body).status_code == 200
    finally:
        repo.cleanup()


def test_entity_warn_rules_log_and_pass(server, admin):
    rules = {"entity": {"warn": [{"entity": "jsonStoreItem", "msg": "items are watched: {0}"},
                                 {"entity": "project", "action": "create"}]}}
    org, project, name = org_with(admin, rules)
    store = unique("js")
    assert admin.post("/api/v1/org/%s/jsonstore" % org, json={"name": store}).status_code == 200
    # over the API: the server's log
    assert admin.put("/api/v1/org/%s/jsonstore/%s/item/a" % (org, store), json={"k": 1}).status_code == 200
    watched = unique("watched")
    assert admin.post("/api/v1/org/%s/project" % org, json={"name": watched}).status_code == 200
    log = server.read_log()
    assert "items are watched: jsonStoreItem (policy '%s')" % name in log
    assert "Potentially restricted project (create) (policy '%s')" % name in log
    # from a process: its own log
    log = run(admin, org, project, "flows:\n  default:\n    - \"${jsonStore.put('%s', 'b', {'k': 2})}\"\n" % store)
    assert "[WARN ] items are watched: jsonStoreItem (policy '%s')" % name in log, log
    assert admin.get("/api/v1/org/%s/jsonstore/%s/item/b" % (org, store)).json() == {"k": 2}


def test_file_warn_rules_write_the_process_log(admin):
    rules = {"file": {"warn": [{"names": [".*\\.bak"], "msg": "backup files"}],
                      "deny": [{"names": [".*\\.exe"], "msg": "no executables"}]}}
    org, project, name = org_with(admin, rules)
    pid = start_process(admin, HELLO, parts={"org": org, "project": project}, files={"old.bak": b"x"})
    p = wait_process(admin, pid, timeout=60)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    line = "[WARN ] Potentially restricted file 'old.bak' (file policy: backup files, policy '%s')" % name
    assert line in log, log
    assert log.index(line) < log.index("hello from"), log  # the first lines of the log
    r = start_process(admin, HELLO, parts={"org": org, "project": project}, files={"a.exe": b"x"}, expect=400)
    assert r.json()["message"] == "no executables (policy '%s')" % name, r.text


def test_can_create(admin, new_user):
    """Concord's GET /api/v1/{entityType}/canCreate: what the entity rules let the caller
    create in an org (PROJECT and SECRET; true for the other types)."""
    org, _ = make_org(admin)

    def can(kind, org_name=org, client=admin):
        return client.get("/api/v1/%s/canCreate" % kind, params={"orgName": org_name} if org_name else None)

    assert can("PROJECT").json() is True and can("SECRET").json() is True
    rules = {"entity": {"deny": [{"entity": "project", "action": "create", "conditions": {"owner": {"username": "admin"}}}],
                        "warn": [{"entity": "secret"}]}}
    name, _ = put_policy(admin, rules)
    link(admin, name, orgName=org)
    assert can("PROJECT").json() is False
    assert can("SECRET").json() is True and can("JSON_STORE").json() is True
    assert can("project").status_code == 404
    assert can("PROJECT", org_name=None).status_code == 400
    assert can("PROJECT", org_name=unique("nope")).status_code == 404
    assert can("PROJECT", client=new_user()).status_code == 403  # not a member


def test_file_rules_as_concord_reads_them(admin):
    """Concord's FileRule: type defaults to file (any case), maxSize matches a file of that
    size or more, and a folder an allow rule names is not looked into."""
    rules = {"file": {"allow": [{"type": "DIR", "names": ["vendor"]}],
                      "deny": [{"names": ["secret.*"], "msg": "no secrets: {0}"}, {"maxSize": "1K", "msg": "big"}]}}
    org, project, name = org_with(admin, rules)
    parts = {"org": org, "project": project}
    r = start_process(admin, HELLO, parts=parts, files={"conf/secret.txt": b"x"}, expect=400)
    assert r.json()["message"] == "no secrets: conf/secret.txt (policy '%s')" % name, r.text
    r = start_process(admin, HELLO, parts=parts, files={"k.bin": b"x" * 1024}, expect=400)
    assert r.json()["message"] == "big (policy '%s')" % name, r.text
    ok = {"vendor/secret.txt": b"x", "vendor/big.bin": b"x" * 2048, "secret-dir/a.txt": b"x", "small.bin": b"x" * 1023}
    assert wait_process(admin, start_process(admin, HELLO, parts=parts, files=ok), timeout=60)["status"] == "FINISHED"
