"""`make install` and `make deb` (packaging/): the package's files, permissions, control
fields and maintainer scripts, installed into a scratch root by extraction (no systemd
needed)."""
import os
import stat
import subprocess

import pytest

from conftest import BIN, ROOT, backend_neutral

pytestmark = backend_neutral("make install and make deb: no server, no database")

UNIT_MUST = ["User=accord", "Group=accord", "StateDirectory=accord", "ProtectSystem=strict", "NoNewPrivileges=yes",
             "ReadWritePaths=/var/lib/accord", "PrivateTmp=yes", "ProtectHome=yes", "UMask=0077",
             "EnvironmentFile=-/etc/default/accord", "WantedBy=multi-user.target"]


def sh(*args, **kw):
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    kw.setdefault("timeout", 300)
    return subprocess.run(list(args), **kw)


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture(scope="module")
def deb(tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    # uncompressed: xz of the ASan binary took ~30 s of CPU in each API suite; what the tests
    # read (fields, files, scripts) is the same
    r = sh(os.path.join(ROOT, "packaging", "build-deb"), str(out),
           env=dict(os.environ, BIN=BIN, VERSION="1.2.3", DEB_COMPRESS="none"))
    assert r.returncode == 0, r.stderr
    path = r.stdout.strip().splitlines()[-1]
    assert os.path.basename(path).startswith("accord_1.2.3_") and os.path.exists(path)
    return path


def test_control_fields(deb):
    fields = {f: sh("dpkg-deb", "-f", deb, f).stdout.strip() for f in ("Package", "Version", "Depends")}
    assert fields["Package"] == "accord" and fields["Version"] == "1.2.3"
    deps = [d.strip() for d in fields["Depends"].split(",")]
    for need in ("libsqlite3-0", "libsodium23", "libjansson4", "passwd"):
        assert need in deps, deps
    for loaded in ("libmicrohttpd", "libpq5", "libgit2", "zlib1g", "libldap"):  # loaded on demand, still dependencies
        assert any(d.startswith(loaded) for d in deps), deps
    r = sh("dpkg-deb", "-I", deb, "conffiles")
    assert r.stdout.split() == ["/etc/default/accord"]


def test_files_and_permissions_in_a_scratch_root(deb, tmp_path):
    root = str(tmp_path / "root")
    assert sh("dpkg-deb", "-x", deb, root).returncode == 0
    expect = {"usr/bin/accord": 0o755, "lib/systemd/system/accord.service": 0o644, "etc/default/accord": 0o644,
              "usr/lib/sysusers.d/accord.conf": 0o644, "usr/share/doc/accord/operations.md": 0o644}
    for rel, m in expect.items():
        p = os.path.join(root, rel)
        assert os.path.isfile(p), rel
        assert mode(p) == m, (rel, oct(mode(p)))
    listing = sh("dpkg-deb", "-c", deb).stdout
    assert all(" root/root " in l for l in listing.splitlines()), listing
    unit = open(os.path.join(root, "lib/systemd/system/accord.service")).read()
    for line in UNIT_MUST + ["ExecStart=/usr/bin/accord serve"]:
        assert "\n" + line + "\n" in unit, line
    assert "@" not in unit.replace("@localhost", "")  # every placeholder filled
    sysusers = open(os.path.join(root, "usr/lib/sysusers.d/accord.conf")).read()
    assert "u accord -" in sysusers and "/var/lib/accord" in sysusers
    r = sh(os.path.join(root, "usr/bin/accord"), "--help")
    assert r.returncode == 0 and "backup" in r.stdout and "restore" in r.stdout


def test_maintainer_scripts(deb, tmp_path):
    ctl = str(tmp_path / "DEBIAN")
    assert sh("dpkg-deb", "-e", deb, ctl).returncode == 0
    for name in ("postinst", "prerm", "postrm"):
        p = os.path.join(ctl, name)
        assert mode(p) == 0o755, name
        r = sh("sh", "-n", p)
        assert r.returncode == 0, (name, r.stderr)
        assert open(p).readline().startswith("#!/bin/sh")
    # postinst configure with scripted tools: it creates the group and the user, the data
    # folder 0700, and talks to systemctl only when systemd runs
    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "calls"
    for tool, code in (("getent", 2), ("groupadd", 0), ("useradd", 0), ("install", 0), ("systemctl", 0)):
        (fake / tool).write_text('#!/bin/sh\necho "%s $*" >> %s\nexit %d\n' % (tool, log, code))
        (fake / tool).chmod(0o755)
    env = dict(os.environ, PATH="%s:%s" % (fake, os.environ["PATH"]))
    r = sh(os.path.join(ctl, "postinst"), "configure", env=env)
    assert r.returncode == 0, r.stderr
    calls = log.read_text().splitlines()
    assert "groupadd --system accord" in calls
    assert any(c.startswith("useradd --system --gid accord --home-dir /var/lib/accord") and c.endswith(" accord")
               for c in calls), calls
    assert "install -d -o accord -g accord -m 0700 /var/lib/accord" in calls
    systemd = os.path.isdir("/run/systemd/system")
    assert any(c.startswith("systemctl") for c in calls) == systemd
    if not systemd:
        assert "systemd is not running" in r.stdout
    # an upgrade (configure with the old version) restarts instead of starting
    log.unlink()
    r = sh(os.path.join(ctl, "postinst"), "configure", "1.2.2", env=env)
    assert r.returncode == 0
    assert not systemd or "systemctl restart accord.service" in log.read_text()
    for script, arg in (("prerm", "remove"), ("prerm", "upgrade"), ("postrm", "remove"), ("postrm", "purge")):
        r = sh(os.path.join(ctl, script), arg, env=env)
        assert r.returncode == 0, (script, arg, r.stderr)
    r = sh(os.path.join(ctl, "postinst"), "bogus", env=env)
    assert r.returncode == 1 and "unknown argument" in r.stderr


def test_make_install_into_destdir_keeps_the_settings(tmp_path):
    dest = str(tmp_path / "dest")
    env = dict(os.environ, DESTDIR=dest, PREFIX="/usr/local", BIN=BIN)
    r = sh(os.path.join(ROOT, "packaging", "install"), env=env)
    assert r.returncode == 0, r.stderr
    unit = open(os.path.join(dest, "etc/systemd/system/accord.service")).read()
    assert "\nExecStart=/usr/local/bin/accord serve\n" in unit
    for line in UNIT_MUST:
        assert "\n" + line + "\n" in unit, line
    assert mode(os.path.join(dest, "usr/local/bin/accord")) == 0o755
    settings = os.path.join(dest, "etc/default/accord")
    with open(settings, "a") as f:
        f.write("ACCORD_WORKERS=3\n")
    r = sh(os.path.join(ROOT, "packaging", "install"), env=env)
    assert r.returncode == 0 and "keeping" in r.stdout
    assert "ACCORD_WORKERS=3" in open(settings).read()
    r = sh(os.path.join(ROOT, "packaging", "install"), env=dict(env, BIN=str(tmp_path / "none")))
    assert r.returncode == 1 and "no binary" in r.stderr
