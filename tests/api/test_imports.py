"""`imports` of kind git and mvn (issue 24 part 2): fetched on the server when a process
starts, from local git repositories (file://, and https with a secret) and from a Maven
layout served by a local HTTP server; recorded as the process's IMPORTS event; a failing
import refuses the start with a message naming the import."""
import functools
import hashlib
import http.server
import os
import shutil
import subprocess
import tempfile
import threading

import pytest

import git_servers as gs
from conftest import ADMIN_KEY, BIN, Client, Server, backend_neutral, process_log, start_process, unique, wait_process
from proc_util import make_org, make_project, make_team, zip_bytes
from repo_util import error, git  # noqa: F401 (fixture)
from test_repo_start import add_secret

neutral = backend_neutral("accord run's imports (no database); the server's imports run on both backends")

LIB = """
flows:
  libFlow:
    - log: "from the library: ${who}"
"""


def main(imports, call="libFlow"):
    return """
imports:
%s
configuration:
  arguments:
    who: "me"
flows:
  default:
    - call: %s
""" % (imports, call)


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def maven():
    """(folder, url): a Maven repository layout served over HTTP from folder."""
    root = tempfile.mkdtemp(prefix="accord-mvn-")
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield root, "http://127.0.0.1:%d/maven2" % httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()
    shutil.rmtree(root, ignore_errors=True)


def publish(maven_root, group, artifact, version, data, classifier=None, type_="jar"):
    folder = os.path.join(maven_root, "maven2", *group.split("."), artifact, version)
    os.makedirs(folder, exist_ok=True)
    name = "%s-%s%s.%s" % (artifact, version, "-" + classifier if classifier else "", type_)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)
    return os.path.join(folder, name)


@pytest.fixture(scope="module")
def git_base():
    d = tempfile.mkdtemp(prefix="accord-git-base-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def srv(maven, git_base):
    # an unreachable repository (with credentials) first: the artifact comes from the next
    s = Server(args=["--maven-repository", "http://mvn-user:mvn-s3cret@127.0.0.1:9/none",
                     "--maven-repository", maven[1], "--imports-git-base-url", "file://" + git_base]).start()
    yield s
    s.cleanup()


@pytest.fixture
def admin(srv):
    return Client(srv.url, ADMIN_KEY, "admin")


def run(client, flow, expect="FINISHED"):
    pid = start_process(client, flow)
    p = wait_process(client, pid)
    log = process_log(client, pid)
    assert p["status"] == expect, log
    return pid, log


def imports_event(client, pid):
    evs = client.get("/api/v1/process/%s/event" % pid, params={"type": "IMPORTS"}).json()
    evs = [e for e in evs if e["eventType"] == "IMPORTS"]
    assert len(evs) == 1, evs
    return evs[0]["data"]["imports"]


def test_git_import_by_url_runs_the_imported_flow_and_records_the_commit(admin, git):
    lib = git({"concord/lib.concord.yml": LIB})
    pid, log = run(admin, main('  - git:\n      url: "%s"\n      version: main' % lib.url))
    assert "from the library: me" in log
    [rec] = imports_event(admin, pid)
    assert rec["type"] == "git" and rec["url"] == lib.url and rec["commitId"] == lib.head()
    assert rec["version"] == "main"


def test_git_import_version_path_dest_and_exclude(admin, git):
    lib = git({"sub/concord/lib.concord.yml": LIB, "sub/concord/broken.concord.yml": "flows: [not: valid",
                 "sub/data/x.txt": "old", "other.yml": "flows: {}"})
    first = lib.head()
    lib.tag("v1")
    lib.commit({"sub/concord/lib.concord.yml": LIB.replace("from the library", "from v2")})
    imp = """  - git:
      url: "%s"
      version: "%s"
      path: sub
      exclude: ["concord/broken\\\\.concord\\\\.yml", "data"]
"""
    pid, log = run(admin, main(imp % (lib.url, "v1")))
    assert "from the library: me" in log
    assert imports_event(admin, pid)[0]["commitId"] == first
    pid, log = run(admin, main(imp % (lib.url, first)))
    assert "from the library: me" in log
    _, log = run(admin, main(imp % (lib.url, "main")))
    assert "from v2: me" in log

    # dest: the files land there, not in concord/ (so the flow is not loaded)
    flow = main('  - git:\n      url: "%s"\n      version: main\n      path: sub/data\n      dest: imported'
                % lib.url, call="show") + """
  show:
    - log: "file: ${resource.asString('imported/x.txt')}"
"""
    _, log = run(admin, flow)
    assert "file: old" in log


def test_git_import_by_name_against_the_base_url(admin, git_base):
    gs.make_repo(os.path.join(git_base, "acme", "lib"), {"concord/lib.concord.yml": LIB})
    _, log = run(admin, main("  - git:\n      name: acme/lib\n      version: main"))
    assert "from the library: me" in log


def test_a_failing_git_import_refuses_the_start(admin, git):
    lib = git({"concord/lib.concord.yml": LIB})
    listed = {"orgName": "Default", "limit": 1000}
    before = len(admin.get("/api/v2/process", params=listed).json())
    error(start_process(admin, main('  - git:\n      url: "file:///no/such/repo"'), expect=400), 400,
          "git import failed")
    msg = error(start_process(admin, main('  - git:\n      url: "%s"\n      version: nope' % lib.url), expect=400),
                400, "nope")
    assert "git import failed" in msg
    error(start_process(admin, main('  - git:\n      url: "%s"\n      name: a/b' % lib.url), expect=400), 400,
          "mutually exclusive")
    error(start_process(admin, main('  - git:\n      url: "%s"\n      exclude: ["("]' % lib.url), expect=400),
          400, "invalid 'exclude' pattern")
    error(start_process(admin, main('  - git:\n      url: "%s"\n      bogus: 1' % lib.url), expect=400), 400,
          "bogus")
    assert len(admin.get("/api/v2/process", params=listed).json()) == before


def test_mvn_import_fetched_once_and_recorded(admin, maven):
    data = zip_bytes({"concord/lib.concord.yml": LIB.replace("from the library", "from maven")})
    path = publish(maven[0], "com.example.flows", "lib", "1.0", data, type_="zip")
    pid, log = run(admin, main('  - mvn:\n      url: "mvn://com.example.flows:lib:1.0@zip"'))
    assert "from maven: me" in log
    [rec] = imports_event(admin, pid)
    assert rec == {"type": "mvn", "url": "mvn://com.example.flows:lib:1.0@zip",
                   "sha256": hashlib.sha256(data).hexdigest()}
    # cached per node: gone from the repository, still imported
    os.unlink(path)
    _, log = run(admin, main('  - mvn:\n      url: "mvn://com.example.flows:lib:1.0@zip"'))
    assert "from maven: me" in log


def test_mvn_import_jar_with_classifier_and_dest(admin, maven):
    publish(maven[0], "org.acme", "tools", "2.1", zip_bytes({"x.txt": "from the jar"}), classifier="flows")
    flow = main('  - mvn:\n      url: "mvn://org.acme:tools:2.1:flows"\n      dest: lib', call="show") + """
  show:
    - log: "file: ${resource.asString('lib/x.txt')}"
"""
    _, log = run(admin, flow)
    assert "file: from the jar" in log


def test_failing_mvn_imports_refuse_the_start(admin, maven):
    msg = error(start_process(admin, main('  - mvn:\n      url: "mvn://org.acme:missing:1.0"'), expect=400), 400,
                "not found in the Maven repositories")
    assert "last error: http://127.0.0.1:9/none/org/acme/missing/1.0/missing-1.0.jar" in msg
    assert "mvn-s3cret" not in msg
    error(start_process(admin, main('  - mvn:\n      url: "mvn://org.acme:../x:1.0"'), expect=400), 400,
          "invalid Maven URL")
    error(start_process(admin, main('  - mvn:\n      url: "https://example.com/x.jar"'), expect=400), 400,
          "mvn://")
    publish(maven[0], "org.acme", "notzip", "1.0", b"this is not a zip archive")
    error(start_process(admin, main('  - mvn:\n      url: "mvn://org.acme:notzip:1.0"'), expect=400), 400,
          "mvn import failed")


def test_git_import_with_a_secret_over_https(fresh_server, tmp_path):
    served = tmp_path / "srv"
    gs.make_repo(str(served / "lib.git"), {"concord/lib.concord.yml": LIB})
    with gs.HttpsGitServer(str(served)) as https:
        s = fresh_server(args=["--git-ca-file", https.ca_file]).start()
        admin = Client(s.url, ADMIN_KEY)
        org, _ = make_org(admin)
        project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
        good = add_secret(admin, org, "username_password", username=https.username, password=https.password,
                          visibility="PRIVATE")
        imp = '  - git:\n      url: "%s"\n      version: main\n      secret:\n        name: %s'
        parts = {"org": org, "project": project}

        pid = start_process(admin, main(imp % (https.url("lib.git"), good)), parts=parts)
        p = wait_process(admin, pid)
        assert p["status"] == "FINISHED", process_log(admin, pid)
        assert "from the library: me" in process_log(admin, pid)

        # no secret: the server refuses the clone; an unknown secret is named
        r = start_process(admin, main('  - git:\n      url: "%s"\n      version: main' % https.url("lib.git")),
                          parts=parts, expect=400)
        error(r, 400, "git import failed")
        error(start_process(admin, main(imp % (https.url("lib.git"), "nope")), parts=parts, expect=400), 400,
              "nope")
        # a password cannot be given (Concord: a non-password-protected secret)
        error(start_process(admin, main((imp + "\n        password: x") % (https.url("lib.git"), good)),
                            parts=parts, expect=400), 400, "password-protected")
        # a member of the org who may start processes of the project but cannot read the secret
        username = unique("user")
        r = admin.post("/api/v1/user", json={"username": username, "type": "LOCAL"})
        assert r.status_code == 200, r.text
        key = admin.post("/api/v1/apikey", json={"username": username}).json()["key"]
        user = Client(s.url, key, username)
        make_team(admin, org, [(user, "MEMBER")], project=project, level="WRITER")
        msg = error(start_process(user, main(imp % (https.url("lib.git"), good)), parts=parts, expect=400), 400,
                    "git import failed")
        assert good in msg and "READER" in msg.upper()
        assert https.password not in s.read_log()


# ---- accord run ---------------------------------------------------------------------------

def accord_run(tmp_path, flow, *args, cache=None):
    folder = tmp_path / ("flow-%d" % len(list(tmp_path.iterdir())))
    folder.mkdir()
    (folder / "concord.yml").write_text(flow)
    cmd = [BIN, "run", str(folder), "--imports-cache", str(cache or tmp_path / "cache")] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@neutral
def test_run_git_and_mvn_imports_then_offline(tmp_path, git, maven, git_base):
    lib = git({"concord/lib.concord.yml": LIB})
    gs.make_repo(os.path.join(git_base, "team", "shared"), {"concord/shared.concord.yml": """
flows:
  sharedFlow:
    - log: "shared flow"
"""})
    data = zip_bytes({"concord/m.concord.yml": "flows:\n  mvnFlow:\n    - log: \"maven flow\"\n"})
    publish(maven[0], "com.example", "runlib", "3.0", data, type_="zip")
    imports = ('  - git:\n      url: "%s"\n      version: main\n'
               '  - git:\n      name: team/shared\n      version: main\n'
               '  - mvn:\n      url: "mvn://com.example:runlib:3.0@zip"' % lib.url)
    flow = main(imports, call="libFlow\n    - call: sharedFlow\n    - call: mvnFlow")
    repo_args = ["--maven-repository", "http://127.0.0.1:9/none", "--maven-repository", maven[1],
                 "--imports-git-base-url", "file://" + git_base]
    p = accord_run(tmp_path, flow, *repo_args)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "from the library: me" in p.stdout and "shared flow" in p.stdout and "maven flow" in p.stdout
    assert "Imported %s (main) at commit %s" % (lib.url, lib.head()) in p.stdout
    assert "sha256 %s" % hashlib.sha256(data).hexdigest() in p.stdout

    # --offline: from the cache only, even with the sources gone
    lib.commit({"concord/lib.concord.yml": LIB.replace("from the library", "changed")})
    os.unlink(os.path.join(maven[0], "maven2", "com", "example", "runlib", "3.0", "runlib-3.0.zip"))
    p = accord_run(tmp_path, flow, "--offline", *repo_args)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "from the library: me" in p.stdout and "maven flow" in p.stdout

    # offline with an empty cache: a clear error, exit 2
    p = accord_run(tmp_path, flow, "--offline", *repo_args, cache=tmp_path / "empty")
    assert p.returncode == 2, p.stdout + p.stderr
    assert "git import failed" in p.stdout and "not in the cache (offline)" in p.stdout


@neutral
def test_run_refuses_secrets_and_reports_failures(tmp_path, git):
    lib = git({"concord/lib.concord.yml": LIB})
    p = accord_run(tmp_path, main('  - git:\n      url: "%s"\n      secret:\n        name: s' % lib.url))
    assert p.returncode == 2 and "available on the server only" in p.stdout, p.stdout + p.stderr
    p = accord_run(tmp_path, main('  - mvn:\n      url: "mvn://a:b:1"'))
    assert p.returncode == 2 and "no Maven repository is configured" in p.stdout, p.stdout + p.stderr
    p = accord_run(tmp_path, main('  - git:\n      name: a/b'))
    assert p.returncode == 2 and "--imports-git-base-url" in p.stdout, p.stdout + p.stderr
