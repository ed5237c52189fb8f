"""Processes started from a repository (issue 13 parts 2 and 4): POST /api/v1/process with
repo/repoId, branch/tag/commit overrides, `path`, uploads overlaying the checkout, fetch
max age, the process record's repo fields, and the concord task's `repo` option."""
import os
import shutil
import tempfile

import pytest

import git_servers as gs
from conftest import ADMIN_KEY, Client, process_log, start_process, unique, wait_process
from proc_util import make_org, make_project, make_team
from repo_util import REPO_API, create_repo, error, git, proj  # noqa: F401 (fixtures)

SHOW = """
flows:
  default:
    - log: "running %s: ${greeting}"
configuration:
  arguments:
    greeting: "hello"
"""

V1 = {"concord.yml": SHOW % "v1"}


def run(client, parts, files=None):
    pid = start_process(client, parts=parts, files=files)
    p = wait_process(client, pid)
    assert p["status"] == "FINISHED", process_log(client, pid)
    return p, process_log(client, pid)


def test_start_from_repository_and_record_fields(admin, proj, git):
    org, project, _ = proj
    repo = git(V1, message="the first commit\n\nwith a body")
    name, body = create_repo(admin, org, project, repo.url)
    p, log = run(admin, {"org": org, "project": project, "repo": name, "arguments.greeting": "bonjour"})
    assert "running v1: bonjour" in log
    assert p["repoId"] == body["id"] and p["repoName"] == name and p["repoUrl"] == repo.url
    assert p["commitId"] == repo.head() and p["commitAuthor"].startswith("Test Author")
    assert p["commitMsg"].startswith("the first commit")
    assert "repoPath" not in p
    # listed with the fields too
    r = admin.get("/api/v2/process", params={"projectId": p["projectId"]})
    assert [x["repoName"] for x in r.json()] == [name]

    # by repoId alone: the repository implies its project
    p2, _ = run(admin, {"repoId": body["id"]})
    assert p2["projectName"] == project and p2["repoId"] == body["id"]


def test_branch_tag_and_commit_overrides(admin, proj, git):
    org, project, _ = proj
    repo = git(V1)
    first = repo.head()
    repo.tag("v1.0")
    repo.checkout("feature", create=True)
    repo.commit({"concord.yml": SHOW % "feature"})
    repo.checkout("main")
    repo.commit({"concord.yml": SHOW % "v2"})
    name, _ = create_repo(admin, org, project, repo.url, branch="main")
    base = {"org": org, "project": project, "repo": name}

    _, log = run(admin, base)
    assert "running v2" in log
    p, log = run(admin, dict(base, repoBranchOrTag="feature"))
    assert "running feature" in log and p["commitId"] == repo.head("feature")
    p, log = run(admin, dict(base, repoBranchOrTag="v1.0"))
    assert "running v1" in log and p["commitId"] == first
    p, log = run(admin, dict(base, repoCommitId=first))
    assert "running v1" in log and p["commitId"] == first

    error(start_process(admin, parts=dict(base, repoBranchOrTag="no-such-branch"), expect=400), 400,
          "no-such-branch")
    error(start_process(admin, parts=dict(base, repoCommitId="c" * 40), expect=400), 400, "c" * 12)
    error(start_process(admin, parts={"org": org, "project": project, "repoBranchOrTag": "main"}, expect=400), 400,
          "needs 'repo'")


def test_pinned_commit_and_path(admin, proj, git):
    org, project, _ = proj
    repo = git({"concord.yml": SHOW % "root", "flows/team/concord.yml": SHOW % "sub",
                "flows/team/data.txt": "x"})
    sha = repo.head()
    repo.commit({"flows/team/concord.yml": SHOW % "sub-later"})
    name, _ = create_repo(admin, org, project, repo.url, commitId=sha, path="flows/team")
    p, log = run(admin, {"org": org, "project": project, "repo": name})
    assert "running sub: hello" in log and p["commitId"] == sha and p["repoPath"] == "flows/team"


def test_upload_overlays_the_checkout(admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": """
flows:
  default:
    - log: "data=${resource.asString('data.txt')}"
""", "data.txt": "from git"})
    name, _ = create_repo(admin, org, project, repo.url)
    _, log = run(admin, {"org": org, "project": project, "repo": name})
    assert "data=from git" in log
    _, log = run(admin, {"org": org, "project": project, "repo": name}, files={"data.txt": b"uploaded"})
    assert "data=uploaded" in log


def test_refused_starts(admin, proj, git):
    org, project, _ = proj
    repo = git(V1)
    name, body = create_repo(admin, org, project, repo.url)
    error(start_process(admin, parts={"org": org, "project": project, "repo": "nope"}, expect=400), 400,
          "Repository not found: nope")
    error(start_process(admin, parts={"org": org, "repo": name}, expect=400), 400, "Project ID or name is required")
    other, _ = make_project(admin, org)
    error(start_process(admin, parts={"org": org, "project": other, "repoId": body["id"]}, expect=400), 400,
          "Repository not found")
    r = admin.post(REPO_API % (org, project), json={"id": body["id"], "name": name, "url": repo.url,
                                                    "disabled": True})
    assert r.status_code == 200, r.text
    error(start_process(admin, parts={"org": org, "project": project, "repo": name}, expect=400), 400,
          "Repository is disabled -> " + name)

    empty = git({"README": "nothing"})
    ename, _ = create_repo(admin, org, project, empty.url)
    error(start_process(admin, parts={"org": org, "project": project, "repo": ename}, expect=400), 400,
          "No process definition in repository")


def test_start_access(admin, new_user, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, visibility="PRIVATE")
    reader, outsider = new_user(), new_user()
    make_team(admin, org, [(reader, "MEMBER")], project, "READER")
    repo = git(V1)
    name, _ = create_repo(admin, org, project, repo.url)
    parts = {"org": org, "project": project, "repo": name}
    pid = start_process(reader, parts=parts)
    assert wait_process(reader, pid)["status"] == "FINISHED"
    error(start_process(outsider, parts=parts, expect=403), 403, "")


def test_new_commit_needs_refresh_then_is_used(admin, proj, git):
    """With the default fetch max age (30 s) a start uses the clone as fetched; refresh
    picks up a pushed commit."""
    org, project, _ = proj
    repo = git(V1)
    name, _ = create_repo(admin, org, project, repo.url)
    repo.commit({"concord.yml": SHOW % "v2"})
    parts = {"org": org, "project": project, "repo": name}
    _, log = run(admin, parts)
    assert "running v1" in log
    assert admin.post(REPO_API % (org, project) + "/" + name + "/refresh").status_code == 200
    p, log = run(admin, parts)
    assert "running v2" in log and p["commitId"] == repo.head()


def test_fetch_max_age_zero_fetches_at_every_start(fresh_server, git):
    srv = fresh_server(args=["--repo-fetch-max-age", "0"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git(V1)
    name, _ = create_repo(admin, org, project, repo.url)
    repo.commit({"concord.yml": SHOW % "v2"})
    p, log = run(admin, {"org": org, "project": project, "repo": name})
    assert "running v2" in log and p["commitId"] == repo.head()


def concord_start(org, project, repo, more=""):
    """A flow whose one step starts a child from a repository with the concord task (more:
    further lines of `in:` and steps)."""
    return """
flows:
  default:
    - task: concord
      in:
        action: start
        org: %s
        project: %s
        repo: %s
%s
""" % (org, project, repo, more)


def test_concord_task_starts_a_child_from_a_repository(admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git(V1)
    repo.checkout("other", create=True)
    repo.commit({"concord.yml": SHOW % "other"})
    repo.checkout("main")
    name, _ = create_repo(admin, org, project, repo.url)
    parent = concord_start(org, project, name, "\n".join([
        "        repoBranchOrTag: other",
        "        sync: true",
        "        arguments:",
        "          greeting: from-parent",
        "      out: job",
        '    - log: "child ${job.id}"']))
    pid = start_process(admin, parent)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    child = log.split("child ")[-1].split()[0].strip()
    c = wait_process(admin, child)
    assert c["status"] == "FINISHED" and c["repoName"] == name and c["commitId"] == repo.head("other")
    assert c["parentInstanceId"] == pid
    assert "running other: from-parent" in process_log(admin, child)

    bad = parent.replace("repoBranchOrTag: other", "repoBranchOrTag: missing")
    pid = start_process(admin, bad)
    assert wait_process(admin, pid)["status"] == "FAILED"
    assert "missing" in process_log(admin, pid)


def test_concord_task_repo_needs_start_rights(admin, new_user, git):
    """The parent's initiator needs start rights on the repository's project."""
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, visibility="PRIVATE")
    repo = git(V1)
    name, _ = create_repo(admin, org, project, repo.url)
    user = new_user()
    make_team(admin, org, [(user, "MEMBER")])  # a member of the org, without rights on the project
    pid = start_process(user, concord_start(org, project, name), parts={"org": org})
    assert wait_process(user, pid)["status"] == "FAILED"
    log = process_log(user, pid)
    assert "running" not in log
    assert "permission" in log.lower() or "access" in log.lower(), log


# ---- remote repositories with credentials (tests/api/git_servers.py) ------------------------

def add_secret(client, org, type_, **parts):
    """parts: text values, or (filename, bytes) for file parts."""
    name = unique("sec")
    files = {"name": (None, name), "type": (None, type_)}
    for k, v in parts.items():
        files[k] = v if isinstance(v, tuple) else (None, v)
    r = client.post("/api/v1/org/%s/secret" % org, files=files)
    assert r.status_code == 200, r.text
    return name


@pytest.fixture
def served():
    d = tempfile.mkdtemp(prefix="accord-git-served-")
    gs.make_repo(os.path.join(d, "srv", "flows.git"), {"concord.yml": SHOW % "remote"})
    yield os.path.join(d, "srv")
    shutil.rmtree(d, ignore_errors=True)


def answers_and_log(srv, texts):
    log = srv.read_log()
    return "\n".join(texts) + "\n" + log


def test_https_with_credentials_end_to_end(fresh_server, served):
    with gs.HttpsGitServer(served) as https:
        srv = fresh_server(args=["--git-ca-file", https.ca_file]).start()
        admin = Client(srv.url, ADMIN_KEY)
        org, _ = make_org(admin)
        project, _ = make_project(admin, org)
        good = add_secret(admin, org, "username_password", username=https.username, password=https.password)
        wrong_pw = "Wr0ng-" + https.password[::-1]
        bad = add_secret(admin, org, "username_password", username=https.username, password=wrong_pw)
        texts = []

        r = admin.post(REPO_API % (org, project), json={"name": "remote", "url": https.url("flows.git"),
                                                        "secretName": bad})
        texts.append(r.text)
        assert r.status_code == 400, r.text
        assert admin.get(REPO_API % (org, project)).json() == []

        name, body = create_repo(admin, org, project, https.url("flows.git"), name="remote", secretName=good)
        entry = admin.get(REPO_API % (org, project) + "/remote").json()
        texts.append(str(entry))
        assert entry["secretName"] == good and entry["secretStoreType"] == "concord"
        p, log = run(admin, {"org": org, "project": project, "repo": name})
        texts += [log, str(p)]
        assert "running remote" in log and p["repoUrl"] == https.url("flows.git")
        r = admin.post(REPO_API % (org, project) + "/remote/refresh")
        texts.append(r.text)
        assert r.status_code == 200, r.text
        texts.append(admin.get("/api/v1/org/%s/project/%s" % (org, project)).text)

        # the secret's plaintext never shows: not in answers, logs, events, the process log
        texts.append(admin.get("/api/v1/process/%s/event" % p["instanceId"]).text)
        everything = answers_and_log(srv, texts)
        for secret_text in (https.password, wrong_pw):
            assert secret_text not in everything

        # deleting the secret keeps the repository, without a secret (ON DELETE SET NULL)
        assert admin.delete("/api/v1/org/%s/secret/%s" % (org, good)).status_code == 200
        entry = admin.get(REPO_API % (org, project) + "/remote").json()
        assert "secretId" not in entry and "secretName" not in entry
        error(admin.post(REPO_API % (org, project) + "/remote/refresh"), 400, "")


def test_ssh_with_key_pair_end_to_end(fresh_server, served, tmp_path):
    try:
        sshd = gs.SshGitServer(served).start()
    except gs.SshUnavailable as e:
        pytest.skip(str(e))
    try:
        known = sshd.known_hosts_file(str(tmp_path))
        srv = fresh_server(args=["--git-known-hosts", known]).start()
        admin = Client(srv.url, ADMIN_KEY)
        org, _ = make_org(admin)
        project, _ = make_project(admin, org)
        key = add_secret(admin, org, "key_pair", public=("id.pub", sshd.public_key.encode()),
                         private=("id", sshd.private_key.encode()))
        name, _ = create_repo(admin, org, project, sshd.url("flows.git"), secretName=key)
        p, log = run(admin, {"org": org, "project": project, "repo": name})
        assert "running remote" in log and p["repoName"] == name
        secret_line = [l for l in sshd.private_key.splitlines() if l and "PRIVATE KEY" not in l][0]
        assert secret_line not in answers_and_log(srv, [log, str(p)])
    finally:
        sshd.stop()


def test_update_to_another_url_runs_the_new_repository(admin, proj, git):
    org, project, _ = proj
    first, second = git(V1), git({"concord.yml": SHOW % "second"})
    name, body = create_repo(admin, org, project, first.url)
    _, log = run(admin, {"org": org, "project": project, "repo": name})
    assert "running v1" in log
    r = admin.post(REPO_API % (org, project), json={"id": body["id"], "name": name, "url": second.url})
    assert r.status_code == 200, r.text
    p, log = run(admin, {"org": org, "project": project, "repo": name})
    assert "running second" in log and p["repoUrl"] == second.url and p["commitId"] == second.head()
