"""Local repository URLs (issue 23 item 4): file:///… and paths read the server's own disk,
so they are refused unless the operator lists the folder with --repo-local-dirs — when
stored or validated, and again when fetched (a process start, a refresh)."""
import os
import shutil
import tempfile

import pytest

from conftest import ADMIN_KEY, Client, process_log, start_process, wait_process
from proc_util import make_org, make_project
from repo_util import REPO_API, GitRepo, error, flow

NOT_ALLOWED = "not allowed on this server: an operator allows folders with --repo-local-dirs"
OUTSIDE = "is not an existing folder inside the folders allowed for local repositories (--repo-local-dirs)"


@pytest.fixture
def folders():
    """Two folders, each with a git repository: (allowed, elsewhere, repo in allowed,
    repo elsewhere)."""
    allowed = tempfile.mkdtemp(prefix="accord-allowed-")
    elsewhere = tempfile.mkdtemp(prefix="accord-elsewhere-")
    repos = []
    for parent in (allowed, elsewhere):
        r = GitRepo({"concord.yml": flow("from %s" % os.path.basename(parent))})
        target = os.path.join(parent, "repo")
        shutil.move(r.path, target)
        r.path = target
        repos.append(r)
    yield allowed, elsewhere, repos[0], repos[1]
    shutil.rmtree(allowed, ignore_errors=True)
    shutil.rmtree(elsewhere, ignore_errors=True)


def project_of(admin):
    org, _ = make_org(admin)
    project, pid = make_project(admin, org, rawPayloadMode="EVERYONE")
    return org, project, pid


def refused_everywhere(admin, org, project, pid, url, fragment):
    error(admin.post(REPO_API % (org, project), json={"name": "rep", "url": url}), 400, fragment)
    error(admin.post("/api/v1/repository/validate", json={"projectId": pid, "url": url}), 400, fragment)
    assert admin.get(REPO_API % (org, project)).json() == []  # nothing stored


def test_without_the_setting_every_local_url_is_refused(fresh_server, folders):
    _, _, repo, _ = folders
    srv = fresh_server(env={"ACCORD_REPO_LOCAL_DIRS": ""}).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, project, pid = project_of(admin)
    for url in (repo.url, repo.path, "file:///etc", "/etc"):
        refused_everywhere(admin, org, project, pid, url, NOT_ALLOWED)


def test_only_the_allowed_folders_may_be_used(fresh_server, folders):
    allowed, elsewhere, inside, outside = folders
    os.symlink(outside.path, os.path.join(allowed, "link"))
    srv = fresh_server(args=["--repo-local-dirs", allowed + "::" + allowed + "/repo"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, project, pid = project_of(admin)

    for url in (outside.url, outside.path, "file://" + allowed + "/link",  # a link out of it
                allowed + "/repo/../../" + os.path.basename(elsewhere) + "/repo",  # '..' out of it
                allowed + "/missing", "/etc"):
        refused_everywhere(admin, org, project, pid, url, OUTSIDE)
    refused_everywhere(admin, org, project, pid, "file://" + allowed + "/%2e%2e/x", "may not contain '%'")
    refused_everywhere(admin, org, project, pid, "relative/repo", "'url' must be")

    r = admin.post("/api/v1/repository/validate", json={"projectId": pid, "url": inside.url})
    assert r.status_code == 200, r.text
    r = admin.post(REPO_API % (org, project), json={"name": "okay", "url": inside.path})
    assert r.status_code == 200, r.text
    pid2 = start_process(admin, parts={"org": org, "project": project, "repo": "okay"})
    assert wait_process(admin, pid2)["status"] == "FINISHED"
    assert "from accord-allowed-" in process_log(admin, pid2)


def test_a_folder_no_longer_allowed_is_not_fetched_again(fresh_server, folders, tmp_path):
    allowed, _, inside, _ = folders
    data = str(tmp_path / "data")
    srv = fresh_server(data_dir=data, args=["--repo-local-dirs", allowed]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, project, _ = project_of(admin)
    assert admin.post(REPO_API % (org, project), json={"name": "rep", "url": inside.url}).status_code == 200
    srv.stop()

    srv = fresh_server(data_dir=data, env={"ACCORD_REPO_LOCAL_DIRS": ""}).start()
    admin = Client(srv.url, ADMIN_KEY)
    r = start_process(admin, parts={"org": org, "project": project, "repo": "rep"}, expect=400)
    error(r, 400, NOT_ALLOWED)
    error(admin.post(REPO_API % (org, project) + "/rep/refresh"), 400, NOT_ALLOWED)
    error(admin.post("/api/v1/repository/validate", json={"org": org, "project": project, "name": "rep"}), 400,
          NOT_ALLOWED)


@pytest.mark.parametrize("value, message", [
    ("relative/dir", "is not an absolute path"),
    ("/no/such/folder-for-accord", "/no/such/folder-for-accord"),
])
def test_a_bad_setting_stops_the_start(fresh_server, value, message):
    srv = fresh_server(args=["--repo-local-dirs", value])
    with pytest.raises(RuntimeError) as exc:
        srv.start()
    assert message in str(exc.value)
    assert "--repo-local-dirs" in str(exc.value)
