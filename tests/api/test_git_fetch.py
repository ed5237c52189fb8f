"""Black-box tests of the fetch child, `accord git-fetch DIR URL` with the credentials frame
on stdin (src/repo/fetch_child.c), against local repositories, an HTTPS git server with
Basic auth and an sshd (tests/api/git_servers.py).  Secrets must never show in the child's
output, and URLs in errors lose their userinfo."""
import os
import shutil
import subprocess
import tempfile

import pytest

import git_servers as gs
from conftest import BIN, backend_neutral

pytestmark = backend_neutral("accord git-fetch, the fetch child, run alone: no server, no database")


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="accord-git-fetch-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def refs(clone):
    out = subprocess.run(["git", "-C", clone, "show-ref"], stdout=subprocess.PIPE, check=True).stdout.decode()
    return {name: sha for sha, name in (line.split() for line in out.splitlines())}


def head_of(clone):
    with open(os.path.join(clone, "HEAD")) as f:
        return f.read().strip()


def assert_secret_absent(res, *secrets):
    for s in secrets:
        for line in filter(None, s.splitlines()):
            if len(line) >= 8:
                assert line not in res.stdout and line not in res.stderr, "a secret leaked into the output"


@pytest.fixture(scope="module")
def served():
    d = tempfile.mkdtemp(prefix="accord-git-served-")
    main = gs.make_repo(os.path.join(d, "srv", "r.git"), {"concord.yml": "flows: {}\n"})
    yield d, main
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def https(served):
    with gs.HttpsGitServer(os.path.join(served[0], "srv")) as h:
        yield h


@pytest.fixture(scope="module")
def sshd(served):
    try:
        s = gs.SshGitServer(os.path.join(served[0], "srv")).start()
    except gs.SshUnavailable as e:
        pytest.skip(str(e))
    yield s
    s.stop()


def test_local_repository_branches_tags_default_branch_and_prune(tmp):
    src = os.path.join(tmp, "src")
    first = gs.make_repo(src, {"a.txt": "a"}, branch="trunk")
    subprocess.run(["git", "-C", src, "tag", "v1"], check=True)
    dev = gs.commit(src, {"b.txt": "b"}, branch="dev")
    subprocess.run(["git", "-C", src, "checkout", "-q", "trunk"], check=True)
    clone = os.path.join(tmp, "clone")
    for url in ("file://" + src, src):  # a file URL and a plain path
        res = gs.git_fetch(BIN, clone, url)
        assert res.returncode == 0, res
        assert res.result == {"ok": True, "head": "refs/heads/trunk"}
    r = refs(clone)
    assert r["refs/heads/trunk"] == first and r["refs/heads/dev"] == dev and r["refs/tags/v1"] == first
    assert not [n for n in r if n.startswith("refs/remotes/")]
    assert head_of(clone) == "ref: refs/heads/trunk"  # "no branch" means the remote's default
    # a deleted branch disappears, a new commit appears
    subprocess.run(["git", "-C", src, "branch", "-q", "-D", "dev"], check=True)
    second = gs.commit(src, {"c.txt": "c"})
    res = gs.git_fetch(BIN, clone, "file://" + src)
    assert res.returncode == 0, res
    r = refs(clone)
    assert "refs/heads/dev" not in r and r["refs/heads/trunk"] == second


def test_missing_repository_and_bad_frame(tmp):
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), "file://" + os.path.join(tmp, "nothing"))
    assert res.returncode == 1 and "git fetch of file://" in res.result["error"]
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), "file:///x", creds=b"\x01\x00\x00")
    assert res.returncode == 1 and res.result["error"] == "credentials frame: truncated"
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), "file:///x", creds=b"")
    assert res.result["error"] == "credentials frame: empty"
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), "file:///x", creds=gs.credentials() + b"x")
    assert res.result["error"] == "credentials frame: trailing bytes"


def test_https_with_password(tmp, https, served):
    creds = gs.credentials("password", https.username, https.password)
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), https.url("r.git"), creds, ca_file=https.ca_file)
    assert res.returncode == 0, res
    assert res.result["head"] == "refs/heads/main"
    assert refs(os.path.join(tmp, "c"))["refs/heads/main"] == served[1]
    assert_secret_absent(res, https.password)


def test_https_refused_password_and_userinfo_stripped(tmp, https):
    wrong = "wrong-" + https.password
    before = https.rejected
    url = https.url("r.git").replace("https://", "https://someone:url-secret-123@")
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), url, gs.credentials("password", https.username, wrong),
                       ca_file=https.ca_file)
    assert res.returncode == 1
    assert res.result["error"] == "git fetch of %s: authentication failed" % https.url("r.git")
    assert_secret_absent(res, wrong, "url-secret-123")
    assert https.rejected - before <= 4  # asked a bounded number of times, no loop
    # no credentials at all
    res = gs.git_fetch(BIN, os.path.join(tmp, "c2"), https.url("r.git"), ca_file=https.ca_file)
    assert res.result["error"].endswith("authentication failed")


def test_https_certificate_is_verified(tmp, https):
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), https.url("r.git"),
                       gs.credentials("password", https.username, https.password))
    assert res.returncode == 1
    assert "certificate" in res.result["error"], res.result
    assert_secret_absent(res, https.password)


def test_ssh_with_key(tmp, sshd, served):
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), sshd.url("r.git"),
                       gs.credentials("key", sshd.public_key, sshd.private_key))
    assert res.returncode == 0, res
    assert refs(os.path.join(tmp, "c"))["refs/heads/main"] == served[1]
    assert_secret_absent(res, sshd.private_key)
    # the public key may be left out: it is derived from the private one
    res = gs.git_fetch(BIN, os.path.join(tmp, "c2"), sshd.url("r.git"), gs.credentials("key", "", sshd.private_key))
    assert res.returncode == 0, res


def test_ssh_refused_key(tmp, sshd):
    other = os.path.join(tmp, "other")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other], check=True)
    with open(other) as f:
        priv = f.read()
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), sshd.url("r.git"), gs.credentials("key", "", priv))
    assert res.returncode == 1
    assert res.result["error"].endswith("authentication failed"), res.result
    assert_secret_absent(res, priv)


def test_ssh_known_hosts(tmp, sshd):
    creds = gs.credentials("key", "", sshd.private_key)
    res = gs.git_fetch(BIN, os.path.join(tmp, "c"), sshd.url("r.git"), creds,
                       known_hosts=sshd.known_hosts_file(tmp))
    assert res.returncode == 0, res
    other = os.path.join(tmp, "hk")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", other], check=True)
    with open(other + ".pub") as f:
        wrong = "[127.0.0.1]:%d %s\n" % (sshd.port, " ".join(f.read().split()[:2]))
    kh = os.path.join(tmp, "wrong_known_hosts")
    with open(kh, "w") as f:
        f.write(wrong)
    res = gs.git_fetch(BIN, os.path.join(tmp, "c2"), sshd.url("r.git"), creds, known_hosts=kh)
    assert res.returncode == 1
    assert "is not in the known hosts file " + kh in res.result["error"], res.result
