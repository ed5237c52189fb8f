"""Organization and project configuration (issue 24 part 3): GET/PUT/DELETE
/api/v1/org/{org}/project/{project}/cfg[/{path}] with the project's access rules, the cfg
merged into every process of the project in Concord's order (org < project < the
definition's configuration < active profiles < _main.json of the payload < the request),
and POST .../encrypt, whose value crypto.decryptString opens in that project only."""
import json

from conftest import process_log, start_process, wait_process
from proc_util import make_org, make_project, make_team, zip_bytes


def cfg_url(org, proj, path=""):
    return "/api/v1/org/%s/project/%s/cfg%s" % (org, proj, path)


def project(admin, **fields):
    org, _ = make_org(admin, **fields.pop("org_fields", {}))
    fields.setdefault("rawPayloadMode", "EVERYONE")
    proj, pid = make_project(admin, org, **fields)
    return org, proj, pid


def test_cfg_crud_at_the_root_and_at_paths(admin):
    org, proj, _ = project(admin)
    assert admin.get(cfg_url(org, proj)).json() == {}
    r = admin.put(cfg_url(org, proj), json={"arguments": {"a": 1}, "x": "y"})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}, r.text
    assert admin.get(cfg_url(org, proj)).json() == {"arguments": {"a": 1}, "x": "y"}
    assert admin.get(cfg_url(org, proj, "/arguments/a")).json() == 1
    # a value at a path: objects on the way are created, the rest is kept
    r = admin.put(cfg_url(org, proj, "/arguments/deep/er"), json=[1, 2])
    assert r.status_code == 200, r.text
    assert admin.get(cfg_url(org, proj)).json() == {"arguments": {"a": 1, "deep": {"er": [1, 2]}}, "x": "y"}
    # the project's own record shows it too
    assert admin.get("/api/v2/org/%s/project/%s" % (org, proj)).json()["cfg"]["x"] == "y"
    r = admin.get(cfg_url(org, proj, "/arguments/nope"))
    assert r.status_code == 404 and r.json()["message"] == "Value not found: /arguments/nope", r.text
    r = admin.put(cfg_url(org, proj, "/x/under"), json=1)
    assert r.status_code == 400 and "not an object" in r.json()["message"], r.text
    r = admin.put(cfg_url(org, proj), json=[1])
    assert r.status_code == 400 and r.json()["message"] == "Expected a JSON object: [1]", r.text
    r = admin.put(cfg_url(org, proj), data="{}", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415, r.text
    r = admin.delete(cfg_url(org, proj, "/arguments/deep"))
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "DELETED"}, r.text
    assert admin.get(cfg_url(org, proj)).json() == {"arguments": {"a": 1}, "x": "y"}
    assert admin.delete(cfg_url(org, proj)).status_code == 200
    assert admin.get(cfg_url(org, proj)).json() == {}
    assert admin.get(cfg_url(org, "no-such-project")).status_code == 404


def test_cfg_follows_the_project_access_rules(admin, new_user):
    org, proj, _ = project(admin, visibility="PRIVATE")
    assert admin.put(cfg_url(org, proj), json={"k": "v"}).status_code == 200
    outsider = new_user()
    assert outsider.get(cfg_url(org, proj)).status_code in (403, 404)
    assert outsider.put(cfg_url(org, proj), json={}).status_code in (403, 404)
    reader, writer = new_user(), new_user()
    make_team(admin, org, [(reader, "MEMBER")], project=proj, level="READER")
    make_team(admin, org, [(writer, "MEMBER")], project=proj, level="WRITER")
    assert reader.get(cfg_url(org, proj)).json() == {"k": "v"}
    assert reader.put(cfg_url(org, proj, "/k"), json="w").status_code == 403
    assert reader.delete(cfg_url(org, proj)).status_code == 403
    assert writer.put(cfg_url(org, proj, "/k"), json="w").status_code == 200
    assert admin.get(cfg_url(org, proj)).json() == {"k": "w"}
    assert outsider.post("/api/v1/org/%s/project/%s/encrypt" % (org, proj), data="x",
                         headers={"Content-Type": "text/plain"}).status_code in (403, 404)


PRECEDENCE = """
configuration:
  arguments:
    c: def
    d: def
    e: def
    f: def
    nested:
      z: def
profiles:
  p1:
    configuration:
      arguments:
        d: profile
        e: profile
        f: profile
flows:
  default:
    - log: "default ran"
  main:
    - log: "a=${a} b=${b} c=${c} d=${d} e=${e} f=${f} nested=${nested} ref=${ref}"
"""


def test_org_and_project_cfg_reach_processes_in_concords_order(admin):
    org_cfg = {"arguments": {"a": "org", "b": "org", "c": "org", "d": "org", "e": "org", "f": "org",
                             "nested": {"x": "org", "y": "org"}},
               "entryPoint": "default"}
    org, proj, _ = project(admin, org_fields={"cfg": org_cfg})
    r = admin.put(cfg_url(org, proj), json={
        "arguments": {"b": "project", "c": "project", "d": "project", "e": "project", "f": "project",
                      "nested": {"y": "project"}, "ref": "${b}-ref"},
        "entryPoint": "main", "activeProfiles": ["p1"]})
    assert r.status_code == 200, r.text
    main_json = json.dumps({"arguments": {"e": "workspace", "f": "workspace"}}).encode()
    archive = zip_bytes({"concord.yml": PRECEDENCE, "_main.json": main_json})
    pid = start_process(admin, parts={"org": org, "project": proj, "arguments.f": "request"},
                        files={"archive": (archive, "application/zip")})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    # entryPoint and activeProfiles from the project's cfg (the definition names neither)
    assert "default ran" not in log
    assert ("a=org b=project c=def d=profile e=workspace f=request "
            "nested={x=org, y=project, z=def} ref=project-ref") in log, log


def test_a_process_of_another_project_does_not_get_the_cfg(admin):
    org, proj, _ = project(admin)
    assert admin.put(cfg_url(org, proj), json={"arguments": {"secretish": "p1"}}).status_code == 200
    other, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    flow = "flows:\n  default:\n    - log: \"has=${hasVariable('secretish')}\"\n"
    pid = start_process(admin, flow, parts={"org": org, "project": other})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "has=false" in process_log(admin, pid)
    pid = start_process(admin, flow, parts={"org": org, "project": proj})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "has=true" in process_log(admin, pid)


def test_a_broken_main_json_in_the_archive_is_refused(admin):
    archive = zip_bytes({"concord.yml": "flows:\n  default:\n    - log: hi\n", "_main.json": b"[1, 2"})
    r = start_process(admin, files={"archive": (archive, "application/zip")}, expect=400)
    assert r.json()["message"].startswith("Invalid request data format"), r.text


def test_main_json_in_the_archive_is_below_the_request(admin):
    main_json = json.dumps({"arguments": {"w": "workspace", "both": "workspace"}, "entryPoint": "main"})
    flow = "flows:\n  default:\n    - log: wrong\n  main:\n    - log: \"w=${w} both=${both}\"\n"
    archive = zip_bytes({"concord.yml": flow, "_main.json": main_json.encode()})
    pid = start_process(admin, parts={"arguments.both": "request"}, files={"archive": (archive, "application/zip")})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "w=workspace both=request" in process_log(admin, pid)


DECRYPT = """
flows:
  default:
    - set:
        same: "${crypto.decryptString(enc) == 'top s3cret'}"
    - log: "same=${same}"
"""


def test_encrypt_gives_a_value_only_the_projects_processes_open(admin):
    org, proj, _ = project(admin)
    r = admin.post("/api/v1/org/%s/project/%s/encrypt" % (org, proj), data="top s3cret",
                   headers={"Content-Type": "text/plain"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert list(body) == ["ok", "data"] and body["ok"] is True
    enc = body["data"]
    assert "s3cret" not in enc
    pid = start_process(admin, DECRYPT, parts={"org": org, "project": proj, "arguments.enc": enc})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "same=true" in log
    # stored in the project's cfg, it reaches the process the same way
    assert admin.put(cfg_url(org, proj, "/arguments/enc"), json=enc).status_code == 200
    pid = start_process(admin, DECRYPT, parts={"org": org, "project": proj})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "same=true" in process_log(admin, pid)
    # another project's process cannot open it
    other, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    pid = start_process(admin, DECRYPT, parts={"org": org, "project": other, "arguments.enc": enc})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED" and "same=true" not in log, log
    # text/plain only
    r = admin.post("/api/v1/org/%s/project/%s/encrypt" % (org, proj), json="x")
    assert r.status_code == 415, r.text


def test_a_child_process_of_the_project_gets_the_cfg_too(admin):
    org, proj, _ = project(admin)
    assert admin.put(cfg_url(org, proj), json={"arguments": {"fromCfg": "yes"}}).status_code == 200
    child = "flows:\n  default:\n    - log: \"child fromCfg=${fromCfg}\"\n"
    flow = """
flows:
  default:
    - log: "parent fromCfg=${fromCfg}"
    - task: concord
      in: {action: start, payload: child, sync: true}
"""
    pid = start_process(admin, flow, parts={"org": org, "project": proj}, files={"child/concord.yml": child.encode()})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "parent fromCfg=yes" in log
    kids = admin.get("/api/v1/process/%s/subprocess" % pid).json()
    assert len(kids) == 1 and "child fromCfg=yes" in process_log(admin, kids[0]["instanceId"])


def test_debug_and_dry_run_from_the_cfg_unless_the_request_says_otherwise(admin):
    org, proj, _ = project(admin)
    assert admin.put(cfg_url(org, proj), json={"dryRun": True, "debug": True}).status_code == 200
    flow = "flows:\n  default:\n    - log: \"dry=${isDryRun()} debug=${isDebug()}\"\n"
    pid = start_process(admin, flow, parts={"org": org, "project": proj})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "dry=true debug=true" in process_log(admin, pid)
    pid = start_process(admin, flow, parts={"org": org, "project": proj, "dryRun": "false"})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "dry=false debug=true" in process_log(admin, pid)
    assert admin.put(cfg_url(org, proj, "/dryRun"), json="maybe").status_code == 200
    r = start_process(admin, flow, parts={"org": org, "project": proj}, expect=400)
    assert "Invalid 'dryRun' mode value type" in r.json()["message"], r.text


def test_meta_of_the_org_and_project_cfg_under_the_definitions_and_the_requests(admin):
    """The initial metadata: the org's cfg meta, the project's over it, the definition's
    configuration.meta over that, the request's meta part over everything."""
    org, proj, _ = project(admin, org_fields={"cfg": {"meta": {"team": "org", "tier": "org", "owner": "org"}}})
    assert admin.put(cfg_url(org, proj), json={"meta": {"tier": "project", "env": "project"}}).status_code == 200
    flow = ("configuration:\n  meta:\n    env: definition\n    owner: definition\n"
            "flows:\n  default:\n    - log: hi\n")
    pid = start_process(admin, flow, parts={"org": org, "project": proj},
                        files={"meta": (json.dumps({"owner": "request"}).encode(), "application/json")})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    meta = admin.get("/api/v1/process/%s" % pid).json()["meta"]
    assert {k: meta.get(k) for k in ("team", "tier", "env", "owner")} == {
        "team": "org", "tier": "project", "env": "definition", "owner": "request"}, meta


def test_out_of_the_project_cfg_names_out_variables(admin):
    org, proj, _ = project(admin)
    assert admin.put(cfg_url(org, proj), json={"out": ["fromCfg"]}).status_code == 200
    flow = "flows:\n  default:\n    - set:\n        fromCfg: \"saved\"\n        other: \"not saved\"\n"
    pid = start_process(admin, flow, parts={"org": org, "project": proj})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    out = admin.get("/api/v1/process/%s" % pid).json()["meta"].get("out")
    assert out == {"fromCfg": "saved"}, out
