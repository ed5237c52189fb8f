"""Concord's server integration tests (it/server in walmartlabs/concord), call for call:
the REST details that clients and scripts written for Concord rely on (issue 29)."""
import json

import requests

from conftest import process_log, start_process, unique, wait_process
from proc_util import make_project
from repo_util import git  # noqa: F401 (fixture)

# ProcessMetadataIT's definition: configuration.meta names the variables (with their
# initial values) that the process's meta shows.
META_FLOW = """
configuration:
  meta:
    x: 0
    y: "n/a"
    z: "n/a"
flows:
  default:
    - set:
        x: 123
        y: "xyz 234 abc"
        z: "${myVar}"
    - log: "Bye!"
"""


def list_meta(client, project, **filters):
    params = {"orgName": "Default", "projectName": project}
    params.update(filters)
    r = client.get("/api/v2/process", params=params)
    assert r.status_code == 200, r.text
    return sorted(p["instanceId"] for p in r.json())


def test_configuration_meta_is_process_meta_and_filters_find_it(admin):
    """ProcessMetadataIT: the values of the variables configuration.meta names are the
    process's meta once it ends, and the meta.* filters of the list find them."""
    project, _ = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    a = start_process(admin, META_FLOW, parts={"org": "Default", "project": project, "arguments.myVar": "randomA_1"})
    b = start_process(admin, META_FLOW, parts={"org": "Default", "project": project, "arguments.myVar": "randomB_2"})
    for pid in (a, b):
        assert wait_process(admin, pid)["status"] == "FINISHED"
    meta = wait_process(admin, a)["meta"]
    assert meta["x"] == 123 and meta["y"] == "xyz 234 abc" and meta["z"] == "randomA_1"
    both = sorted([a, b])
    assert list_meta(admin, project, **{"meta.x": "123"}) == both
    assert list_meta(admin, project, **{"meta.x.startsWith": "123"}) == both
    assert list_meta(admin, project, **{"meta.y.endsWith": "abc"}) == both
    assert list_meta(admin, project, **{"meta.z.startsWith": "randomA"}) == [a]
    assert list_meta(admin, project, **{"meta.z.startsWith": "random"}) == both
    assert list_meta(admin, project, **{"meta.z.eq": "randomB_2"}) == [b]
    assert list_meta(admin, project, **{"meta.z.notEq": "randomA_1"}) == [b]


def test_initial_meta_from_configuration_and_request(admin):
    """Before the flow sets them, the meta shows configuration.meta's values; the request's
    meta part is merged over them (a suspended process shows both)."""
    flow = """
configuration:
  meta:
    stage: "n/a"
    kept: "initial"
flows:
  default:
    - set:
        stage: "waiting"
    - suspend: ev
"""
    pid = start_process(admin, flow, files={"meta": (json.dumps({"kept": "from request", "extra": 1}),
                                                     "application/json")})
    p = wait_process(admin, pid, statuses=("SUSPENDED",))
    assert p["meta"]["stage"] == "waiting"
    assert p["meta"]["kept"] == "from request" and p["meta"]["extra"] == 1
    assert admin.delete("/api/v1/process/%s" % pid).status_code == 204


OUT_FLOW = """
flows:
  default:
    - set:
        myName: "world"
        myBool: true
"""


def test_out_part_merges_with_request_out(admin):
    """OutVariablesProjectIT.testOutVars: an `out` text part and the request's `out` list
    together, in a project whose outVariablesMode is EVERYONE."""
    project, _ = make_project(admin, "Default", rawPayloadMode="EVERYONE", outVariablesMode="EVERYONE")
    assert admin.get("/api/v1/org/Default/project/%s" % project).json()["outVariablesMode"] == "EVERYONE"
    pid = start_process(admin, OUT_FLOW, parts={"org": "Default", "project": project, "out": "myName"},
                        files={"request": (json.dumps({"out": ["myBool"]}), "application/json")})
    p = wait_process(admin, pid)
    assert p["meta"]["out"] == {"myName": "world", "myBool": True}


def test_out_variables_refused_by_default_in_a_project(admin):
    """OutVariablesProjectIT.testReject / testRejectFromRequest: a project's outVariablesMode
    is DISABLED by default; Accord refuses both forms at the start (400, nothing stored)."""
    project, pid_ = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    assert admin.get("/api/v1/org/Default/project/%s" % project).json()["outVariablesMode"] == "DISABLED"
    r = start_process(admin, OUT_FLOW, parts={"org": "Default", "project": project, "out": "myName,myBool"},
                      expect=400)
    assert "The project is not accepting custom out variables: %s" % pid_ in r.json()["message"]
    r = start_process(admin, OUT_FLOW, parts={"org": "Default", "project": project},
                      files={"request": (json.dumps({"out": ["myName"]}), "application/json")}, expect=400)
    assert "The project is not accepting custom out variables" in r.json()["message"]
    assert admin.post("/api/v1/org/Default/project", json={"name": project, "outVariablesMode": "SOME"}).status_code == 400
    # Without a project, out variables need no permission.
    assert wait_process(admin, start_process(admin, OUT_FLOW, parts={"out": "myName"}))["meta"]["out"] == {"myName": "world"}


def test_checkpoints_paged_v3(admin):
    """ProcessCheckpointV3Resource: GET /api/v3/process/{id}/checkpoint pages the list
    (offset 0, limit 10 by default; limit must be positive, offset not negative)."""
    steps = "\n".join('    - checkpoint: "cp%d"' % i for i in range(12))
    pid = start_process(admin, "flows:\n  default:\n" + steps + "\n")
    assert wait_process(admin, pid)["status"] == "FINISHED"
    r = admin.get("/api/v3/process/%s/checkpoint" % pid)
    assert r.status_code == 200, r.text
    assert [c["name"] for c in r.json()] == ["cp%d" % i for i in range(10)]
    r = admin.get("/api/v3/process/%s/checkpoint" % pid, params={"offset": 10, "limit": 5})
    assert [c["name"] for c in r.json()] == ["cp10", "cp11"]
    assert set(r.json()[0]) >= {"id", "name", "createdAt"}
    assert admin.get("/api/v3/process/%s/checkpoint" % pid, params={"limit": 0}).status_code == 400
    assert admin.get("/api/v3/process/%s/checkpoint" % pid, params={"offset": -1}).status_code == 400


def test_log_begins_with_the_agent_lines(admin):
    """Concord's agent begins each run's log with `Runtime: concord-v2` and the entry point;
    scripts that look for them find them before the flow's own lines."""
    flow = "flows:\n  main:\n    - log: \"in main\"\n    - suspend: go\n    - log: \"resumed\"\n"
    pid = start_process(admin, flow, parts={"entryPoint": "main"})
    wait_process(admin, pid, statuses=("SUSPENDED",))
    lines = process_log(admin, pid).splitlines()
    assert lines[0].endswith("[INFO ] Runtime: concord-v2"), lines
    assert lines[1].endswith("[INFO ] Using entry point: main"), lines
    assert "in main" in lines[2]
    assert admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code == 200
    assert wait_process(admin, pid)["status"] == "FINISHED"
    log = process_log(admin, pid)
    assert log.count("Runtime: concord-v2") == 2 and log.count("Using entry point") == 1


def test_state_snapshot(admin, new_user):
    """ProcessStateIT: GET /api/v1/process/{id}/state/snapshot/{file} answers a file of the
    process's state; without a file, the whole state as a ZIP.  A suspended process's state
    is its working directory (the engine's _attachments/_state/ left out); an ended one's,
    its attachments."""
    import io
    import zipfile

    flow = "flows:\n  default:\n    - set:\n        v: 1\n    - suspend: go\n"
    pid = start_process(admin, flow, parts={"out": "v"}, files={"data/extra.txt": b"extra"})
    wait_process(admin, pid, statuses=("SUSPENDED",))
    r = admin.get("/api/v1/process/%s/state/snapshot/concord.yml" % pid)
    assert r.status_code == 200 and r.content == flow.encode()
    assert admin.get("/api/v1/process/%s/state/snapshot/data/extra.txt" % pid).content == b"extra"
    r = admin.get("/api/v1/process/%s/state/snapshot" % pid)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(r.content)).namelist()
    assert "concord.yml" in names and "data/extra.txt" in names
    assert not [n for n in names if n.startswith("_attachments/_state")]
    assert admin.get("/api/v1/process/%s/state/snapshot/nosuch.txt" % pid).status_code == 404
    assert admin.get("/api/v1/process/%s/state/snapshot/_attachments/_state/x" % pid).status_code == 400
    assert new_user().get("/api/v1/process/%s/state/snapshot" % pid).status_code == 403
    assert admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code == 200
    assert wait_process(admin, pid)["status"] == "FINISHED"
    z = zipfile.ZipFile(io.BytesIO(admin.get("/api/v1/process/%s/state/snapshot" % pid).content))
    assert json.loads(z.read("_attachments/out.json")) == {"v": 1}


def test_wait_for_completion(admin):
    """GET /api/v1/process/{id}/waitForCompletion?timeout=<ms>: the ProcessEntry once the
    process has ended; 408 with the entry as it is when the timeout passes first."""
    import threading

    pid = start_process(admin, "flows:\n  default:\n    - suspend: go\n    - log: done\n")
    wait_process(admin, pid, statuses=("SUSPENDED",))
    r = admin.get("/api/v1/process/%s/waitForCompletion" % pid, params={"timeout": 50})
    assert r.status_code == 408 and r.json()["status"] == "SUSPENDED" and r.json()["instanceId"] == pid
    got = {}

    def waiter():
        got["r"] = admin.get("/api/v1/process/%s/waitForCompletion" % pid, params={"timeout": 60000})

    t = threading.Thread(target=waiter)
    t.start()
    assert admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code == 200
    t.join(90)
    assert got["r"].status_code == 200, got["r"].text
    assert got["r"].json()["status"] == "FINISHED"
    r = admin.get("/api/v1/process/%s/waitForCompletion" % pid)
    assert r.status_code == 200 and r.json()["status"] == "FINISHED"
    assert admin.get("/api/v1/process/%s/waitForCompletion" % pid, params={"timeout": "soon"}).status_code == 400
    r = admin.get("/api/v1/process/%s/waitForCompletion" % "00000000-0000-0000-0000-000000000000")
    assert r.status_code == 404


# ---- users and keys (item 7) ---------------------------------------------------------------


def test_usernames_are_stored_in_lower_case(admin):
    """Concord stores user names in lower case: a user created as `MixedCase` is `mixedcase`."""
    name = unique("MiXed")
    r = admin.post("/api/v1/user", json={"username": name, "type": "LOCAL"})
    assert r.status_code == 200 and r.json()["username"] == name.lower(), r.text
    assert admin.get("/api/v1/user/%s" % name).json()["name"] == name.lower()


def test_user_roles_get_and_replace(admin, new_user):
    """UserResource.updateUserRoles: POST (and PUT) /api/v1/user/{username}/roles replaces the
    global roles; GET reads them; admins only."""
    user = new_user()
    r = admin.get("/api/v1/user/%s/roles" % user.username)
    assert r.status_code == 200 and r.json()["roles"] == []
    r = admin.put("/api/v1/user/%s/roles" % user.username.upper(), json={"roles": ["concordSystemReader"]})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}, r.text
    assert admin.get("/api/v1/user/%s/roles" % user.username).json()["roles"] == ["concordSystemReader"]
    r = admin.post("/api/v1/user/%s/roles" % user.username, json={"roles": []})
    assert r.status_code == 200
    assert admin.get("/api/v1/user/%s" % user.username).json()["roles"] == []
    assert admin.put("/api/v1/user/%s/roles" % user.username, json={"roles": ["root"]}).status_code == 400
    assert admin.put("/api/v1/user/%s/roles" % user.username, json={}).status_code == 400
    assert admin.put("/api/v1/user/nosuchuser-x/roles", json={"roles": []}).status_code == 404
    assert admin.put("/api/v1/user/admin/roles", json={"roles": []}).status_code == 409
    assert user.put("/api/v1/user/%s/roles" % user.username, json={"roles": ["concordAdmin"]}).status_code == 403
    assert user.get("/api/v1/user/%s/roles" % user.username).status_code == 403


def test_disable_user(admin, new_user):
    """UserResource.disableUser: PUT /api/v1/user/{id}/disable answers the user, disabled; its
    credentials stop working; admins only."""
    user, other = new_user(), new_user()
    assert user.get("/api/v1/apikey").status_code == 200
    assert other.put("/api/v1/user/%s/disable" % user.user_id).status_code == 403
    r = admin.put("/api/v1/user/%s/disable" % user.user_id)
    assert r.status_code == 200 and r.json()["disabled"] is True and r.json()["name"] == user.username, r.text
    assert user.get("/api/v1/apikey").status_code == 401
    assert admin.put("/api/v1/user/%s/disable" % "00000000-0000-0000-0000-000000000000").status_code == 404
    assert admin.put("/api/v1/user/230c5c9c-d9a7-11e6-bcfd-bb681c07b26c/disable").status_code == 409


def test_list_users_v2(admin, new_user):
    """UserResourceV2.list: GET /api/v2/user?filter=&offset=&limit= — active users whose name
    contains the filter, by name, 10 by default."""
    tag = unique("lst")
    names = sorted("%s-%02d" % (tag, i) for i in range(12))
    for n in names:
        assert admin.post("/api/v1/user", json={"username": n, "type": "LOCAL", "email": n + "@x"}).status_code == 200
    r = admin.get("/api/v2/user", params={"filter": tag.upper()})
    assert r.status_code == 200 and [u["name"] for u in r.json()] == names[:10]
    assert r.json()[0]["email"] == names[0] + "@x"
    r = admin.get("/api/v2/user", params={"filter": tag, "offset": 10, "limit": 5})
    assert [u["name"] for u in r.json()] == names[10:]
    uid = admin.get("/api/v1/user/%s" % names[0]).json()["id"]
    assert admin.put("/api/v1/user/%s/disable" % uid).status_code == 200
    assert [u["name"] for u in admin.get("/api/v2/user", params={"filter": tag, "limit": 20}).json()] == names[1:]
    # another user sees the names, not the emails or roles
    seen = new_user().get("/api/v2/user", params={"filter": tag}).json()
    assert seen[0]["name"] == names[1] and "email" not in seen[0] and "roles" not in seen[0]
    assert admin.get("/api/v2/user", params={"limit": 0}).status_code == 400


def test_api_key_without_user_is_the_callers(new_user):
    """ApiKeyIT: a key created without `username`/`userId` belongs to the caller."""
    user = new_user()
    r = user.post("/api/v1/apikey", json={})
    assert r.status_code == 200, r.text
    assert r.json()["userId"] == user.user_id
    assert requests.get(user.url + "/api/v1/apikey", headers={"Authorization": r.json()["key"]},
                        timeout=30).status_code == 200


# ---- inventories (item 8) ------------------------------------------------------------------


def test_inventory_item_path_with_encoded_slash(admin):
    """InventoryIT: Concord's client sends the item path "/testPath" as data/%2FtestPath; the
    item is stored under "/testPath", which a query's `item_path like '%/testPath'` finds."""
    inv = unique("inv")
    assert admin.post("/api/v1/org/Default/inventory", json={"name": inv}).status_code == 200
    base = "/api/v1/org/Default/inventory/%s" % inv
    r = admin.post(base + "/data/%2FtestPath", json={"data": "testData"})
    assert r.status_code == 200, r.text
    r = admin.get(base + "/data/%2FtestPath", params={"singleItem": "true"})
    assert r.status_code == 200 and r.json() == {"data": "testData"}
    assert admin.get(base + "/data").json() == [{"path": "/testPath", "data": {"data": "testData"}}]
    q = "select cast(to_json(item_data) as varchar) from inventory_data where item_path like '%/testPath'"
    assert admin.post(base + "/query/q-like", data=q, headers={"Content-Type": "text/plain"}).status_code == 200
    assert admin.post(base + "/query/q-like/exec").json() == [{"data": "testData"}]
    assert admin.delete(base + "/data/%2FtestPath").status_code == 200
    assert admin.get(base + "/data").json() == []
    # no path: no item (Concord: 405; here the bulk write's route, which wants an array)
    r = admin.post(base + "/data/", json={"a": 1})
    assert r.status_code == 400 and "array" in r.json()["message"], r.text
    assert admin.get(base + "/data").json() == []


def test_inventory_select_star_is_saved(admin):
    """InventoryQueryIT.testDifferentContentTypes: `select * from inventory_data` is saved,
    sent as text/plain or (verbatim) as application/json; running it needs one column."""
    inv = unique("inv")
    assert admin.post("/api/v1/org/Default/inventory", json={"name": inv}).status_code == 200
    base = "/api/v1/org/Default/inventory/%s" % inv
    for name, ctype in (("q1-star", "text/plain"), ("q2-star", "application/json")):
        r = admin.post(base + "/query/" + name, data="select * from inventory_data", headers={"Content-Type": ctype})
        assert r.status_code == 200, r.text
    assert admin.get(base + "/query/q1-star").json()["text"] == "select * from inventory_data"
    r = admin.post(base + "/query/q1-star/exec")
    assert r.status_code == 400 and "exactly one column to run" in r.json()["message"]
    # the sandbox still holds: other tables stay out of reach with * too
    r = admin.post(base + "/query/q3-star", data="select * from users", headers={"Content-Type": "text/plain"})
    assert r.status_code == 400


# ---- exclusive groups (item 5) -------------------------------------------------------------


def test_empty_exclusive_group_refused_without_a_project(admin):
    """An empty exclusive group is refused for a process without a project too (Concord
    validates `exclusive` whatever the process belongs to); a valid one is still ignored."""
    bad = "configuration:\n  exclusive:\n    group: \"\"\nflows:\n  default:\n    - log: x\n"
    r = start_process(admin, bad, expect=400)
    assert "Invalid exclusive mode" in r.json()["message"]
    bad_mode = "configuration:\n  exclusive:\n    group: g\n    mode: sometimes\nflows:\n  default:\n    - log: x\n"
    assert start_process(admin, bad_mode, expect=400).status_code == 400
    ok = "configuration:\n  exclusive:\n    group: g\nflows:\n  default:\n    - log: x\n"
    assert wait_process(admin, start_process(admin, ok))["status"] == "FINISHED"


def test_websocket_is_a_clear_404(anon, admin):
    """Concord's agents and console connect to /websocket: Accord answers 404 saying it has
    no external agents, with or without credentials and with an upgrade request."""
    for client in (anon, admin):
        r = client.get("/websocket", headers={"Connection": "Upgrade", "Upgrade": "websocket"})
        assert r.status_code == 404 and r.json()["ok"] is False
        assert "external agents" in r.json()["message"]


# ---- forms (item 4) ------------------------------------------------------------------------

FORM_FLOW = """
flows:
  default:
    - form: myForm
      values:
        name: "preset"
        additionalData:
          nestedField:
            aValue: 123
    - log: "name=${myForm.name} env=${myForm.env} size=${myForm.size} extra=${myForm.additionalData.nestedField.aValue}"
forms:
  myForm:
    - name: {type: string}
    - env: {type: string, allow: ["prod"]}
    - size: {type: string, allow: "large"}
"""


def test_form_extra_values_kept_and_single_allow_defaults(admin):
    """Concord's forms: `values` that name no field ("additional data") are in the form's
    result beside the fields; a required field whose `allow` is one value defaults to it."""
    pid = start_process(admin, FORM_FLOW)
    wait_process(admin, pid, statuses=("SUSPENDED",))
    r = admin.post("/api/v1/process/%s/form/myForm" % pid, json={"name": "given"})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "name=given env=prod size=large extra=123" in process_log(admin, pid)


# ---- projects (item 1) ---------------------------------------------------------------------


def test_project_repositories_map_creates_and_replaces(admin, git):
    """Concord's ProjectEntry.repositories: the map in a project's create body creates its
    repositories; in an update body it replaces them (updated, added, the others deleted);
    a bad entry stores nothing."""
    from repo_util import flow

    a, b = git({"concord.yml": flow("from a")}), git({"concord.yml": flow("from b")})
    name = unique("proj")
    r = admin.post("/api/v1/org/Default/project", json={
        "name": name, "repositories": {"repo-a": {"url": a.url, "branch": "main"}, "repo-b": {"url": b.url}}})
    assert r.status_code == 200 and r.json()["result"] == "CREATED", r.text
    got = admin.get("/api/v1/org/Default/project/%s" % name).json()["repositories"]
    assert sorted(got) == ["repo-a", "repo-b"] and got["repo-a"]["url"] == a.url and got["repo-a"]["branch"] == "main"
    pid = start_process(admin, parts={"org": "Default", "project": name, "repo": "repo-a"})
    assert wait_process(admin, pid)["status"] == "FINISHED" and "from a" in process_log(admin, pid)
    # update: repo-a moves to a commit, repo-c is added, repo-b goes
    c = git({"concord.yml": flow("from c")})
    r = admin.post("/api/v1/org/Default/project", json={
        "name": name, "repositories": {"repo-a": {"url": a.url, "commitId": a.head()}, "repo-c": {"url": c.url}}})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    got = admin.get("/api/v1/org/Default/project/%s" % name).json()["repositories"]
    assert sorted(got) == ["repo-a", "repo-c"] and got["repo-a"]["commitId"] == a.head()
    # an update without the map keeps them
    assert admin.post("/api/v1/org/Default/project", json={"name": name, "description": "d"}).status_code == 200
    assert sorted(admin.get("/api/v1/org/Default/project/%s" % name).json()["repositories"]) == ["repo-a", "repo-c"]
    # a bad entry: 400 naming it, nothing stored (a new project is not created)
    other = unique("proj")
    r = admin.post("/api/v1/org/Default/project", json={
        "name": other, "repositories": {"good": {"url": a.url}, "bad": {"url": "file:///no/such/repo"}}})
    assert r.status_code == 400 and "repositories.bad" in r.json()["message"], r.text
    assert admin.get("/api/v1/org/Default/project/%s" % other).status_code == 404
    r = admin.post("/api/v1/org/Default/project", json={"name": name, "repositories": {"x": "not an object"}})
    assert r.status_code == 400
    assert sorted(admin.get("/api/v1/org/Default/project/%s" % name).json()["repositories"]) == ["repo-a", "repo-c"]


def test_deleted_projects_processes_keep_their_history(admin):
    """ProjectDeleteIT: a deleted project's processes stay, with their history and log, and
    lose their projectId."""
    project, _ = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    pid = start_process(admin, "flows:\n  default:\n    - log: \"kept\"\n",
                        parts={"org": "Default", "project": project, "tags": "deltest"})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert admin.delete("/api/v1/org/Default/project/%s" % project).status_code == 200
    r = admin.get("/api/v2/process/%s" % pid, params={"include": "history"})
    assert r.status_code == 200, r.text
    p = r.json()
    assert "projectId" not in p and "projectName" not in p and p["status"] == "FINISHED"
    assert [h["status"] for h in p["statusHistory"]][-1] == "FINISHED"
    assert "kept" in process_log(admin, pid)
    listed = admin.get("/api/v2/process", params={"tags": "deltest", "limit": 100}).json()
    assert pid in [x["instanceId"] for x in listed]


def test_project_moves_to_another_org(admin, new_user):
    """A project update naming another org (orgName or orgId) moves the project there; it
    needs OWNER of the project and membership of the target org."""
    from proc_util import make_org, make_team

    target, target_id = make_org(admin)
    name, pid = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    writer = new_user()
    make_team(admin, "Default", [(writer, "MEMBER")], project=name, level="WRITER")
    r = writer.post("/api/v1/org/Default/project", json={"name": name, "orgName": target})
    assert r.status_code == 403, r.text
    r = admin.post("/api/v1/org/Default/project", json={"name": name, "orgName": "no-such-org-x"})
    assert r.status_code == 400 and "Organization not found" in r.json()["message"]
    r = admin.post("/api/v1/org/Default/project", json={"name": name, "orgName": target})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED", "id": pid}, r.text
    assert admin.get("/api/v1/org/Default/project/%s" % name).status_code == 404
    moved = admin.get("/api/v1/org/%s/project/%s" % (target, name)).json()
    assert moved["id"] == pid and moved["orgId"] == target_id and moved["orgName"] == target
    assert admin.get("/api/v1/org/%s/project/%s/access" % (target, name)).json() == []
    # back by orgId; an org that is the current one is no move
    r = admin.post("/api/v1/org/%s/project" % target, json={"name": name, "orgId": "0fac1b18-d179-11e7-b3e7-d7df4543ed4f"})
    assert r.status_code == 200
    assert admin.post("/api/v1/org/Default/project", json={"name": name, "orgName": "Default"}).status_code == 200
    assert admin.get("/api/v1/org/Default/project/%s" % name).json()["id"] == pid
    # a project of that name in the target: 409
    make_project(admin, target, name=name)
    assert admin.post("/api/v1/org/Default/project", json={"name": name, "orgName": target}).status_code == 409


def test_new_users_are_members_of_default(admin, new_user):
    """Concord's UserManager.create adds every new user to the Default org's team `default`
    (MEMBER), so any user may create projects in Default; elsewhere org membership decides."""
    from proc_util import make_org

    user = new_user()
    members = admin.get("/api/v1/org/Default/team/default/users").json()
    assert {"username": user.username, "role": "MEMBER"}.items() <= next(
        m for m in members if m["username"] == user.username).items()
    r = user.post("/api/v1/org/Default/project", json={"name": unique("mine")})
    assert r.status_code == 200 and r.json()["result"] == "CREATED", r.text
    other, _ = make_org(admin)
    assert user.post("/api/v1/org/%s/project" % other, json={"name": unique("no")}).status_code == 403
    # out of the team, out of Default
    assert admin.delete("/api/v1/org/Default/team/default/users", json=[user.username]).status_code == 200
    assert user.post("/api/v1/org/Default/project", json={"name": unique("no")}).status_code == 403


def test_state_snapshot_is_for_the_process_owners(admin, new_user):
    """The state holds a process's arguments: its initiator, admins and OWNERs of its project
    may download it (as in Concord), a WRITER of the project may not."""
    from proc_util import make_team

    owner, writer = new_user(), new_user()
    project, _ = make_project(owner, "Default", rawPayloadMode="EVERYONE")
    make_team(admin, "Default", [(writer, "MEMBER")], project=project, level="WRITER")
    pid = start_process(writer, "flows:\n  default:\n    - suspend: go\n", parts={"org": "Default", "project": project})
    wait_process(admin, pid, statuses=("SUSPENDED",))
    url = "/api/v1/process/%s/state/snapshot/concord.yml" % pid
    assert writer.get(url).status_code == 200  # its initiator
    assert owner.get(url).status_code == 200  # the project's owner
    assert admin.get(url).status_code == 200
    other = new_user()
    make_team(admin, "Default", [(other, "MEMBER")], project=project, level="WRITER")
    r = other.get(url)
    assert r.status_code == 403 and "state" in r.json()["message"]
    assert admin.delete("/api/v1/process/%s" % pid).status_code == 204
