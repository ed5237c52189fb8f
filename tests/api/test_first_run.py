"""A first run as a new user meets it (issue 12 part 7): scripts/deps, scripts/wait-ready,
`accord run` help and working folder, and the docs agreeing with `serve --help`."""
import os
import re
import socket
import subprocess
import time

from conftest import BIN, ROOT, backend_neutral, passable

pytestmark = backend_neutral("the README's commands and scripts/deps: servers on the default SQLite data "
                             "folder whatever the suite's backend")

HELLO = """configuration:
  arguments:
    name: "world"
flows:
  default:
    - log: "Hello, ${name}!"
    - set:
        greeting: "Hello, ${name}"
"""


def run(args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 120)
    return subprocess.run(args, **kw)


def fake_bin(where, installed, runtime_dir):
    """A PATH folder whose dpkg-query, apt-get and clang are scripted; apt-get logs its args."""
    where.mkdir()
    d = where / "bin"
    d.mkdir()
    log = where / "apt.log"
    scripts = {
        "dpkg-query": '#!/bin/sh\nfor p in %s; do [ "$p" = "$3" ] && { printf "install ok installed"; exit 0; }; done\n'
                      'exit 1\n' % " ".join(installed),
        "apt-get": '#!/bin/sh\necho "$@" >> %s\n' % log,
        "clang": '#!/bin/sh\ncase "$1" in --print-runtime-dir) echo %s;; -dumpversion) echo 14.0.6;; '
                 '*) echo /nowhere/libgcc.a;; esac\n' % runtime_dir,
    }
    for name, text in scripts.items():
        p = d / name
        p.write_text(text)
        p.chmod(0o755)
    return d, log


def deps_packages():
    text = open(os.path.join(ROOT, "scripts", "deps")).read()
    names = set()
    for group in re.findall(r"^\w+_pkgs=\(([^)]*)\)", text, re.M):
        names.update(group.split())
    return names


def test_deps_installs_the_fuzzer_runtime_and_the_readme_tools(tmp_path):
    names = deps_packages()
    assert {"curl", "xxd"} <= names
    empty = tmp_path / "rt"
    empty.mkdir()
    installed = sorted(names - {"curl"})
    d, log = fake_bin(tmp_path / "first", installed, empty)
    env = dict(os.environ, PATH="%s:%s" % (d, os.environ["PATH"]))
    r = run(["bash", os.path.join(ROOT, "scripts", "deps")], env=env)
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines()
    installs = [l for l in lines if l.startswith("install")]
    assert any(l.split()[-1:] == ["curl"] for l in installs), lines  # only what is missing
    assert any("libclang-rt-14-dev" in l.split() for l in installs), lines
    assert all("--no-install-recommends" in l for l in installs)

    # with the runtime present and everything installed, nothing is installed
    (empty / "libclang_rt.fuzzer-x86_64.a").write_text("")
    d2, log2 = fake_bin(tmp_path / "again", sorted(names), empty)
    env = dict(os.environ, PATH="%s:%s" % (d2, os.environ["PATH"]))
    r = run(["bash", os.path.join(ROOT, "scripts", "deps")], env=env)
    assert r.returncode == 0 and "all" in r.stdout and not log2.exists()


def test_wait_ready_waits_for_a_server_that_starts_later(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    url = "http://127.0.0.1:%d" % port
    waiter = subprocess.Popen([os.path.join(ROOT, "scripts", "wait-ready"), url, "60"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    assert waiter.poll() is None  # nothing listens yet: still waiting
    env = dict(os.environ)
    env.pop("ACCORD_ADMIN_API_KEY", None)
    log = open(str(tmp_path / "log"), "w+")
    passable(str(tmp_path / "data"))  # as root, runners run as nobody: they pass through tmp_path
    proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % port, "--data", str(tmp_path / "data")],
                            stdout=log, stderr=log, env=env)
    try:
        out, err = waiter.communicate(timeout=60)
        assert waiter.returncode == 0, err
        assert "is ready" in out
        # the key file exists once ready, and the server said where it is
        key = tmp_path / "data" / "initial-admin-api-key"
        assert key.exists()
        log.seek(0)
        assert "admin's API key is in %s" % key in log.read()
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()
    r = run([os.path.join(ROOT, "scripts", "wait-ready"), url, "1"])
    assert r.returncode == 1 and "did not become ready within 1s" in r.stderr


def test_readme_first_process_with_the_default_data_folder(tmp_path):
    """`make run` serves with the default --data ./data, a relative path: the README's first
    process must run (it once FAILED: the runner zygote refuses a relative working folder)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    url = "http://127.0.0.1:%d" % port
    env = dict(os.environ)
    env.pop("ACCORD_ADMIN_API_KEY", None)
    log = open(str(tmp_path / "log"), "w+")
    passable(str(tmp_path / "data"))
    proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % port], cwd=str(tmp_path), stdout=log,
                            stderr=log, env=env)
    try:
        assert run([os.path.join(ROOT, "scripts", "wait-ready"), url, "60"]).returncode == 0
        key = (tmp_path / "data" / "initial-admin-api-key").read_text().strip()
        log.seek(0)
        assert "data=%s" % (tmp_path / "data") in log.read()
        (tmp_path / "concord.yml").write_text(HELLO)
        out = run(["curl", "-s", "-H", "Authorization: " + key, "-F", "concord.yml=@concord.yml", "-F",
                   "arguments.name=Accord", "-F", "out=greeting", url + "/api/v1/process"], cwd=str(tmp_path))
        pid = re.search(r'"instanceId":"([^"]+)"', out.stdout).group(1)
        deadline = time.time() + 30
        while time.time() < deadline:
            st = run(["curl", "-s", "-H", "Authorization: " + key, url + "/api/v2/process/" + pid]).stdout
            if re.search(r'"status":"(FINISHED|FAILED|CANCELLED|TIMED_OUT)"', st):
                break
            time.sleep(0.1)
        assert '"status":"FINISHED"' in st and '"greeting":"Hello, Accord"' in st, st
        logtext = run(["curl", "-s", "-H", "Authorization: " + key, url + "/api/v1/process/%s/log" % pid]).stdout
        assert "Hello, Accord!" in logtext
    finally:
        proc.terminate()
        proc.wait(20)
        log.close()


def test_readme_waits_after_make_run():
    readme = open(os.path.join(ROOT, "README.md")).read()
    for m in re.finditer(r"^make run &.*\n(.*)\n", readme, re.M):
        assert m.group(1).startswith("scripts/wait-ready"), m.group(0)
    assert "scripts/wait-ready" in readme


def test_run_help_lists_every_option():
    r = run([BIN, "run", "--help"])
    assert r.returncode == 0
    for opt in ("-e, --entry-point NAME", "-a, --arg KEY=VALUE", "--arg-json KEY=JSON", "-p, --profile NAME",
                "--out NAME", "--workdir DIR", "--resume EVENT", "--events FILE", "--debug", "-h, --help"):
        assert re.search(r"^  %s" % re.escape(opt), r.stdout, re.M), opt


def test_run_without_workdir_removes_its_folder_or_names_it(tmp_path):
    flow = tmp_path / "hello"
    flow.mkdir()
    (flow / "concord.yml").write_text(HELLO)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp))
    r = run([BIN, "run", str(flow)], env=env)
    assert r.returncode == 0, r.stderr
    assert "Hello, world!" in r.stdout
    assert os.listdir(tmp) == []  # nothing left behind
    r = run([BIN, "run", str(flow), "--out", "greeting"], env=env)
    assert r.returncode == 0, r.stderr
    [kept] = os.listdir(tmp)
    out = tmp / kept / "_attachments" / "out.json"
    assert "out variables in %s" % out in r.stderr and out.exists()
    assert '"greeting"' in out.read_text()
    (flow / "concord.yml").write_text("flows:\n  default:\n    - suspend: ev1\n")
    r = run([BIN, "run", str(flow)], env=env)
    assert r.returncode == 3
    m = re.search(r"the process waits in (\S+): continue with accord run --workdir \S+ --resume EVENT", r.stderr)
    assert m and os.path.isdir(m.group(1)), r.stderr
    r = run([BIN, "run", "--workdir", m.group(1), "--resume", "ev1"], env=env)
    assert r.returncode == 0, r.stdout + r.stderr


def test_serve_help_and_operations_agree_on_threads():
    r = run([BIN, "serve", "--help"])
    assert r.returncode == 0
    assert "0: 2 per CPU, at least 4" in r.stdout and "event-loop threads (libmicrohttpd's, epoll)" in r.stdout
    assert "(0: one per CPU)" in r.stdout
    ops = open(os.path.join(ROOT, "docs", "operations.md")).read()
    threads = ops[ops.index("## Threads"):]
    threads = threads[:threads.index("\n## ", 5)]
    assert "`--http-io-threads` event-loop threads" in threads and "one per CPU by\ndefault" in threads
    assert "2 per CPU, at least 4" in threads
    table = re.search(r"^\| `--http-io-threads` \| (.*?) \|", ops, re.M).group(1)
    assert "number of CPUs" in table
    table = re.search(r"^\| `--http-threads` \| (.*?) \|", ops, re.M).group(1)
    assert "2 per CPU, at least 4" in table


def test_deps_for_make_run_installs_no_test_tools(tmp_path):
    """`make run` (scripts/deps --run) installs what building and running need, not the
    browser, the database server or the test tools: a first start stays short."""
    text = open(os.path.join(ROOT, "scripts", "deps")).read()
    build = set(re.search(r"^build_pkgs=\(([^)]*)\)", text, re.M).group(1).split())
    test = set(re.search(r"^test_pkgs=\(([^)]*)\)", text, re.M).group(1).split())
    empty = tmp_path / "rt"
    empty.mkdir()
    d, log = fake_bin(tmp_path / "none", [], empty)  # nothing installed yet
    env = dict(os.environ, PATH="%s:%s" % (d, os.environ["PATH"]))
    r = run(["bash", os.path.join(ROOT, "scripts", "deps"), "--run"], env=env)
    assert r.returncode == 0, r.stderr
    asked = set()
    for line in log.read_text().splitlines():
        if line.startswith("install"):
            asked.update(w for w in line.split() if not w.startswith("-") and w != "install")
    assert build <= asked, asked
    assert not (asked & test), asked & test
    assert run(["bash", os.path.join(ROOT, "scripts", "deps"), "--nope"], env=env).returncode == 2
