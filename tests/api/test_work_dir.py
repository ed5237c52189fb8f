"""`accord serve --work-dir`: the files of processes (tmp/, ready/, work/) live in a folder
of their own — a tmpfs for speed — with the same rules as in the data folder: locked to
one server, emptied at start-up, out of reach of other processes' flows and of local
repository URLs."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import ADMIN_KEY, Client, backend_neutral, passable, start_process, unique, wait_process
from proc_util import make_org, make_project, sleeper, status, wait_for

pytestmark = backend_neutral("the work folder's confinement and lock: the database takes no part")

READS_FILE = """flows:
  default:
    - log: "data: ${resource.asString('data/in.txt')}"
"""


@pytest.fixture
def work_root():
    # A tmpfs mounted for the purpose, as an operator would (docs/operations.md; /dev/shm is
    # refused, below); a plain folder when not root.
    root = tempfile.mkdtemp(prefix="accord-work-")
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m,mode=0711", "tmpfs", root], capture_output=True).returncode == 0
    passable(os.path.join(root, "w"))
    yield os.path.join(root, "w")
    if mounted:
        subprocess.run(["umount", "-l", root], check=False)
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("option", ["--work-dir", "--data"])
def test_a_folder_runners_may_reach_is_refused(fresh_server, option):
    """Runners may open files by name in /dev/shm (POSIX semaphores) and read /usr: a data or
    work folder there would let any flow read other processes' files.  Refused before
    anything is made there."""
    for folder in ("/dev/shm/accord-%s" % unique("w"), "/usr/local/%s" % unique("accord")):
        srv = fresh_server(args=[option, folder])
        with pytest.raises(RuntimeError) as exc:
            srv.start()
        assert "which every flow's runner may open files in by name" in str(exc.value)
        assert not os.path.exists(folder)


def processes_in(work):
    """The processes' folders in work/, without the empty ones kept for the next processes
    (.free-N, queue/workdir_pool.h)."""
    return sorted(n for n in os.listdir(work) if not n.startswith(".free-"))


def test_processes_run_in_the_work_folder(fresh_server, work_root):
    srv = fresh_server(args=["--work-dir", work_root]).start()
    admin = Client(srv.url, ADMIN_KEY)
    assert "work=%s" % work_root in srv.read_log()
    # 0711 as root: the runners' own user passes through it to work/<id>
    assert oct(os.stat(work_root).st_mode & 0o777) == ("0o711" if os.geteuid() == 0 else "0o700")
    pid = start_process(admin, READS_FILE, files={"data/in.txt": b"on the side"})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "data: on the side" in admin.get("/api/v1/process/%s/log" % pid).text
    running = start_process(admin, sleeper(30))
    wait_for(lambda: status(admin, running)["status"] == "RUNNING")
    assert processes_in(os.path.join(work_root, "work")) == [running]
    for sub in ("work", "ready", "tmp"):
        assert not os.path.exists(os.path.join(srv.data_dir, sub)), sub
    assert admin.delete("/api/v1/process/%s" % running).status_code in (200, 204)
    assert wait_process(admin, running)["status"] == "CANCELLED"
    assert wait_for(lambda: processes_in(os.path.join(work_root, "work")) == [])


def test_a_work_folder_serves_one_server(fresh_server, work_root):
    first = fresh_server(args=["--work-dir", work_root]).start()
    second = fresh_server(args=["--work-dir", work_root])
    with pytest.raises(RuntimeError) as exc:
        second.start()
    assert "give each server its own --work-dir" in str(exc.value)
    # the first one still runs processes
    admin = Client(first.url, ADMIN_KEY)
    assert wait_process(admin, start_process(admin, READS_FILE, files={"data/in.txt": b"x"}))["status"] == "FINISHED"


def test_local_repositories_inside_the_work_folder_are_refused(fresh_server, work_root):
    # even when the operator allows local repositories in a folder that holds it
    srv = fresh_server(args=["--work-dir", work_root, "--repo-local-dirs", os.path.dirname(work_root)]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org)
    for url in (work_root, "file://" + work_root + "/work", work_root + "/../" + os.path.basename(work_root)):
        r = admin.post("/api/v1/org/%s/project/%s/repository" % (org, proj), json={"name": unique("r"), "url": url})
        assert r.status_code == 400, r.text
        assert "inside the server's work folder" in r.text


def test_a_flow_cannot_reach_another_process_in_the_work_folder(fresh_server, work_root):
    srv = fresh_server(args=["--work-dir", work_root]).start()
    admin = Client(srv.url, ADMIN_KEY)
    victim = start_process(admin, sleeper(30), files={"secret.txt": b"victim's file"})
    wait_for(lambda: status(admin, victim)["status"] == "RUNNING")
    flow = """
flows:
  default:
    - set:
        stolen: "${resource.asString(workDir.concat('/../%s/secret.txt'))}"
""" % victim
    p = wait_process(admin, start_process(admin, flow, parts={"out": "stolen"}))
    assert p["status"] == "FAILED", p
    assert "victim's file" not in admin.get("/api/v1/process/%s/log" % p["instanceId"]).text
    admin.delete("/api/v1/process/%s" % victim)
