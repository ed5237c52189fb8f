"""GET /api/v2/process and /api/v2/process/count (issue 8 item 6): order, paging, every
filter, the meta operations, and the rules (meta filters need a project, projectName needs an
org; a count without a project counts what the list shows)."""
import datetime
import json
import time

import pytest

from conftest import Client, start_process, unique, wait_process
from proc_util import HELLO, make_org, make_project, make_team

FAIL = "flows:\n  default:\n    - throw: \"boom\"\n"


def ids(r):
    assert r.status_code == 200, r.text
    return [p["instanceId"] for p in r.json()]


class Data:
    """Org A with projects p1, p2; org B with p3; processes n1..n7 in creation order."""


@pytest.fixture(scope="module")
def d(server):
    from conftest import ADMIN_KEY
    admin = Client(server.url, ADMIN_KEY, "admin", None, ADMIN_KEY)
    x = Data()
    x.admin = admin
    x.org_a, x.org_a_id = make_org(admin)
    x.org_b, x.org_b_id = make_org(admin)
    x.p1, x.p1_id = make_project(admin, x.org_a, rawPayloadMode="EVERYONE")
    x.p2, x.p2_id = make_project(admin, x.org_a, rawPayloadMode="EVERYONE")
    x.p3, x.p3_id = make_project(admin, x.org_b, rawPayloadMode="EVERYONE")
    name = unique("lister")
    assert admin.post("/api/v1/user", json={"username": name}).status_code == 200
    key = admin.post("/api/v1/apikey", json={"username": name}).json()["key"]
    x.user = Client(server.url, key, name, None, key)
    make_team(admin, x.org_a, [(x.user, "MEMBER")], x.p1, "WRITER")

    def go(client, flow, project, tags=None, meta=None):
        parts = {"projectId": project}
        if tags:
            parts["tags"] = tags
        files = {"meta": (json.dumps(meta).encode(), "application/json")} if meta is not None else None
        pid = start_process(client, flow, parts=parts, files=files)
        time.sleep(0.01)  # distinct createdAt milliseconds
        return pid

    x.n1 = go(admin, HELLO, x.p1_id, "a,b", {"env": "prod-eu"})
    x.n2 = go(admin, HELLO, x.p1_id, "a", {"env": "dev-eu"})
    x.n3 = go(x.user, HELLO, x.p1_id, "b", {"env": "prod-us"})
    x.n4 = go(admin, HELLO, x.p2_id, None, {"env": "prod-eu"})
    x.n5 = go(admin, FAIL, x.p1_id, None, {"env": "qa"})
    x.n6 = go(admin, HELLO, x.p3_id)
    x.n7 = go(admin, HELLO, x.p1_id, None, {"other": "x"})  # no env key
    x.all = [x.n1, x.n2, x.n3, x.n4, x.n5, x.n6, x.n7]
    x.recs = {pid: wait_process(admin, pid) for pid in x.all}
    assert x.recs[x.n5]["status"] == "FAILED"
    return x


def lst(d, **params):
    return ids(d.admin.get("/api/v2/process", params=params))


def test_newest_first_and_project_filter(d):
    assert lst(d, projectId=d.p1_id) == [d.n7, d.n5, d.n3, d.n2, d.n1]
    assert lst(d, orgName=d.org_a, projectName=d.p2) == [d.n4]
    created = [p["createdAt"] for p in d.admin.get("/api/v2/process", params={"projectId": d.p1_id}).json()]
    assert created == sorted(created, reverse=True)
    # without filters: the newest processes of the server, ours among them
    assert lst(d, limit=1000)[:1] != []


def test_org_filters(d):
    assert lst(d, orgName=d.org_a) == [d.n7, d.n5, d.n4, d.n3, d.n2, d.n1]
    assert lst(d, orgId=d.org_a_id) == lst(d, orgName=d.org_a)
    assert lst(d, orgId=d.org_b_id) == [d.n6]
    for params in ({"orgName": unique("no-such-org")}, {"orgId": "not-a-uuid"}):
        r = d.admin.get("/api/v2/process", params=params)
        assert r.status_code == 400 and r.json()["ok"] is False, params


def test_project_name_needs_org(d):
    r = d.admin.get("/api/v2/process", params={"projectName": d.p1})
    assert r.status_code == 400 and r.json()["ok"] is False
    r = d.admin.get("/api/v2/process/count", params={"projectName": d.p1})
    assert r.status_code == 400  # a count needs no project (the console's total), but a name needs its org
    r = d.admin.get("/api/v2/process", params={"orgName": d.org_a, "projectName": unique("nope")})
    assert r.status_code in (400, 404)


def test_limit_offset(d):
    full = lst(d, orgName=d.org_a)
    assert lst(d, orgName=d.org_a, limit=2) == full[:2]
    assert lst(d, orgName=d.org_a, limit=2, offset=2) == full[2:4]
    assert lst(d, orgName=d.org_a, offset=5) == full[5:]
    assert lst(d, orgName=d.org_a, offset=100) == []
    for bad in ({"limit": 0}, {"limit": -1}, {"limit": "x"}, {"limit": 1001}, {"offset": -1}, {"offset": "y"}):
        r = d.admin.get("/api/v2/process", params=dict(orgName=d.org_a, **bad))
        assert r.status_code == 400, (bad, r.text)


def test_default_limit_is_30(admin):
    org, _ = make_org(admin)
    proj, proj_id = make_project(admin, org, rawPayloadMode="EVERYONE")
    at = (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    made = [start_process(admin, HELLO, parts={"projectId": proj_id, "startAt": at}) for _ in range(32)]
    try:
        r = admin.get("/api/v2/process", params={"projectId": proj_id})
        assert len(ids(r)) == 30
        assert set(ids(r)) == set(made[2:])
        assert len(ids(admin.get("/api/v2/process", params={"projectId": proj_id, "limit": 100}))) == 32
        assert admin.get("/api/v2/process/count", params={"projectId": proj_id}).json() == 32
    finally:
        for pid in made:
            admin.delete("/api/v1/process/%s" % pid)


def test_created_at_filters(d):
    c2 = d.recs[d.n2]["createdAt"]
    after = lst(d, projectId=d.p1_id, afterCreatedAt=c2)
    assert d.n3 in after and d.n7 in after and d.n1 not in after and d.n2 not in after
    before = lst(d, projectId=d.p1_id, beforeCreatedAt=c2)
    assert before == [d.n1]
    both = lst(d, projectId=d.p1_id, afterCreatedAt=d.recs[d.n1]["createdAt"], beforeCreatedAt=d.recs[d.n5]["createdAt"])
    assert both == [d.n3, d.n2]
    # with an offset instead of Z
    c2_plus = c2.replace("Z", "+00:00")
    assert lst(d, projectId=d.p1_id, afterCreatedAt=c2_plus) == after
    r = d.admin.get("/api/v2/process", params={"afterCreatedAt": "yesterday"})
    assert r.status_code == 400


def test_tags_all_must_match(d):
    assert lst(d, projectId=d.p1_id, tags="a") == [d.n2, d.n1]
    assert lst(d, projectId=d.p1_id, tags="b") == [d.n3, d.n1]
    assert lst(d, projectId=d.p1_id, tags=["a", "b"]) == [d.n1]
    assert lst(d, projectId=d.p1_id, tags=["a", "zzz"]) == []



def cnt(d, **params):
    r = d.admin.get("/api/v2/process/count", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def test_combined_filters(d):
    """The store walks the tag index, the meta index or processes depending on the filters
    (store/process_list.c): every combination gives the same answer."""
    p1 = {"projectId": d.p1_id}
    cases = [
        ({"tags": "a", "status": "FINISHED"}, ["n2", "n1"]),
        ({"tags": "b", "status": "FAILED"}, []),
        ({"tags": "b", "initiator": "adm"}, ["n1"]),
        ({"tags": ["b", "a"], "initiator": "adm", "status": "FINISHED"}, ["n1"]),
        ({"tags": "a", "meta.env.eq": "dev-eu"}, ["n2"]),
        ({"tags": "b", "meta.env.notContains": "eu"}, ["n3"]),
        ({"tags": "a", "afterCreatedAt": d.recs[d.n1]["createdAt"]}, ["n2"]),
        ({"meta.env.eq": "prod-eu", "meta.env.startsWith": "prod"}, ["n1"]),
        ({"meta.env.eq": "prod-eu", "initiator": d.user.username}, []),
        ({"meta.env.notEq": "prod-eu", "status": "FAILED"}, ["n5"]),
        ({"meta.env.notEq": "prod-eu", "beforeCreatedAt": d.recs[d.n3]["createdAt"]}, ["n2"]),
        ({"meta.entryPoint.eq": "default"}, ["n7", "n5", "n3", "n2", "n1"]),
        ({"initiator": "adm"}, ["n7", "n5", "n2", "n1"]),
        ({"initiator": d.user.username}, ["n3"]),
        ({"initiator": d.user.username[:-1]}, ["n3"]),
        ({"initiator": "admin\x7f"}, []),
        ({"initiator": "dmin"}, []),
    ]
    for params, expected in cases:
        want = [getattr(d, n) for n in expected]
        assert lst(d, **p1, **params) == want, params
        assert cnt(d, **p1, **params) == len(want), params
    assert lst(d, orgName=d.org_a, tags="a") == [d.n2, d.n1]
    assert lst(d, orgName=d.org_a, tags="a", limit=1, offset=1) == [d.n1]
    assert ids(d.user.get("/api/v2/process", params={"tags": "b"})) == [d.n3, d.n1]
    assert ids(d.user.get("/api/v2/process", params={"tags": "a", "initiator": d.user.username})) == []

def test_status_filter(d):
    assert lst(d, orgName=d.org_a, status="FAILED") == [d.n5]
    assert lst(d, orgName=d.org_a, status="FINISHED") == [d.n7, d.n4, d.n3, d.n2, d.n1]
    r = d.admin.get("/api/v2/process", params={"status": "BOGUS"})
    assert r.status_code == 400


def test_initiator_prefix(d):
    assert lst(d, orgName=d.org_a, initiator=d.user.username) == [d.n3]
    assert lst(d, orgName=d.org_a, initiator=d.user.username[:8]) == [d.n3]
    assert lst(d, orgName=d.org_a, initiator="adm") == [d.n7, d.n5, d.n4, d.n2, d.n1]
    assert lst(d, orgName=d.org_a, initiator="dmin") == []


def test_entry_point_filter(d):
    admin = d.admin
    flow = "flows:\n  default:\n    - log: a\n  other:\n    - log: b\n"
    other = start_process(admin, flow, parts={"projectId": d.p2_id, "entryPoint": "other", "tags": "ep"})
    wait_process(admin, other)
    assert lst(d, orgName=d.org_a, entryPoint="other") == [other]
    default = lst(d, projectId=d.p2_id, entryPoint="default")
    assert d.n4 in default and other not in default
    assert lst(d, tags="ep", entryPoint="other") == [other]  # the tag walk joins the process for it
    assert lst(d, orgName=d.org_a, entryPoint="nowhere") == []


def test_min_runtime_filter(d):
    admin = d.admin
    slow = start_process(admin, "flows:\n  default:\n    - task: sleep\n      in: {duration: 1}\n",
                         parts={"projectId": d.p2_id})
    assert wait_process(admin, slow)["totalRuntimeMs"] >= 1000
    assert lst(d, projectId=d.p2_id, minRuntimeMs=1000) == [slow]
    assert d.n4 in lst(d, projectId=d.p2_id, minRuntimeMs=0)
    for bad in ("-1", "soon", "1e3"):
        r = admin.get("/api/v2/process", params={"minRuntimeMs": bad})
        assert r.status_code == 400 and "minRuntimeMs" in r.json()["message"], (bad, r.text)


def test_parent_filter(d):
    admin = d.admin
    kid = start_process(admin, HELLO, parts={"parentInstanceId": d.n6, "projectId": d.p3_id})
    wait_process(admin, kid)
    assert lst(d, parentInstanceId=d.n6) == [kid]
    assert lst(d, parentInstanceId=d.n1) == []
    assert d.admin.get("/api/v2/process", params={"parentInstanceId": "zz"}).status_code == 400


META = [
    ("meta.env", "eu", ["n2", "n1"]),  # default: contains
    ("meta.env.contains", "prod", ["n3", "n1"]),
    ("meta.env.notContains", "eu", ["n5", "n3"]),
    ("meta.env.eq", "prod-eu", ["n1"]),
    ("meta.env.notEq", "prod-eu", ["n5", "n3", "n2"]),
    ("meta.env.startsWith", "prod", ["n3", "n1"]),
    ("meta.env.notStartsWith", "prod", ["n5", "n2"]),
    ("meta.env.endsWith", "eu", ["n2", "n1"]),
    ("meta.env.notEndsWith", "eu", ["n5", "n3"]),
    ("meta.other.eq", "x", ["n7"]),
]


@pytest.mark.parametrize("key,value,expected", META)
def test_meta_filters(d, key, value, expected):
    want = [getattr(d, n) for n in expected]
    assert lst(d, projectId=d.p1_id, **{key: value}) == want
    r = d.admin.get("/api/v2/process/count", params={"projectId": d.p1_id, key: value})
    assert r.status_code == 200 and r.json() == len(want)


def test_meta_filters_combine(d):
    assert lst(d, projectId=d.p1_id, **{"meta.env.startsWith": "prod", "meta.env.endsWith": "eu"}) == [d.n1]


def test_meta_filter_needs_project(d):
    for params in ({"meta.env": "eu"}, {"orgName": d.org_a, "meta.env.eq": "qa"}):
        r = d.admin.get("/api/v2/process", params=params)
        assert r.status_code == 400 and "project" in r.json()["message"].lower(), r.text


def test_count(d):
    r = d.admin.get("/api/v2/process/count", params={"projectId": d.p1_id})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/json")
    assert r.text.strip() == "5" and r.json() == 5
    assert d.admin.get("/api/v2/process/count", params={"orgName": d.org_a, "projectName": d.p1}).json() == 5
    assert d.admin.get("/api/v2/process/count", params={"projectId": d.p1_id, "status": "FAILED"}).json() == 1
    assert d.admin.get("/api/v2/process/count", params={"projectId": d.p1_id, "tags": ["a", "b"]}).json() == 1
    # limit/offset do not apply to count
    assert d.admin.get("/api/v2/process/count", params={"projectId": d.p1_id, "limit": 1}).json() == 5
    # without a project (Concord: 400) the count is that of the list with the same filters
    for params in ({"orgName": d.org_a}, {"orgName": d.org_a, "status": "FINISHED"}):
        r = d.admin.get("/api/v2/process/count", params=params)
        assert r.status_code == 200 and r.json() == len(lst(d, limit=1000, **params)), params


def test_list_includes(d):
    r = d.admin.get("/api/v2/process", params={"projectId": d.p1_id, "include": "history", "limit": 1})
    assert r.status_code == 200
    assert [h["status"] for h in r.json()[0]["statusHistory"]][-1] == "FINISHED"
    r = d.admin.get("/api/v2/process", params={"projectId": d.p1_id, "include": "nope"})
    assert r.status_code == 400
    p = d.admin.get("/api/v2/process", params={"projectId": d.p1_id, "limit": 5}).json()[-1]
    assert p["instanceId"] == d.n1 and p["tags"] == ["a", "b"] and p["meta"]["env"] == "prod-eu"
    assert "statusHistory" not in p


def test_tag_and_status_follow_the_process(admin):
    """A tag filter with a status reads the status copied into the tag rows (schema 010):
    it follows every status change."""
    org, _ = make_org(admin)
    proj, proj_id = make_project(admin, org, rawPayloadMode="EVERYONE")
    flow = "flows:\n  default:\n    - suspend: go\n"
    pid = start_process(admin, flow, parts={"org": org, "project": proj, "tags": "waiting,x"})
    wait_process(admin, pid, ("SUSPENDED",))

    def count(status):
        r = admin.get("/api/v2/process/count", params={"projectId": proj_id, "tags": "waiting", "status": status})
        assert r.status_code == 200, r.text
        return r.json()

    def listed(status):
        r = admin.get("/api/v2/process", params={"projectId": proj_id, "tags": ["x", "waiting"], "status": status})
        return [p["instanceId"] for p in r.json()]

    assert count("SUSPENDED") == 1 and listed("SUSPENDED") == [pid]
    assert count("FINISHED") == 0 and listed("FINISHED") == []
    assert admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code == 200
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert count("SUSPENDED") == 0 and listed("SUSPENDED") == []
    assert count("FINISHED") == 1 and listed("FINISHED") == [pid]
