"""Secrets restricted to several projects (issue 29 item 6), as Concord's SecretIT
(testCreateSecretWithMultipleProjectIds/Names, testUpdateSecretWithMultipleProjectNames):
`projectIds` / `projects` / `projectNames` comma lists, the `projects` list of the secret's
JSON, and the restriction enforced wherever a project is checked."""
from conftest import ADMIN_KEY, Client, process_log, start_process, unique, wait_process
from db_util import PG, execute
from proc_util import make_org, make_project, make_team
from repo_util import REPO_API, error

API = "/api/v1/org/%s/secret"


def create(client, org, **parts):
    r = client.post(API % org, files={k: (None, v) for k, v in parts.items()})
    assert r.status_code == 200, r.text
    return r.json()


def projects_of(client, org, name):
    r = client.get("/api/v2/org/%s/secret/%s" % (org, name))
    assert r.status_code == 200, r.text
    return r.json()


def names(meta):
    return sorted(p["name"] for p in meta["projects"])


def test_create_with_several_project_ids_and_names(admin):
    org, _ = make_org(admin)
    p1, id1 = make_project(admin, org)
    p2, id2 = make_project(admin, org)
    s1 = unique("s")
    create(admin, org, name=s1, type="KEY_PAIR", projectIds="%s,%s" % (id1, id2))
    meta = projects_of(admin, org, s1)
    assert names(meta) == sorted([p1, p2])
    assert sorted(p["id"] for p in meta["projects"]) == sorted([id1, id2])
    assert "projectId" not in meta and "projectName" not in meta  # only for exactly one project
    s2 = unique("s")
    create(admin, org, name=s2, type="data", data="x", projects="%s, %s" % (p1, p2))
    assert names(projects_of(admin, org, s2)) == sorted([p1, p2])
    s3 = unique("s")
    create(admin, org, name=s3, type="data", data="x", projectNames="%s,%s,%s" % (p2, p1, p2))
    assert names(projects_of(admin, org, s3)) == sorted([p1, p2])
    listed = {x["name"]: x for x in admin.get(API % org).json()}
    assert names(listed[s1]) == sorted([p1, p2])
    # one unknown project refuses the whole secret
    s4 = unique("s")
    r = admin.post(API % org, files={"name": (None, s4), "type": (None, "data"), "data": (None, "x"),
                                     "projects": (None, "%s,nope-%s" % (p1, s4))})
    assert r.status_code == 400 and "Project not found: nope-" in r.json()["message"]
    assert admin.get(API % org + "/" + s4).status_code == 404


def test_update_replaces_and_removes_the_projects(admin):
    org, _ = make_org(admin)
    p1, id1 = make_project(admin, org)
    p2, id2 = make_project(admin, org)
    p3, _ = make_project(admin, org)
    s = unique("s")
    create(admin, org, name=s, type="data", data="x", visibility="PRIVATE")
    assert projects_of(admin, org, s)["projects"] == []
    # v2 multipart, as Concord's SecretClient.updateSecret sends newProjectIds
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, s), files={"projectIds": (None, "%s,%s" % (id1, id2)),
                                                                  "visibility": (None, "PRIVATE")})
    assert r.status_code == 200, r.text
    assert names(projects_of(admin, org, s)) == sorted([p1, p2])
    # an update naming no project keeps them
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, s), files={"visibility": (None, "PRIVATE")})
    assert r.status_code == 200, r.text
    assert names(projects_of(admin, org, s)) == sorted([p1, p2])
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, s), files={"projectNames": (None, p3)})
    assert r.status_code == 200, r.text
    meta = projects_of(admin, org, s)
    assert names(meta) == [p3] and meta["projectName"] == p3
    # v1 JSON: lists, and projectName "" removes the restriction
    r = admin.post(API % org + "/" + s, json={"projectNames": [p1, p3]})
    assert r.status_code == 200, r.text
    assert names(projects_of(admin, org, s)) == sorted([p1, p3])
    r = admin.post(API % org + "/" + s, json={"projectName": ""})
    assert r.status_code == 200, r.text
    assert projects_of(admin, org, s)["projects"] == []
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, s), files={"projects": (None, "%s,%s" % (p1, p2))})
    assert r.status_code == 200, r.text
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, s), files={"removeProjectLink": (None, "true")})
    assert r.status_code == 200, r.text
    assert projects_of(admin, org, s)["projects"] == []
    # a project of another org is not found, and nothing changes
    org2, _ = make_org(admin)
    _, foreign = make_project(admin, org2)
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, s), files={"projectIds": (None, "%s,%s" % (id1, foreign))})
    assert r.status_code == 400 and "Project not found" in r.json()["message"]
    assert projects_of(admin, org, s)["projects"] == []


def test_processes_of_any_of_the_projects_use_it(admin):
    org, _ = make_org(admin)
    pa, ida = make_project(admin, org, rawPayloadMode="EVERYONE")
    pb, idb = make_project(admin, org, rawPayloadMode="EVERYONE")
    pc, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    s = unique("s")
    create(admin, org, name=s, type="data", data="for-a-and-b", projectIds="%s,%s" % (ida, idb))
    flow = """
flows:
  default:
    - log: "got: ${crypto.exportAsString('%s', '%s', null).length()}"
""" % (org, s)
    for project in (pa, pb):
        pid = start_process(admin, flow, parts={"org": org, "project": project})
        assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
        assert "got: 11" in process_log(admin, pid)
    pid = start_process(admin, flow, parts={"org": org, "project": pc})
    assert wait_process(admin, pid)["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "Secret '%s' is restricted to projects " % s in log and pa in log and pb in log
    assert "process of project '%s'" % pc in log
    assert "for-a-and-b" not in log


def test_export_and_repositories_follow_the_projects(admin, new_user):
    org, _ = make_org(admin)
    pa, ida = make_project(admin, org)
    pb, idb = make_project(admin, org)
    pc, _ = make_project(admin, org)
    s = unique("s")
    create(admin, org, name=s, type="username_password", username="u", password="p",
           projectIds="%s,%s" % (ida, idb))
    # a user exports a project-scoped secret only from a process (Concord's assertProjectScope)
    user = new_user()
    make_team(admin, org, [(user, "MEMBER")])  # a member: READER on the PUBLIC secret
    r = user.post(API % org + "/" + s + "/data")
    assert r.status_code == 403 and "Project-scoped secrets" in r.json()["message"]
    https = "https://127.0.0.1:9/x.git"
    error(admin.post(REPO_API % (org, pc), json={"name": "repo1", "url": https, "secretName": s}), 400,
          "restricted to projects '%s', '%s'" % tuple(sorted([pa, pb])))
    for project in (pa, pb):
        r = admin.post(REPO_API % (org, project), json={"name": "repo1", "url": https, "secretName": s})
        assert "restricted" not in r.text, r.text


def test_migration_moves_the_single_project(fresh_server):
    """A secret restricted to one project before 019 keeps it in the new table."""
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    p, pid = make_project(admin, org)
    s = unique("s")
    create(admin, org, name=s, type="data", data="x")
    srv.stop()
    back = ["DELETE FROM schema_migrations WHERE number = 19", "DROP TABLE secret_projects"]
    if PG:
        back.append("ALTER TABLE secrets ADD COLUMN project_id TEXT REFERENCES projects (id) ON DELETE SET NULL")
    back += ["CREATE INDEX secrets_project ON secrets (project_id)",
             "UPDATE secrets SET project_id = '%s' WHERE name = '%s'" % (pid, s)]
    execute(srv.data_dir, ";\n".join(back))
    srv = fresh_server(data_dir=srv.data_dir).start()
    meta = projects_of(Client(srv.url, ADMIN_KEY), org, s)
    assert meta["projects"] == [{"id": pid, "name": p}] and meta["projectId"] == pid
