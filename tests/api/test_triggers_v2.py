"""Concord's trigger API beyond one repository (issue 26 part 3; docs/api.md "Triggers and
events"): GET /api/v2/trigger with its filters (only projects the caller may read),
POST …/repository/{repo}/trigger re-reading one repository (WRITER), and the admins'
refresh of every repository (POST /api/v1/org/trigger/refresh, /api/v2/trigger/refresh)."""
from proc_util import make_team
from test_triggers import Project, repos  # noqa: F401 (fixture)

CRON = """
flows:
  default:
    - log: "x"
triggers:
  - cron:
      spec: "0 3 * * *"
      entryPoint: default
  - deploy:
      entryPoint: default
      conditions: {v: "1"}
"""


def test_v2_list_filters_and_access(admin, new_user, repos):
    p = Project(admin)
    name = p.add_repo(repos({"concord.yml": CRON}))
    mine = admin.get("/api/v2/trigger", params={"orgName": p.org, "projectName": p.name})
    assert mine.status_code == 200, mine.text
    assert sorted(t["eventSource"] for t in mine.json()) == ["cron", "deploy"]
    assert all(t["repositoryName"] == name and t["projectName"] == p.name for t in mine.json())
    cron = admin.get("/api/v2/trigger", params={"orgName": p.org, "type": "cron"}).json()
    assert [t["eventSource"] for t in cron] == ["cron"]
    by_repo = admin.get("/api/v2/trigger", params={"orgName": p.org, "projectName": p.name, "repoName": name})
    assert len(by_repo.json()) == 2
    # an outsider sees none of them; bad filters are 400 with Concord's messages
    outsider = new_user()
    r = outsider.get("/api/v2/trigger", params={"type": "cron"})
    assert r.status_code == 200 and all(t["projectId"] != p.id for t in r.json()), r.text
    assert admin.get("/api/v2/trigger", params={"orgName": "no-such-org-x"}).json()["message"] == \
        "Organization not found: no-such-org-x"
    r = admin.get("/api/v2/trigger", params={"projectName": p.name})
    assert r.status_code == 400 and r.json()["message"] == "Organization ID or name is required"
    r = admin.get("/api/v2/trigger", params={"orgName": p.org, "projectName": "nope-x"})
    assert r.status_code == 400 and r.json()["message"] == "Project not found: nope-x"
    r = admin.get("/api/v2/trigger", params={"type": ""})
    assert r.status_code == 400 and "Invalid type value" in r.json()["message"]


def test_refresh_one_and_all(admin, new_user, repos):
    p = Project(admin)
    repo = repos({"concord.yml": CRON})
    name = p.add_repo(repo)
    repo.commit({"concord.yml": CRON.replace('conditions: {v: "1"}', 'conditions: {v: "2"}')})
    # a reader may not refresh; a writer (here admin) may
    reader = new_user()
    make_team(admin, p.org, [(reader, "MEMBER")], project=p.name, level="READER")
    r = reader.post(p.path("/%s/trigger" % name))
    assert r.status_code == 403, r.text
    r = admin.post(p.path("/%s/trigger" % name))
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    deploy = [t for t in p.triggers(name) if t["eventSource"] == "deploy"][0]
    assert deploy["conditions"] == {"v": "2"}
    # every repository, admins only
    repo.commit({"concord.yml": CRON.replace('conditions: {v: "1"}', 'conditions: {v: "3"}')})
    assert reader.post("/api/v2/trigger/refresh").status_code == 403
    r = admin.post("/api/v1/org/trigger/refresh")
    assert r.status_code == 200 and r.json()["refreshed"] >= 1, r.text
    deploy = [t for t in p.triggers(name) if t["eventSource"] == "deploy"][0]
    assert deploy["conditions"] == {"v": "3"}
    assert admin.post("/api/v2/trigger/refresh").status_code == 200
