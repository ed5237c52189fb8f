"""Scoped API keys with rate limits (issue 30 part 5, docs/security.md "Scoped API keys"):
scopes allow or refuse per route, naming the missing scope; narrowing to an org or a
project; a key never exceeds its user; a rate limit answers 429 with Retry-After."""
import pytest

from conftest import Client, start_process, unique, wait_process
from proc_util import HELLO, make_org, make_project, make_team


def key_for(admin, client, **body):
    """A new key of client's user (created by the user itself); returns (Client, answer)."""
    r = client.post("/api/v1/apikey", json=body)
    assert r.status_code == 200, r.text
    k = r.json()["key"]
    return Client(admin.url, k, client.username, client.user_id, k), r.json()


def refused(r, status, *words):
    assert r.status_code == status, r.text
    body = r.json()
    assert body["ok"] is False
    for w in words:
        assert w in body["message"], body["message"]


@pytest.fixture
def world(admin, new_user):
    class W:
        pass
    w = W()
    w.user = new_user()
    w.org, w.org_id = make_org(admin)
    w.proj, w.proj_id = make_project(admin, w.org, visibility="PRIVATE", rawPayloadMode="TEAM_MEMBERS")
    w.other, w.other_id = make_project(admin, w.org, visibility="PRIVATE", rawPayloadMode="TEAM_MEMBERS")
    make_team(admin, w.org, [(w.user, "MEMBER")], w.proj, "WRITER")
    make_team(admin, w.org, [(w.user, "MEMBER")], w.other, "WRITER")
    return w


def test_unscoped_key_keeps_its_meaning(admin, world):
    k, body = key_for(admin, world.user)
    assert "scopes" not in body and "rateLimit" not in body
    assert k.get("/api/v1/org/%s/project" % world.org).status_code == 200
    assert k.get("/api/v1/org/%s/secret" % world.org).status_code == 200


def test_scopes_allow_and_refuse_per_route(admin, world):
    k, body = key_for(admin, world.user, scopes=["process:read", "secret:read"])
    k2, _ = key_for(admin, world.user, scopes=["secret:read"])
    assert body["scopes"] == ["process:read", "secret:read"]
    listed = [x for x in world.user.get("/api/v1/apikey").json() if x["id"] == body["id"]]
    assert listed[0]["scopes"] == ["process:read", "secret:read"]
    # allowed: secrets of the org, a process's status
    assert k.get("/api/v1/org/%s/secret" % world.org).status_code == 200
    pid = start_process(world.user, HELLO, parts={"org": world.org, "project": world.proj})
    assert k.get("/api/v1/process/%s" % pid).status_code == 200
    # refused, naming the missing scope
    refused(start_process(k, HELLO, parts={"org": world.org, "project": world.proj}, expect=403), 403,
            "process:start")
    refused(k.delete("/api/v1/process/%s" % pid), 403, "process:write")
    refused(k.get("/api/v1/org/%s/project" % world.org), 403, "project:read")
    refused(k.post("/api/v1/org/%s/secret" % world.org, files={"name": (None, "x"), "type": (None, "DATA")}),
            403, "secret:write")
    # open to every key: who am I
    assert k.get("/api/service/console/whoami").status_code == 200
    # routes that authenticate for themselves hold the scopes too (a custom form's page)
    refused(k2.get("/forms/%s/myform/form" % pid, allow_redirects=False), 403, "process:read")


def test_creation_is_audited_with_scopes(admin, world):
    _, body = key_for(admin, world.user, scopes=["process:read", "secret:read@%s" % world.org], rateLimit="5/s")
    r = admin.get("/api/v1/audit", params={"object": "API_KEY", "action": "CREATE", "limit": 1000})
    assert r.status_code == 200, r.text
    found = [e for e in r.json() if e["details"].get("name") == body["name"]
             and e["details"].get("username") == world.user.username]
    assert len(found) == 1, r.text
    assert found[0]["details"]["scopes"] == "process:read,secret:read@%s" % world.org
    assert found[0]["details"]["rateLimit"] == "5/s"


def test_a_limited_key_opens_no_console_session(admin, world):
    for body in ({"scopes": ["process:read"]}, {"rateLimit": "100/s"}):
        k, _ = key_for(admin, world.user, **body)
        r = k.get("/api/service/console/whoami", headers={"X-Concord-EnableSession": "true"})
        refused(r, 403, "console session")
        assert "Set-Cookie" not in r.headers
        assert k.get("/api/service/console/whoami").status_code == 200
    k, _ = key_for(admin, world.user)
    r = k.get("/api/service/console/whoami", headers={"X-Concord-EnableSession": "true"})
    assert r.status_code == 200 and "Set-Cookie" in r.headers, r.text


def test_wildcard_action(admin, world):
    k, _ = key_for(admin, world.user, scopes=["process:*"])
    pid = start_process(k, HELLO, parts={"org": world.org, "project": world.proj})
    wait_process(k, pid)
    assert k.get("/api/v1/process/%s/log" % pid).status_code == 200
    refused(k.get("/api/v1/org/%s/secret" % world.org), 403, "secret:read")


def test_narrowed_to_a_project(admin, world):
    k, body = key_for(admin, world.user, scopes=["process:start@%s/%s" % (world.org, world.proj),
                                                 "process:read@%s/%s" % (world.org, world.proj)])
    assert body["scopes"][0] == "process:start@%s/%s" % (world.org, world.proj)
    pid = start_process(k, HELLO, parts={"org": world.org, "project": world.proj})
    wait_process(k, pid)
    refused(start_process(k, HELLO, parts={"org": world.org, "project": world.other}, expect=403), 403,
            "does not reach", world.other)
    other = start_process(world.user, HELLO, parts={"org": world.org, "project": world.other})
    refused(k.get("/api/v1/process/%s" % other), 403, "does not reach")
    # a list across projects would show more than the narrowing: refused with a clear message
    refused(k.get("/api/v2/process"), 403, "narrowed")
    # so would an external event, which fires the triggers of every project
    t, _ = key_for(admin, world.user, scopes=["trigger:write@%s/%s" % (world.org, world.proj)])
    refused(t.post("/api/v1/events/%s" % unique("src"), json={"x": 1}), 403, "narrowed", "/api/v1/events/")
    t, _ = key_for(admin, world.user, scopes=["trigger:write"])
    assert t.post("/api/v1/events/%s" % unique("src"), json={"x": 1}).status_code == 200


def test_narrowed_start_in_a_project_open_to_org_members(admin, world):
    proj, _ = make_project(admin, world.org, rawPayloadMode="ORG_MEMBERS")
    k, _ = key_for(admin, world.user, scopes=["process:*@%s/%s" % (world.org, proj)])
    wait_process(k, start_process(k, HELLO, parts={"org": world.org, "project": proj}))
    # but not a one-off process of the org without a project
    refused(start_process(k, HELLO, parts={"org": world.org}, expect=403), 403, "does not reach")
    # nor one in Default, which takes one-off processes from anyone
    refused(start_process(k, HELLO, expect=403), 403, "does not reach", "Default")


def test_narrowed_to_default_as_in_the_readme(admin, new_user):
    u = new_user()
    k, _ = key_for(admin, u, scopes=["process:start@Default", "process:read@Default"], rateLimit="10/s")
    pid = start_process(k, HELLO)
    assert wait_process(k, pid)["status"] == "FINISHED"


def test_project_scope_narrowed_to_a_project(admin, world):
    k, _ = key_for(admin, world.user, scopes=["project:read@%s/%s" % (world.org, world.proj)])
    r = k.get("/api/v1/org/%s/project/%s" % (world.org, world.proj))
    assert r.status_code == 200 and r.json()["name"] == world.proj, r.text
    refused(k.get("/api/v1/org/%s/project/%s" % (world.org, world.other)), 403, "does not reach", world.other)
    # the org's project list would show the other project too
    refused(k.get("/api/v1/org/%s/project" % world.org), 403, "narrowed to projects")


def test_narrowed_to_an_org(admin, world, new_user):
    org2, _ = make_org(admin)
    make_team(admin, org2, [(world.user, "MEMBER")])
    k, _ = key_for(admin, world.user, scopes=["project:read@%s" % world.org])
    r = k.get("/api/v1/org/%s/project" % world.org)
    assert r.status_code == 200, r.text
    assert {p["name"] for p in r.json()} >= {world.proj, world.other}
    refused(k.get("/api/v1/org/%s/project" % org2), 403, "does not reach", org2)
    assert world.user.get("/api/v1/org/%s/project" % org2).status_code == 200


def test_bad_scopes_are_refused_and_nothing_stored(admin, world):
    before = len(world.user.get("/api/v1/apikey").json())
    for scopes, words in [(["bogus:read"], "unknown resource"), (["secret:start"], "only processes"),
                          (["secret:read@%s/%s" % (world.org, world.proj)], "org only"),
                          (["process:read@nosuchorg"], "organization not found"),
                          (["process:read@%s/nosuch" % world.org], "project not found"),
                          ("process:read", "list"), ([], "list")]:
        refused(world.user.post("/api/v1/apikey", json={"scopes": scopes}), 400, words)
    for rate in ["10/h", "0/s", "x/s", "10"]:
        refused(world.user.post("/api/v1/apikey", json={"rateLimit": rate}), 400, "rateLimit")
    assert len(world.user.get("/api/v1/apikey").json()) == before


def test_a_key_cannot_exceed_its_user(admin, world, new_user):
    # scopes only narrow: a non-admin's key with user:write still cannot create users
    k, _ = key_for(admin, world.user, scopes=["user:write", "org:*"])
    refused(k.post("/api/v1/user", json={"username": unique("u"), "type": "LOCAL"}), 403)
    # nor see an org its user is not in
    private_org, _ = make_org(admin, visibility="PRIVATE")
    assert k.get("/api/v1/org/%s" % private_org).status_code == 404
    # narrowing to an org the user cannot see is refused at creation
    refused(world.user.post("/api/v1/apikey", json={"scopes": ["process:read@%s" % private_org]}), 400,
            "organization not found")
    # a scoped key hands on only what it holds
    kk, _ = key_for(admin, world.user, scopes=["apikey:write", "process:read@%s" % world.org])
    refused(kk.post("/api/v1/apikey", json={}), 403, "needs 'scopes'")
    refused(kk.post("/api/v1/apikey", json={"scopes": ["process:read"]}), 403, "exceeds")
    r = kk.post("/api/v1/apikey", json={"scopes": ["process:read@%s/%s" % (world.org, world.proj)]})
    assert r.status_code == 200, r.text


def test_admin_key_narrowed(admin, world):
    k, _ = key_for(admin, admin, scopes=["process:read@%s/%s" % (world.org, world.proj)])
    other = start_process(world.user, HELLO, parts={"org": world.org, "project": world.other})
    refused(k.get("/api/v1/process/%s" % other), 403, "does not reach")
    refused(k.get("/api/v1/org"), 403, "org:read")


def test_admin_key_narrowed_to_an_org_creates_and_deletes_no_other(admin, world):
    k, _ = key_for(admin, admin, scopes=["org:write@%s" % world.org])
    other, _ = make_org(admin)
    refused(k.delete("/api/v1/org/%s?confirmation=yes" % other), 403, "does not reach", other)
    assert admin.get("/api/v1/org/%s" % other).status_code == 200
    refused(k.post("/api/v1/org", json={"name": unique("org")}), 403, "does not reach")
    r = k.post("/api/v1/org", json={"name": world.org, "meta": {"x": 1}})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text


def test_form_run_as_user_is_held_to_the_narrowing(admin, world):
    """A form's runAs lets its named user submit without other access to the process; a key of
    that user narrowed to another project still does not reach it."""
    flow = """
flows:
  default:
    - form: approval
      runAs:
        username: ["%s"]
      fields:
        - approved: {type: boolean}
""" % world.user.username
    pid = start_process(world.user, flow, parts={"org": world.org, "project": world.other})
    assert wait_process(world.user, pid, ("SUSPENDED", "FINISHED", "FAILED"))["status"] == "SUSPENDED"
    k, _ = key_for(admin, world.user, scopes=["process:*@%s/%s" % (world.org, world.proj)])
    refused(k.post("/api/v1/process/%s/form/approval" % pid, json={"approved": True}), 403, "does not reach")
    ok, _ = key_for(admin, world.user, scopes=["process:*@%s/%s" % (world.org, world.other)])
    r = ok.post("/api/v1/process/%s/form/approval" % pid, json={"approved": True})
    assert r.status_code == 200, r.text


def test_rate_limit(admin, world):
    k, body = key_for(admin, world.user, rateLimit="3/min")
    assert body["rateLimit"] == "3/min"
    for _ in range(3):
        assert k.get("/api/v1/org/%s/project" % world.org).status_code == 200
    r = k.get("/api/v1/org/%s/project" % world.org)
    refused(r, 429, "3/min")
    assert 1 <= int(r.headers["Retry-After"]) <= 60
    # other keys of the same user are not limited by it
    assert world.user.get("/api/v1/org/%s/project" % world.org).status_code == 200
    # a rate-limited key creates keys no looser than itself
    limited, _ = key_for(admin, world.user, rateLimit="100/s", scopes=["apikey:write"])
    refused(limited.post("/api/v1/apikey", json={"scopes": ["apikey:write"]}), 403, "rate limit")
    refused(limited.post("/api/v1/apikey", json={"scopes": ["apikey:write"], "rateLimit": "101/s"}), 403)
    assert limited.post("/api/v1/apikey", json={"scopes": ["apikey:write"], "rateLimit": "10/s"}).status_code == 200
