"""Helpers for the repository tests: local git repositories made with the git CLI, and
repositories of a project through the API."""
import os
import shutil
import subprocess
import tempfile

from conftest import unique


class GitRepo:
    """A git repository in a temp folder (branch main), committed to with the git CLI."""

    def __init__(self, files=None, message="first"):
        self.path = tempfile.mkdtemp(prefix="accord-git-")
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Test Author")
        self.git("config", "user.email", "author@example.com")
        self.git("config", "commit.gpgsign", "false")
        if files:
            self.commit(files, message)

    def git(self, *args):
        r = subprocess.run(["git", "-C", self.path] + list(args), capture_output=True, text=True)
        assert r.returncode == 0, "git %s: %s" % (" ".join(args), r.stderr)
        return r.stdout.strip()

    def commit(self, files, message="change"):
        """Writes files (name -> text, None removes) and commits them; returns the sha."""
        for name, text in files.items():
            p = os.path.join(self.path, name)
            if text is None:
                os.unlink(p)
                continue
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(text)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self, ref="HEAD"):
        return self.git("rev-parse", ref)

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
