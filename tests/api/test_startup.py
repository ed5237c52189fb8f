"""What a command loads when it starts (DESIGN.md §9, docs/operations.md "Libraries loaded
on demand"): `accord version`, `accord run` and the process runners load only the small
libraries they need; SQLite, libpq, libmicrohttpd, libcurl, libgit2, libarchive and libssh
(and what they bring: GnuTLS, Kerberos, LDAP, OpenSSL, …) are opened when first used, so a
missing libpq fails only a PostgreSQL store, a missing SQLite only an SQLite one, each with
a message naming the package."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN, TEST_DB, backend_neutral, start_process, wait_process

neutral = backend_neutral("the libraries accord version and accord run load, and the backends' own library "
                          "checks, which each test chooses itself: the same in both suites")

# Libraries no command may load at start: the on-demand ones and their dependencies.
ON_DEMAND = ("libsqlite3.", "libpq.", "libmicrohttpd.", "libcurl", "libgit2.", "libarchive.", "libssh.", "libgnutls.",
             "libkrb5.", "libldap", "libsasl2.", "libssl.", "libcrypto.", "libp11-kit.")

HELLO = 'flows:\n  default:\n    - log: "Hello from the start-up test"\n'


def loaded_by(args, env=None):
    """Runs the binary with the loader's file trace; returns (result, names of the shared
    objects it opened)."""
    e = dict(os.environ)
    e.update(env or {})
    e["LD_DEBUG"] = "files"
    p = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=60, env=e)
    names = set()
    for line in p.stderr.splitlines():
        at = line.find("file=")
        if at >= 0:
            names.add(line[at + 5:].split()[0].split(";")[0])
    return p, names


@pytest.fixture
def tmp():
    """A folder with the flow in tmp/flow."""
    d = tempfile.mkdtemp(prefix="accord-startup-")
    os.mkdir(os.path.join(d, "flow"))
    with open(os.path.join(d, "flow", "concord.yml"), "w") as f:
        f.write(HELLO)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def server_libs(pid):
    with open("/proc/%d/maps" % pid) as f:
        return {os.path.basename(line.split()[-1]) for line in f if "/" in line}


def on_demand(names):
    return sorted(n for n in names if any(os.path.basename(n).startswith(p) for p in ON_DEMAND))


@neutral
def test_version_loads_no_on_demand_library():
    p, names = loaded_by(["version"])
    assert p.returncode == 0, p.stderr[-2000:]
    assert "libmicrohttpd 0." in p.stdout
    assert names, "the loader's trace is empty: LD_DEBUG not honoured"
    assert on_demand(names) == []


@neutral
def test_run_loads_no_on_demand_library(tmp):
    p, names = loaded_by(["run", os.path.join(tmp, "flow"), "--workdir", os.path.join(tmp, "work")])
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Hello from the start-up test" in p.stdout
    assert on_demand(names) == []


def test_server_loads_only_its_stores_library(server, admin):
    """The server's own maps: libpq on a PostgreSQL store, SQLite on an SQLite one, never
    both; a process runs either way."""
    iid = start_process(admin, HELLO)
    assert wait_process(admin, iid)["status"] == "FINISHED"
    libs = server_libs(server.proc.pid)
    assert any(n.startswith("libpq.so") for n in libs) == bool(TEST_DB), sorted(libs)
    assert any(n.startswith("libsqlite3.so") for n in libs) == (not TEST_DB), sorted(libs)


def library_path(soname):
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.strip().startswith(soname + " ("):
            return line.split("=>")[-1].strip()
    return None


def without(soname, script):
    """Runs a shell script in a mount namespace where the library is an empty file (as if
    its package were missing); skips where no such namespace can be made."""
    path = library_path(soname)
    prefix = "mount --bind /dev/null %s && " % path if path else ""
    unshare = shutil.which("unshare")
    if not unshare:
        pytest.skip("no unshare(1)")
    cmd = [unshare, "-m"] if os.geteuid() == 0 else [unshare, "-rm"]
    probe = subprocess.run(cmd + ["sh", "-c", prefix + "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("cannot hide a library in a mount namespace: " + probe.stderr.strip())
    return subprocess.run(cmd + ["sh", "-c", prefix + script], capture_output=True, text=True, timeout=60)


def q(s):
    return "'" + s.replace("'", "'\\''") + "'"


def commands_without_a_store(tmp):
    """Shell lines: `accord version` and `accord run` of the hello flow, exiting 10 or 11
    when one fails."""
    return ("%s version >/dev/null || exit 10; " % q(BIN)
            + "%s run %s --workdir %s >/dev/null || exit 11; "
            % (q(BIN), q(os.path.join(tmp, "flow")), q(os.path.join(tmp, "work"))))


def serve(tmp, *args):
    data = os.path.join(tmp, "data")
    os.makedirs(data, 0o700, exist_ok=True)
    return "exec %s serve --data %s --listen 127.0.0.1:0 %s" % (q(BIN), q(data), " ".join(args))


def assert_fails_naming(p, message):
    assert p.returncode not in (10, 11), "a command without a database failed:\n" + p.stderr
    assert p.returncode == 1, p.stderr
    assert message in p.stderr
    assert "AddressSanitizer" not in p.stderr and "runtime error" not in p.stderr


@neutral
def test_missing_libpq_fails_only_postgresql(tmp):
    p = without("libpq.so.5", commands_without_a_store(tmp) + serve(tmp, "--db", "postgresql://127.0.0.1:1/accord"))
    assert_fails_naming(p, "accord serve: cannot load libpq.so.5 (package libpq5)")


@neutral
def test_missing_sqlite_fails_only_sqlite(tmp):
    p = without("libsqlite3.so.0", commands_without_a_store(tmp) + serve(tmp))
    assert_fails_naming(p, "accord serve: cannot load libsqlite3.so.0 (package libsqlite3-0)")
    p = without("libsqlite3.so.0", "exec %s backup --data %s %s" % (q(BIN), q(os.path.join(tmp, "data")),
                                                                   q(os.path.join(tmp, "copy.db"))))
    assert_fails_naming(p, "accord backup: cannot load libsqlite3.so.0 (package libsqlite3-0)")
