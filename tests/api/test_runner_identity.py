"""Runners never run as root (issue 23 item 15): a server started as root runs its runners
as `--runner-user` (default nobody) with no supplementary groups and no capabilities, their
working directory given to that user and nothing else of the data folder; it refuses root
as the runners' user; and the loopback trust of GET /metrics does not extend to a flow,
which connects from the runners' user."""
import os
import pwd

import pytest

from conftest import ADMIN_KEY, Client, backend_neutral, process_log, start_process, wait_process

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="the server drops to another user only when it is root"),
    backend_neutral("the runners' user and privileges and the settings refused at start: the database takes no "
                    "part"),
]

WHO = """
flows:
  default:
    - script: python
      body: |
        import os
        print("who uid=%d euid=%d gid=%d groups=%s" % (os.getuid(), os.geteuid(), os.getgid(), os.getgroups()))
        try:
            os.chown('.', 0, 0)  # CAP_CHOWN
            print("chown to root worked")
        except OSError as e:
            print("chown: %s" % e.strerror)
        print("cwd-owner=%d" % os.stat('.').st_uid)
        try:
            os.listdir('../..')
            print("data folder listed")
        except OSError as e:
            print("data folder: %s" % e.strerror)
"""


def test_runners_run_as_nobody_without_privileges(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    nobody = pwd.getpwnam("nobody")
    assert "as nobody (uid %d)" % nobody.pw_uid in srv.read_log()
    pid = start_process(admin, WHO)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "who uid=%d euid=%d gid=%d groups=[]" % (nobody.pw_uid, nobody.pw_uid, nobody.pw_gid) in log, log
    assert "chown: Operation not permitted" in log, log  # no capabilities
    assert "cwd-owner=%d" % nobody.pw_uid in log
    assert "data folder: Permission denied" in log, log
    # what the server keeps stays the server's
    for name in ("accord.db", "master.key"):
        path = os.path.join(srv.data_dir, name)
        if os.path.exists(path):
            st = os.stat(path)
            assert st.st_uid == 0 and st.st_mode & 0o077 == 0, (name, oct(st.st_mode))
    assert os.stat(srv.data_dir).st_mode & 0o777 == 0o711  # passed through, never listed


def test_a_named_runner_user_and_root_refused(fresh_server):
    daemon = pwd.getpwnam("daemon")
    srv = fresh_server(args=["--runner-user", "daemon"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_process(admin, WHO)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "who uid=%d" % daemon.pw_uid in process_log(admin, pid)
    for user, message in (("root", "runners never run as root"), ("no-such-user-x", "no such user")):
        bad = fresh_server(args=["--runner-user", user])
        with pytest.raises(RuntimeError, match=message):
            bad.start()


METRICS_FROM_A_FLOW = """
flows:
  default:
    - script: python
      body: |
        import urllib.request, urllib.error
        try:
            r = urllib.request.urlopen("%s/metrics", timeout=10)
            print("metrics answered %%d" %% r.status)
        except urllib.error.HTTPError as e:
            print("metrics refused %%d" %% e.code)
"""


def test_metrics_loopback_trust_stops_at_flows(fresh_server):
    import requests
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    r = requests.get(srv.url + "/metrics", timeout=30)  # this host, not a runner: trusted
    assert r.status_code == 200, r.text
    pid = start_process(admin, METRICS_FROM_A_FLOW % srv.url)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    log = process_log(admin, pid)
    assert "metrics refused 401" in log, log


def test_a_work_folder_the_runners_cannot_reach_is_refused_at_start(tmp_path):
    """Runners reach <work>/work/<id> by path: a folder above it that their user cannot pass
    through would fail every process, so the server refuses to start and says which."""
    import subprocess
    from conftest import BIN
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    os.chmod(str(closed), 0o700)
    r = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--data", str(closed / "data")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "cannot pass through %s (mode 700)" % closed in r.stderr + r.stdout, r.stderr + r.stdout
