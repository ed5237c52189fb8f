"""Helpers for the repository tests: local git repositories made with the git CLI, and
repositories of a project through the API."""
import shutil
import tempfile

import pytest

import git_servers as gs
from conftest import unique
from proc_util import make_org, make_project


class GitRepo:
    """A git repository in a temp folder (branch main), made and committed to with the
    helpers of git_servers.py."""

    def __init__(self, files=None, message="first"):
        self.path = tempfile.mkdtemp(prefix="accord-git-")
        gs.make_repo(self.path, files or {".keep": ""}, message=message)

    def git(self, *args):
        return gs._git(self.path, *args)

    def commit(self, files, message="change"):
        """Writes files (name -> text, None removes) and commits them; returns the sha."""
        return gs.commit(self.path, files, message)

    def head(self, ref="HEAD"):
        return gs.rev(self.path, ref)

    def checkout(self, branch, create=False):
        self.git("checkout", "-q", *(["-b", branch] if create else [branch]))

    def tag(self, name):
        self.git("tag", name)

    @property
    def url(self):
        return "file://" + self.path

    def cleanup(self):
        shutil.rmtree(self.path, ignore_errors=True)


def flow(message):
    return """
flows:
  default:
    - log: "%s"
""" % message


REPO_API = "/api/v1/org/%s/project/%s/repository"


def create_repo(client, org, project, url, expect=200, **fields):
    body = {"name": fields.pop("name", None) or unique("repo"), "url": url}
    body.update(fields)
    r = client.post(REPO_API % (org, project), json=body)
    if expect != 200:
        assert r.status_code == expect, r.text
        return r
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True
    return body["name"], r.json()


def error(r, status, fragment):
    assert r.status_code == status, (r.status_code, r.text)
    body = r.json()
    assert body["ok"] is False, body
    assert fragment.lower() in body["message"].lower(), body["message"]
    return body["message"]


@pytest.fixture
def git():
    """git(files=None, message) -> GitRepo (default: a concord.yml logging "from git"),
    removed after the test."""
    made = []

    def make(files=None, message="first"):
        repo = GitRepo(files if files is not None else {"concord.yml": flow("from git")}, message)
        made.append(repo)
        return repo

    yield make
    for repo in made:
        repo.cleanup()


@pytest.fixture
def proj(admin):
    """(org name, project name, project id) of a new org and project."""
    org, _ = make_org(admin)
    project, pid = make_project(admin, org)
    return org, project, pid
