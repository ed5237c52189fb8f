"""Repositories of a project (issue 13 part 1): create/update/list/get/delete, refresh,
validate, the project record's repositories map, validation, secrets and access rules.
Local git repositories are made by the tests with the git CLI."""
import os

import pytest

from conftest import unique
from proc_util import make_org, make_project, make_team
from repo_util import REPO_API, create_repo, error, flow, git, proj  # noqa: F401 (fixtures)

TRIGGERS = """
flows:
  default:
    - log: "hi"
triggers:
  - manual:
      name: "run it"
      entryPoint: default
"""

BAD_TRIGGERS = """
flows:
  default:
    - log: "hi"
triggers:
  - cron:
      spec: "not a cron spec"
      entryPoint: default
"""


def secret(client, org, type_, **parts):
    name = unique("sec")
    files = {"name": (None, name), "type": (None, type_)}
    for k, v in parts.items():
        files[k] = (None, v)
    r = client.post("/api/v1/org/%s/secret" % org, files=files)
    assert r.status_code == 200, r.text
    return name, r.json()["id"]


def test_create_list_get_update_delete(admin, proj, git, server):
    org, project, pid = proj
    repo = git()
    name, body = create_repo(admin, org, project, repo.url, branch="main", meta={"team": "a"})
    assert body["result"] == "CREATED" and len(body["id"]) == 36
    rid = body["id"]

    r = admin.get(REPO_API % (org, project))
    assert r.status_code == 200, r.text
    (entry,) = r.json()
    assert entry == {"id": rid, "projectId": pid, "name": name, "url": repo.url, "branch": "main",
                     "disabled": False, "triggersDisabled": False, "meta": {"team": "a"}}
    r = admin.get(REPO_API % (org, project) + "/" + name)
    assert r.status_code == 200 and r.json() == entry

    # the project record carries the map (get and list)
    r = admin.get("/api/v1/org/%s/project/%s" % (org, project))
    assert r.json()["repositories"] == {name: entry}
    r = admin.get("/api/v1/org/%s/project" % org)
    assert [p["repositories"] for p in r.json()] == [{name: entry}]

    # update by id: rename, pin a commit, a sub-folder, disable
    sha = repo.head()
    repo.commit({"sub/concord.yml": flow("sub")})
    r = admin.post(REPO_API % (org, project), json={"id": rid, "name": name + "-2", "url": repo.url,
                                                    "commitId": sha, "path": "/", "disabled": True})
    assert r.status_code == 200, r.text
    assert r.json()["result"] == "UPDATED" and r.json()["id"] == rid
    entry = admin.get(REPO_API % (org, project) + "/" + name + "-2").json()
    assert entry["commitId"] == sha and "branch" not in entry and "path" not in entry
    assert entry["disabled"] is True and entry["meta"] == {"team": "a"}
    error(admin.get(REPO_API % (org, project) + "/" + name), 404, "Repository not found")

    # without id, an existing name updates it
    r = admin.post(REPO_API % (org, project), json={"name": name + "-2", "url": repo.url, "path": "sub"})
    assert r.status_code == 200 and r.json()["result"] == "UPDATED" and r.json()["id"] == rid
    assert admin.get(REPO_API % (org, project) + "/" + name + "-2").json()["path"] == "sub"

    assert os.path.isdir(os.path.join(server.data_dir, "repos", rid))
    r = admin.delete(REPO_API % (org, project) + "/" + name + "-2")
    assert r.status_code == 200 and r.json()["result"] == "DELETED"
    assert admin.get(REPO_API % (org, project)).json() == []
    assert "repositories" not in admin.get("/api/v1/org/%s/project/%s" % (org, project)).json()
    assert not os.path.exists(os.path.join(server.data_dir, "repos", rid))
    error(admin.delete(REPO_API % (org, project) + "/" + name + "-2"), 404, "Repository not found")


def test_list_paging_and_filter(admin, proj, git):
    org, project, _ = proj
    repo = git()
    for n in ("alpha", "beta", "gamma"):
        create_repo(admin, org, project, repo.url, name=n)
    names = lambda **q: [e["name"] for e in admin.get(REPO_API % (org, project), params=q).json()]
    assert names() == ["alpha", "beta", "gamma"]
    assert names(limit=1, offset=1) == ["beta"]
    assert names(filter="MM") == ["gamma"]


def test_rename_onto_taken_name_is_conflict(admin, proj, git):
    org, project, _ = proj
    repo = git()
    create_repo(admin, org, project, repo.url, name="one")
    _, body = create_repo(admin, org, project, repo.url, name="two")
    r = admin.post(REPO_API % (org, project), json={"id": body["id"], "name": "one", "url": repo.url})
    error(r, 409, "Repository already exists: one")


@pytest.mark.parametrize("fields, status, fragment", [
    ({"url": ""}, 400, "'url' is required"),
    ({"url": "ftp://example.com/x.git"}, 400, "'url' must be"),
    ({"url": "ext::sh -c touch% /tmp/pwned"}, 400, "'url' must be"),
    ({"url": "relative/path"}, 400, "'url' must be"),
    ({"url": "file://host/x"}, 400, "file:///path"),
    ({"name": "x"}, 400, "Invalid repository name"),
    ({"name": "bad name!"}, 400, "Invalid repository name"),
    ({"branch": "main", "commitId": "a" * 40}, 400, "exclude each other"),
    ({"commitId": "abc"}, 400, "40 hex digits"),
    ({"branch": "--upload-pack=x"}, 400, "not a valid branch"),
    ({"path": "../etc"}, 400, "'path' must be a relative path"),
    ({"path": "/etc"}, 400, "'path' must be a relative path"),
    ({"secretName": "no-such-secret"}, 400, "Secret not found"),
    ({"secretId": "not-a-uuid"}, 400, "must be a UUID"),
    ({"disabled": "yes"}, 400, "'disabled' must be true or false"),
    ({"meta": "text"}, 400, "meta"),
])
def test_invalid_bodies(admin, proj, git, fields, status, fragment):
    org, project, _ = proj
    body = {"name": unique("repo"), "url": git().url}
    body.update(fields)
    error(admin.post(REPO_API % (org, project), json=body), status, fragment)
    assert admin.get(REPO_API % (org, project)).json() == []


def test_local_paths_inside_the_data_folder_are_refused(admin, proj, server):
    org, project, _ = proj
    for url in (server.data_dir, "file://" + server.data_dir + "/repos", server.data_dir + "/../" +
                os.path.basename(server.data_dir)):
        error(admin.post(REPO_API % (org, project), json={"name": unique("r"), "url": url}), 400,
              "inside the server's data folder")


def test_git_errors_store_nothing(admin, proj, git):
    org, project, _ = proj
    repo = git()
    msg = error(admin.post(REPO_API % (org, project), json={"name": "rep1", "url": repo.url, "branch": "nope"}), 400,
                "nope")
    error(admin.post(REPO_API % (org, project), json={"name": "rep2", "url": "/no/such/repository"}), 400, "")
    error(admin.post(REPO_API % (org, project), json={"name": "rep3", "url": repo.url, "commitId": "b" * 40}), 400, "")
    assert admin.get(REPO_API % (org, project)).json() == []
    assert "nope" in msg


def test_bad_definition_is_refused_and_update_keeps_the_old_one(admin, proj, git):
    org, project, _ = proj
    repo = git({"concord.yml": "flows:\n  default:\n    - log: [unclosed\n"})
    error(admin.post(REPO_API % (org, project), json={"name": "rep", "url": repo.url}), 400, "concord.yml")
    good = git()
    name, body = create_repo(admin, org, project, good.url)
    r = admin.post(REPO_API % (org, project), json={"id": body["id"], "name": name, "url": repo.url})
    error(r, 400, "concord.yml")
    assert admin.get(REPO_API % (org, project) + "/" + name).json()["url"] == good.url


def test_create_with_bad_triggers_stores_nothing(admin, proj, git):
    org, project, _ = proj
    repo = git({"concord.yml": BAD_TRIGGERS})
    msg = error(admin.post(REPO_API % (org, project), json={"name": "trig", "url": repo.url}), 400, "concord.yml:7:")
    assert "cron" in msg
    assert admin.get(REPO_API % (org, project)).json() == []
    # the triggers of a good definition are there right after the create
    good = git({"concord.yml": TRIGGERS})
    name, _ = create_repo(admin, org, project, good.url)
    (t,) = admin.get(REPO_API % (org, project) + "/" + name + "/trigger").json()
    assert t["eventSource"] == "manual" and t["repositoryName"] == name


def test_repository_without_definition_is_accepted(admin, proj, git):
    org, project, _ = proj
    repo = git({"README.md": "no flows here\n"})
    create_repo(admin, org, project, repo.url)


def test_refresh_and_bad_triggers_keep_previous(admin, proj, git):
    org, project, _ = proj
    repo = git({"concord.yml": TRIGGERS})
    name, _ = create_repo(admin, org, project, repo.url)
    path = REPO_API % (org, project) + "/" + name
    r = admin.post(path + "/refresh")
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}, r.text
    trig = admin.get(path + "/trigger")
    repo.commit({"concord.yml": BAD_TRIGGERS}, "break the triggers")
    msg = error(admin.post(path + "/refresh"), 400, "concord.yml:")
    assert "triggers" in msg.lower()
    if trig.status_code == 200:  # the triggers list (issue 13 part 3) shows the old ones
        assert admin.get(path + "/trigger").json() == trig.json()
    repo.commit({"concord.yml": "flows:\n  default:\n  - log: [x\n"}, "break the yaml")
    error(admin.post(path + "/refresh"), 400, "concord.yml")
    error(admin.post(REPO_API % (org, project) + "/nope/refresh"), 404, "Repository not found: nope")


def test_validate_endpoints(admin, proj, git):
    org, project, pid = proj
    repo = git()
    name, _ = create_repo(admin, org, project, repo.url)
    r = admin.post(REPO_API % (org, project) + "/" + name + "/validate")
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True and r.json()["result"] == "VALIDATED"

    # a stored one by name, or one not stored yet
    r = admin.post("/api/v1/repository/validate", json={"org": org, "project": project, "name": name})
    assert r.status_code == 200 and r.json()["result"] == "VALIDATED", r.text
    r = admin.post("/api/v1/repository/validate", json={"projectId": pid, "url": repo.url, "branch": "main"})
    assert r.status_code == 200 and r.json()["result"] == "VALIDATED", r.text
    bad = git({"concord.yml": "flows: [\n"})
    error(admin.post("/api/v1/repository/validate", json={"projectId": pid, "url": bad.url}), 400, "concord.yml")
    error(admin.post("/api/v1/repository/validate", json={"projectId": pid, "url": repo.url, "branch": "x"}), 400, "x")
    error(admin.post("/api/v1/repository/validate", json={"url": repo.url}), 400, "required")
    # validate stores nothing
    assert [e["name"] for e in admin.get(REPO_API % (org, project)).json()] == [name]
    # a `triggers:` section that a refresh would refuse is refused by validate too
    cron = git({"concord.yml": "flows:\n  default:\n    - log: hi\ntriggers:\n  - cron:\n"
                               "      spec: \"61 * * * *\"\n      entryPoint: default\n"})
    error(admin.post("/api/v1/repository/validate", json={"projectId": pid, "url": cron.url}), 400, "minute")
    cname, _ = create_repo(admin, org, project, repo.url)
    stored = admin.get(REPO_API % (org, project) + "/" + cname).json()
    r = admin.post(REPO_API % (org, project), json={"id": stored["id"], "name": cname, "url": cron.url})
    assert r.status_code == 400, r.text  # a refresh refuses it (and keeps the old URL)
    error(admin.post("/api/v1/repository/validate", json={"projectId": pid, "url": cron.url, "branch": "main"}),
          400, "triggers: concord.yml:6:13:")


def test_access_reader_writer_outsider(admin, new_user, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, visibility="PRIVATE")
    reader, writer, outsider = new_user(), new_user(), new_user()
    make_team(admin, org, [(reader, "MEMBER")], project, "READER")
    make_team(admin, org, [(writer, "MEMBER")], project, "WRITER")
    repo = git()
    name, body = create_repo(writer, org, project, repo.url)
    path = REPO_API % (org, project)

    assert [e["name"] for e in reader.get(path).json()] == [name]
    assert reader.get(path + "/" + name).status_code == 200
    assert reader.post(path + "/" + name + "/validate").status_code == 200
    error(reader.post(path, json={"name": unique("r"), "url": repo.url}), 403, "")
    error(reader.post(path, json={"id": body["id"], "name": name, "url": repo.url, "disabled": True}), 403, "")
    error(reader.delete(path + "/" + name), 403, "")
    for r in (outsider.get(path), outsider.get(path + "/" + name), outsider.delete(path + "/" + name),
              outsider.post(path + "/" + name + "/refresh")):
        assert r.status_code in (403, 404), r.text
    error(outsider.post("/api/v1/repository/validate", json={"org": org, "project": project, "name": name}), 403, "")
    r = writer.delete(path + "/" + name)
    assert r.status_code == 200, r.text


def test_secret_rules(admin, new_user, git):
    org, _ = make_org(admin)
    project, pid = make_project(admin, org)
    other, _ = make_project(admin, org)
    repo = git()
    path = REPO_API % (org, project)
    https = "https://127.0.0.1:9/x.git"

    data, _ = secret(admin, org, "data", data="x")
    error(admin.post(path, json={"name": "bad1", "url": https, "secretName": data}), 400, "DATA secret")
    up, up_id = secret(admin, org, "username_password", username="u", password="p")
    error(admin.post(path, json={"name": "bad2", "url": "ssh://git@127.0.0.1:9/x.git", "secretId": up_id}), 400,
          "KEY_PAIR")
    error(admin.post(path, json={"name": "bad3", "url": repo.url, "secretName": up}), 400, "local repository")
    locked, _ = secret(admin, org, "username_password", username="u", password="p", storePassword="Passw0rd-1")
    error(admin.post(path, json={"name": "bad4", "url": https, "secretName": locked}), 400, "password")
    mine, _ = secret(admin, org, "username_password", username="u", password="p", project=other)
    error(admin.post(path, json={"name": "bad5", "url": https, "secretName": mine}), 400, "restricted to project")
    org2, _ = make_org(admin)
    _, foreign_id = secret(admin, org2, "username_password", username="u", password="p")
    error(admin.post(path, json={"name": "bad6", "url": https, "secretId": foreign_id}), 400, "Secret not found")

    # a writer of the project who may not read the (private) secret cannot use it
    writer = new_user()
    make_team(admin, org, [(writer, "MEMBER")], project, "WRITER")
    private, _ = secret(admin, org, "username_password", username="u", password="p", visibility="PRIVATE")
    error(writer.post(path, json={"name": "bad7", "url": https, "secretName": private}), 400, "")
    assert admin.get(path).json() == []


def test_project_deletion_removes_repositories_and_clones(admin, git, server):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git()
    _, body = create_repo(admin, org, project, repo.url)
    clone = os.path.join(server.data_dir, "repos", body["id"])
    assert os.path.isdir(clone)
    assert admin.delete("/api/v1/org/%s/project/%s" % (org, project)).status_code == 200
    assert not os.path.exists(clone)
    # a new project of the same name starts without repositories
    make_project(admin, org, name=project)
    assert admin.get(REPO_API % (org, project)).json() == []


def test_unknown_org_project(admin, proj, git):
    org, project, _ = proj
    error(admin.get(REPO_API % ("no-such-org", project)), 404, "Organization not found")
    error(admin.get(REPO_API % (org, "no-such-project")), 404, "Project not found")
    error(admin.post(REPO_API % (org, "no-such-project"), json={"name": "abc", "url": git().url}), 404,
          "Project not found")
