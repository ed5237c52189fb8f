"""The `docker` task under the server: the server (not the runner) runs the container
engine's CLI, with the process's working directory at /workspace and nothing else of the
host.  This machine has no Docker engine; podman (scripts/deps) runs as root with runc and
cgroupfs, on an image imported from Debian's busybox-static (registries are out of reach).
Skipped, saying why, where no engine can run a container; the task's own refusal (no
engine) is tested everywhere."""
import os
import shutil
import subprocess
import tempfile
import time

import pytest
from conftest import Server, Client, ADMIN_KEY, process_log, start_process, wait_process

ENGINE = ["podman", "--runtime", "runc", "--cgroup-manager=cgroupfs"]
IMAGE = "localhost/accord-docker-task-test"
RUN_OPTIONS = "--ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
APPLETS = ["sh", "echo", "cat", "ls", "sleep", "test", "pwd", "id", "printf"]


def _probe():
    """Once per session: builds the image and runs one container; the reason it cannot, or None."""
    if os.geteuid() != 0:
        return "podman runs containers here only as root"
    for exe in ("/usr/bin/podman", "/bin/busybox"):
        if not os.access(exe, os.X_OK):
            return "%s is not installed (scripts/deps installs podman, runc, busybox-static)" % exe
    root = tempfile.mkdtemp(prefix="accord-docker-root-")
    try:
        os.makedirs(os.path.join(root, "bin"))
        shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
        for a in APPLETS:
            os.symlink("busybox", os.path.join(root, "bin", a))
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        imp = subprocess.run(ENGINE + ["import", "-", IMAGE], stdin=tar.stdout, capture_output=True, timeout=120)
        tar.wait()
        if imp.returncode != 0:
            return "podman import failed: %s" % imp.stderr.decode(errors="replace").strip()[-300:]
        run = subprocess.run(ENGINE + ["run", "--rm", "--network", "none"] + RUN_OPTIONS.split() +
                             [IMAGE, "echo", "probe-ok"], capture_output=True, timeout=120)
        if b"probe-ok" not in run.stdout:
            return "podman cannot run a container here: %s" % run.stderr.decode(errors="replace").strip()[-300:]
    except (OSError, subprocess.SubprocessError) as e:
        return "podman cannot run a container here: %s" % e
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return None


@pytest.fixture(scope="module")
def engine():
    why = _probe()
    if why:
        pytest.skip(why)
    yield
    subprocess.run(ENGINE + ["rmi", "-f", IMAGE], capture_output=True)


@pytest.fixture(scope="module")
def srv(engine):
    s = Server(args=["--docker-command", " ".join(ENGINE), "--docker-network", "none",
                     "--docker-run-options", RUN_OPTIONS]).start()
    yield s
    s.cleanup()


@pytest.fixture
def admin(srv):
    return Client(srv.url, auth="Bearer " + ADMIN_KEY)


def run(admin, flow, files=None, timeout=120):
    pid = start_process(admin, flow, files=files)
    p = wait_process(admin, pid, timeout=timeout)
    return pid, p["status"], process_log(admin, pid)


def test_image_cmd_env_workspace_files_and_saved_stdout(admin):
    flow = """
flows:
  default:
    - task: docker
      in:
        image: %s
        forcePull: false
        cmd: |
          cat input.txt
          echo "$GREETING from $PWD"
          echo "written by the container" > from-container.txt
        env:
          GREETING: "Hello, ${name}"
        saveOut: true
      out: result
    - log: "saved=[${result.stdout.trim()}] ok=${result.ok}"
    - log: "file=${resource.asString('from-container.txt').trim()}"
configuration:
  arguments:
    name: concord
""" % IMAGE
    pid, status, log = run(admin, flow, files={"input.txt": b"the input file\n"})
    assert status == "FINISHED", log
    assert "DOCKER: the input file" in log
    assert "DOCKER: Hello, concord from /workspace" in log
    assert "saved=[the input file\nHello, concord from /workspace] ok=true" in log
    assert "file=written by the container" in log


def test_env_file_hosts_stderr_and_redirect(admin):
    flow = """
flows:
  default:
    - task: docker
      in:
        image: %s
        forcePull: false
        envFile: vars.env
        hosts: ["db.example:10.0.0.3"]
        cmd: echo "$FROM_FILE"; cat /etc/hosts | grep db.example; echo "to stderr" >&2
        saveErr: true
        logErr: false
      out: r1
    - log: "stderr=[${r1.stderr.trim()}] stdoutNull=${r1.stdout == null}"
    - task: docker
      in:
        image: %s
        forcePull: false
        cmd: echo "err merged" >&2
        redirectErrorStream: true
        saveOut: true
      out: r2
    - log: "merged=[${r2.stdout.trim()}]"
""" % (IMAGE, IMAGE)
    pid, status, log = run(admin, flow, files={"vars.env": b"# a comment\nFROM_FILE=from the env file\nHOME\n"})
    assert status == "FINISHED", log
    assert "DOCKER: from the env file" in log
    assert "10.0.0.3" in log and "db.example" in log
    assert "DOCKER: to stderr" not in log  # logErr: false
    assert "stderr=[to stderr] stdoutNull=true" in log
    assert "merged=[err merged]" in log


def test_failing_command_fails_the_step_with_its_exit_code(admin):
    flow = """
flows:
  default:
    - task: docker
      in: {image: %s, forcePull: false, cmd: "echo before; exit 7"}
    - log: "not reached"
""" % IMAGE
    pid, status, log = run(admin, flow)
    assert status == "FAILED", log
    assert "DOCKER: before" in log
    assert "Docker process finished with exit code 7" in log
    assert "not reached" not in log


def containers_of(pid):
    out = subprocess.run(ENGINE + ["ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True).stdout
    return [n for n in out.split() if pid in n]


def test_a_stop_kills_the_container(admin):
    flow = """
flows:
  default:
    - task: docker
      in: {image: %s, forcePull: false, cmd: "echo started; sleep 600"}
""" % IMAGE
    pid = start_process(admin, flow)
    deadline = time.time() + 120
    while "DOCKER: started" not in process_log(admin, pid):
        assert time.time() < deadline, process_log(admin, pid)
        time.sleep(0.2)
    assert containers_of(pid), "the container should be running"
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code in (200, 204), r.text
    p = wait_process(admin, pid, timeout=120)
    assert p["status"] == "CANCELLED", process_log(admin, pid)
    deadline = time.time() + 60
    while containers_of(pid):
        assert time.time() < deadline, "container of %s still there: %s" % (pid, containers_of(pid))
        time.sleep(0.2)


def test_the_container_cannot_see_the_server_data_folder(admin, srv):
    data = os.path.abspath(srv.data_dir)
    flow = """
flows:
  default:
    - task: docker
      in:
        image: %s
        forcePull: false
        cmd: |
          if test -e "%s/accord.db" || test -e "%s"; then echo DATA-SEEN; else echo DATA-NOT-SEEN; fi
          ls /workspace/.. | sort | tr '\\n' ' '; echo
          id
""" % (IMAGE, data, data)
    pid, status, log = run(admin, flow)
    assert status == "FINISHED", log
    assert "DOCKER: DATA-NOT-SEEN" in log
    assert "DATA-SEEN" not in log.replace("DATA-NOT-SEEN", "")
    assert "accord.db" not in log
    assert "uid=0(" not in log and "uid=0 " not in log  # never root in the container


@pytest.mark.parametrize("in_, message", [
    ("{forcePull: false}", "mandatory parameter 'image'"),
    ("{image: '--privileged', forcePull: false}", "'image' must be an image name"),
    ("{image: x, envFile: ../../accord.db, forcePull: false}", "'envFile' must be a path inside"),
    ("{image: x, envFile: missing.env, forcePull: false}", "'envFile' file not found: missing.env"),
    ("{image: x, hosts: ['--privileged'], forcePull: false}", "'hosts' entry 0"),
    ("{image: x, env: {'A B': 1}, forcePull: false}", "'A B' is not a variable name"),
])
def test_bad_parameters_fail_clearly(admin, in_, message):
    flow = """
flows:
  default:
    - task: docker
      in: %s
""" % in_
    pid, status, log = run(admin, flow)
    assert status == "FAILED", log
    assert message in log, log


def test_an_env_file_link_out_of_the_working_directory_is_refused(admin):
    flow = """
flows:
  default:
    - script: python
      body: |
        import os
        os.symlink("/etc/passwd", "link.env")
    - task: docker
      in: {image: %s, forcePull: false, envFile: link.env, cmd: env}
""" % IMAGE
    pid, status, log = run(admin, flow)
    assert status == "FAILED", log
    assert "root:x:" not in log
    assert "outside the working directory" in log or "link" in log, log


def test_no_engine_fails_clearly(fresh_server):
    s = fresh_server(args=["--docker-command", "accord-no-such-engine --flag"]).start()
    admin = Client(s.url, auth="Bearer " + ADMIN_KEY)
    flow = """
flows:
  default:
    - task: docker
      in: {image: busybox, cmd: "echo hi"}
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid, timeout=60)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    assert "the container engine 'accord-no-such-engine' is not installed on this server" in log


def test_sensitive_values_are_masked_in_the_container_output(admin):
    flow = """
flows:
  default:
    - set:
        token: "${sensitive('tok-4711-secret')}"
    - task: docker
      in:
        image: %s
        forcePull: false
        debug: true
        env: {TOKEN: "${token}"}
        cmd: echo "token is $TOKEN"
""" % IMAGE
    pid, status, log = run(admin, flow)
    assert status == "FINISHED", log
    assert "DOCKER: token is ******" in log
    assert "tok-4711-secret" not in log
    assert "env: TOKEN" in log  # debug: the command line and the variables' names
    assert " run --rm --name accord-%s-" % pid in log


def accord_run(tmp_path, flow, env):
    d = tmp_path / "flow"
    d.mkdir()
    (d / "concord.yml").write_text(flow)
    from conftest import BIN
    return subprocess.run([BIN, "run", str(d)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **env))


def test_accord_run_runs_the_engine_itself(engine, tmp_path):
    flow = """
flows:
  default:
    - task: docker
      in:
        image: %s
        forcePull: false
        cmd: echo "hello $WHO"; echo "to stderr" >&2
        env: {WHO: local}
        saveOut: true
        saveErr: true
      out: r
    - log: "out=[${r.stdout.trim()}] err=[${r.stderr.trim()}]"
    - task: docker
      in: {image: %s, forcePull: false, cmd: "exit 3"}
""" % (IMAGE, IMAGE)
    p = accord_run(tmp_path, flow, {"ACCORD_DOCKER_COMMAND": " ".join(ENGINE), "ACCORD_DOCKER_NETWORK": "none",
                                    "ACCORD_DOCKER_RUN_OPTIONS": RUN_OPTIONS})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "DOCKER: hello local" in p.stdout
    assert "out=[hello local] err=[to stderr]" in p.stdout
    assert "Docker process finished with exit code 3" in p.stdout + p.stderr


def test_accord_run_without_an_engine_fails_clearly(tmp_path):
    flow = """
flows:
  default:
    - task: docker
      in: {image: busybox, cmd: "echo hi"}
"""
    p = accord_run(tmp_path, flow, {"ACCORD_DOCKER_COMMAND": "accord-no-such-engine"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "the container engine 'accord-no-such-engine' is not installed" in p.stdout + p.stderr
