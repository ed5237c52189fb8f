"""Black-box tests of the flow `git` task with Debian's git against a local HTTP git server
(git http-backend behind Basic authentication, started by the tests): `accord run` and
`accord serve` run flows that clone, commit, push, branch, merge and pull, and the tests
check the remote repository, the task's results, and that the password appears in no log
line or event and in no file left in the working directory."""
import base64
import os
import pathlib
import re
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import backend_neutral, passable, run_with_secret

neutral = backend_neutral("the git task against local repositories, run by accord run (no database); the "
                          "server's clones with secrets run on both backends")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ACCORD_BIN") or os.path.join(ROOT, "build", "accord")
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000 ", re.M)
USER, PASSWORD = "gituser", "s3cret-git-pa55"
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": "/nonexistent",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin"}


def git(*args, cwd=None):
    r = subprocess.run(["git"] + list(args), cwd=cwd, env=GIT_ENV, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


class GitHttp(BaseHTTPRequestHandler):
    """git http-backend as a CGI program, behind Basic authentication."""
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def serve(self):
        want = "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()
        self.server.auths.append(self.headers.get("Authorization"))
        if self.headers.get("Authorization") != want:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        env = dict(GIT_ENV, GIT_PROJECT_ROOT=self.server.root, GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                   QUERY_STRING=query, REQUEST_METHOD=self.command, REMOTE_USER=USER, REMOTE_ADDR="127.0.0.1",
                   CONTENT_TYPE=self.headers.get("Content-Type") or "", CONTENT_LENGTH=str(len(body)))
        for h in ("Content-Encoding", "Git-Protocol"):
            if self.headers.get(h):
                env["HTTP_" + h.upper().replace("-", "_")] = self.headers[h]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, data = out.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = serve


@pytest.fixture
def remote(tmp_path):
    """A bare repository repo.git (master: README, feature: README + feature.txt) served
    over HTTP; remote.url is its clone URL."""
    root = tmp_path / "srv"
    root.mkdir()
    bare = root / "repo.git"
    git("init", "-q", "--bare", "-b", "master", str(bare))
    git("config", "http.receivepack", "true", cwd=bare)
    seed = tmp_path / "seed"
    git("init", "-q", "-b", "master", str(seed))
    (seed / "README").write_text("hello\n")
    git("add", ".", cwd=seed)
    git("commit", "-q", "-m", "first", cwd=seed)
    git("checkout", "-q", "-b", "feature", cwd=seed)
    (seed / "feature.txt").write_text("feature\n")
    git("add", ".", cwd=seed)
    git("commit", "-q", "-m", "feature", cwd=seed)
    git("push", "-q", str(bare), "master", "feature", cwd=seed)
    s = ThreadingHTTPServer(("127.0.0.1", 0), GitHttp)
    s.daemon_threads = True
    s.root = str(root)
    s.auths = []
    threading.Thread(target=s.serve_forever, daemon=True).start()
    s.url = "http://127.0.0.1:%d/repo.git" % s.server_address[1]
    s.bare = bare
    yield s
    s.shutdown()
    s.server_close()


class Run:
    def __init__(self, proc, workdir, events):
        self.rc = proc.returncode
        self.output = TS.sub("", proc.stdout + proc.stderr)
        self.workdir = workdir
        self.events = open(events).read() if os.path.exists(events) else ""


def run_flow(tmp_path, steps):
    base = tempfile.mkdtemp(dir=tmp_path)
    d = pathlib.Path(base) / "flow"
    d.mkdir()
    flow = "configuration:\n  events: {recordTaskInVars: true, recordTaskOutVars: true}\nflows:\n  default:\n"
    (d / "concord.yml").write_text(flow + "".join("  " + l + "\n" for l in steps.strip("\n").splitlines()))
    workdir, events = os.path.join(base, "work"), os.path.join(base, "events.jsonl")
    proc = subprocess.run([BIN, "run", str(d), "--workdir", workdir, "--events", events],
                          capture_output=True, text=True, timeout=120)
    return Run(proc, workdir, events)


def no_secret_left(r):
    assert PASSWORD not in r.output and PASSWORD not in r.events
    for dirpath, _, files in os.walk(r.workdir):
        for f in files:
            p = os.path.join(dirpath, f)
            if not os.path.islink(p) and f != "concord.yml":
                assert PASSWORD.encode() not in open(p, "rb").read(), p
    assert not os.path.exists(os.path.join(r.workdir, ".git_task", "credentials"))


AUTH = "auth: {basic: {username: %s, password: %s}}" % (USER, PASSWORD)


@neutral
def test_clone_then_commit_nothing_then_commit_and_push_a_change(remote, tmp_path):
    commit = """
- task: git
  in: {action: commit, workingDir: repo, baseBranch: master, commitMessage: "from accord",
       commitUsername: bot, commitEmail: bot@example.com, pushChanges: true, %(auth)s}
  out: c
- log: "commit ok=${c.ok} status=${c.status} changes=${c.changeList} head=${c.headSHA}"
"""
    r = run_flow(tmp_path, ("""
- task: git
  in: {action: clone, url: "%(url)s", workingDir: repo, %(auth)s}
  out: cloned
- log: "clone ok=${cloned.ok} status=${cloned.status} head=${cloned.headSHA}"
""" + commit + """
- set:
    x: "${resource.writeAsString('new file', 'repo/new.txt')}"
""" + commit) % {"url": remote.url, "auth": AUTH})
    assert r.rc == 0, r.output
    first = git("rev-parse", "master~1", cwd=remote.bare)
    head = git("rev-parse", "master", cwd=remote.bare)
    assert "clone ok=true status=SUCCESS head=%s" % first in r.output
    assert "commit ok=true status=NO_CHANGES changes=[] head=%s" % first in r.output
    assert "commit ok=true status=SUCCESS changes=[new.txt] head=%s" % head in r.output
    assert git("log", "-1", "--format=%s|%an|%ae", "master", cwd=remote.bare) == "from accord|bot|bot@example.com"
    assert git("show", "master:new.txt", cwd=remote.bare) == "new file"
    assert os.path.exists(os.path.join(r.workdir, "repo", "README"))
    no_secret_left(r)


@neutral
def test_create_branch_merge_and_pull(remote, tmp_path):
    r = run_flow(tmp_path, """
- task: git
  in: {action: createBranch, url: "%(url)s", workingDir: b, baseBranch: feature, newBranch: release,
       pushBranch: true, %(auth)s}
  out: br
- log: "branch ok=${br.ok} head=${br.headSHA}"
- task: git
  in: {action: merge, url: "%(url)s", workingDir: m, sourceBranch: feature, destinationBranch: master, %(auth)s}
  out: mg
- log: "merge ok=${mg.ok} status=${mg.status}"
- task: git
  in: {action: merge, url: "%(url)s", workingDir: m2, sourceBranch: feature, destinationBranch: master, %(auth)s}
  out: again
- log: "again status=${again.status}"
- task: git
  in: {action: pull, workingDir: b, remoteBranch: master, %(auth)s}
  out: pl
- log: "pull ok=${pl.ok}"
""" % {"url": remote.url, "auth": AUTH})
    assert r.rc == 0, r.output
    assert git("rev-parse", "release", cwd=remote.bare) == git("rev-parse", "feature", cwd=remote.bare)
    assert "branch ok=true head=%s" % git("rev-parse", "feature", cwd=remote.bare) in r.output
    assert "merge ok=true status=SUCCESS" in r.output
    assert "again status=NO_CHANGES" in r.output
    assert git("show", "master:feature.txt", cwd=remote.bare) == "feature"
    assert "pull ok=true" in r.output
    assert os.path.exists(os.path.join(r.workdir, "b", "feature.txt"))
    no_secret_left(r)


@neutral
def test_wrong_password_fails_the_step_or_is_a_result(remote, tmp_path):
    bad = "auth: {basic: {username: %s, password: wrong-pw-77}}" % USER
    r = run_flow(tmp_path, """
- task: git
  in: {action: clone, url: "%(url)s", workingDir: repo, ignoreErrors: true, %(auth)s}
  out: res
- log: "ok=${res.ok} status=${res.status} error=${res.error}"
- task: git
  in: {action: clone, url: "%(url)s", workingDir: repo, %(auth)s}
""" % {"url": remote.url, "auth": bad})
    assert r.rc == 1, r.output
    assert "ok=false status=FAILURE error=Error while cloning the repository: fatal: Authentication failed" \
        in r.output
    assert "wrong-pw-77" not in r.output and "wrong-pw-77" not in r.events
    assert not os.path.exists(os.path.join(r.workdir, "repo"))


@neutral
def test_token_auth_and_init(remote, tmp_path):
    r = run_flow(tmp_path, """
- task: git
  in: {action: init, url: "%(url)s", workingDir: fresh, initBranch: main}
  out: i
- log: "init ok=${i.ok} status=${i.status}"
- task: git
  in: {action: clone, url: "%(url)s", workingDir: tok, baseBranch: feature, auth: {basic: {token: tok-123}},
       ignoreErrors: true}
  out: t
- log: "token ok=${t.ok}"
""" % {"url": remote.url})
    assert r.rc == 0, r.output
    assert "init ok=true status=SUCCESS" in r.output
    assert git("-C", os.path.join(r.workdir, "fresh"), "remote", "get-url", "origin") == remote.url
    assert git("-C", os.path.join(r.workdir, "fresh"), "symbolic-ref", "HEAD") == "refs/heads/main"
    # the token goes as the user name with an empty password, and is masked
    assert "Basic " + base64.b64encode(b"tok-123:").decode() in remote.auths
    assert "token ok=false" in r.output and "tok-123" not in r.output


@neutral
def test_a_password_in_the_url_is_masked(remote, tmp_path):
    url = remote.url.replace("http://", "http://%s:%s@" % (USER, PASSWORD))
    r = run_flow(tmp_path, """
- task: git
  in: {action: clone, url: "%s", workingDir: repo}
  out: res
- log: "ok=${res.ok}"
""" % url)
    assert r.rc == 0, r.output
    assert "ok=true" in r.output
    assert "Cloning http://%s:******@127.0.0.1" % USER in r.output
    assert PASSWORD not in r.output


@neutral
def test_bad_input_is_refused(remote, tmp_path):
    for steps, msg in [
        ("{action: fetchAll, url: x}", "Unknown action: 'fetchAll'. Available actions: [INIT, CLONE, CREATEBRANCH, "
                                       "MERGE, COMMIT, PULL]"),
        ("{action: clone, url: /etc}", "is not an http(s), ssh or git URL"),
        ("{action: clone, url: 'file:///etc'}", "is not an http(s), ssh or git URL"),
        ("{action: clone, url: '%s', workingDir: ../out}" % remote.url, "is not a folder inside the working"),
        ("{action: commit, workingDir: r}", "Mandatory parameter 'baseBranch' is required"),
        ("{action: clone, url: '%s', baseBranch: '--upload-pack=x'}" % remote.url, "bad 'baseBranch' value"),
    ]:
        r = run_flow(tmp_path, "- task: git\n  in: %s\n" % steps)
        assert r.rc == 1, r.output
        assert msg in r.output, (steps, r.output)


@neutral
def test_clone_into_an_existing_folder_fails(remote, tmp_path):
    r = run_flow(tmp_path, """
- task: git
  in: {action: clone, url: "%(url)s", workingDir: repo, %(auth)s}
- task: git
  in: {action: clone, url: "%(url)s", workingDir: repo, %(auth)s}
""" % {"url": remote.url, "auth": AUTH})
    assert r.rc == 1
    assert "Destination directory 'repo' already exists" in r.output


def test_server_clone_with_a_secret_password(server, admin, remote, tmp_path):
    passable(str(remote.bare))
    flow = """
flows:
  default:
  - task: git
    in:
      action: clone
      url: "%s"
      workingDir: repo
      baseBranch: feature
      auth: {basic: {username: %s, password: "${crypto.exportAsString('Default', 'git-pw', null)}"}}
    out: res
  - log: "ok=${res.ok} head=${res.headSHA}"
  - log: "files=${resource.asString('repo/feature.txt')}"
""" % (remote.url, USER)
    p, log = run_with_secret(admin, {"name": "git-pw", "type": "data", "data": PASSWORD.encode()}, flow)
    assert p["status"] == "FINISHED", log
    assert "ok=true head=%s" % git("rev-parse", "feature", cwd=remote.bare) in log
    assert "files=feature" in log
    assert PASSWORD not in log


def test_server_clone_and_push_over_ssh_with_a_key_pair_secret(server, admin, tmp_path):
    import git_servers as gs
    root = tempfile.mkdtemp(prefix="accord-git-ssh-")
    gs.make_repo(os.path.join(root, "flows.git"), {"README": "over ssh\n"}, branch="master")
    try:
        sshd = gs.SshGitServer(root).start()
    except gs.SshUnavailable as e:
        pytest.skip(str(e))
    try:
        flow = """
flows:
  default:
  - task: git
    in:
      action: createBranch
      url: "%s"
      workingDir: repo
      newBranch: from-accord
      pushBranch: true
      privateKey: {org: Default, secretName: git-key}
    out: res
  - log: "ok=${res.ok} head=${res.headSHA} readme=${resource.asString('repo/README')}"
""" % sshd.url("flows.git")
        p, log = run_with_secret(admin, {"name": "git-key", "type": "key_pair", "public": sshd.public_key.encode(),
                                         "private": sshd.private_key.encode()}, flow)
        assert p["status"] == "FINISHED", log
        head = gs.rev(os.path.join(root, "flows.git"), "master")
        assert "ok=true head=%s readme=over ssh" % head in log
        assert gs.rev(os.path.join(root, "flows.git"), "from-accord") == head
        key_line = [l for l in sshd.private_key.splitlines() if l and "PRIVATE KEY" not in l][0]
        assert key_line not in log
    finally:
        sshd.stop()
