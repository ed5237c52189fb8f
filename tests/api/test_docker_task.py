"""The `docker` task under the server: the server (not the runner) runs the container
engine's CLI, with the process's working directory at /workspace and nothing else of the
host.  This machine has no Docker engine; podman (scripts/deps) runs as root with runc and
cgroupfs, on an image imported from Debian's busybox-static (registries are out of reach).
Skipped, saying why, where no engine can run a container; the task's own refusal (no
engine) is tested everywhere."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest
from conftest import ADMIN_KEY, BIN, Client, Server, backend_neutral, process_log, start_process, wait_process

neutral = backend_neutral("the container engine run for the docker task, and accord run: the database takes no "
                          "part; test_image_cmd_env_workspace_files_and_saved_stdout runs the task end to end "
                          "on both backends")

ENGINE = ["podman", "--runtime", "runc", "--cgroup-manager=cgroupfs"]
# One image per run of this module: the SQLite and PostgreSQL suites run it side by side
# on one engine, and each removes its own image when it ends.
IMAGE = "localhost/accord-docker-task-test-%d" % os.getpid()
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


def flow(*steps, arguments=None, timeout=None):
    """A concord.yml of steps (YAML text each); JSON is YAML, so parameters go as JSON."""
    text = "flows:\n  default:\n" + "".join(steps)
    cfg = {}
    if arguments:
        cfg["arguments"] = arguments
    if timeout:
        cfg["processTimeout"] = timeout
    return text + ("configuration: %s\n" % json.dumps(cfg) if cfg else "")


def docker(out=None, **params):
    """A docker step on the test image (no pull: registries are out of reach)."""
    params = dict({"image": IMAGE, "forcePull": False}, **params)
    return "    - task: docker\n      in: %s\n%s" % (json.dumps(params), "      out: %s\n" % out if out else "")


def log(msg):
    return "    - log: %s\n" % json.dumps(msg)


def test_image_cmd_env_workspace_files_and_saved_stdout(admin):
    cmd = 'cat input.txt\necho "$GREETING from $PWD"\necho "written by the container" > from-container.txt\n'
    f = flow(docker(out="result", cmd=cmd, env={"GREETING": "Hello, ${name}"}, saveOut=True),
             log("saved=[${result.stdout.trim()}] ok=${result.ok}"),
             log("file=${resource.asString('from-container.txt').trim()}"),
             arguments={"name": "concord"})
    pid, status, text = run(admin, f, files={"input.txt": b"the input file\n"})
    assert status == "FINISHED", text
    assert "DOCKER: the input file" in text
    assert "DOCKER: Hello, concord from /workspace" in text
    assert "saved=[the input file\nHello, concord from /workspace] ok=true" in text
    assert "file=written by the container" in text


@neutral
def test_env_file_hosts_stderr_and_redirect(admin):
    f = flow(docker(out="r1", envFile="vars.env", hosts=["db.example:10.0.0.3"], saveErr=True, logErr=False,
                    cmd='echo "$FROM_FILE"; grep db.example /etc/hosts; echo "to stderr" >&2'),
             log("stderr=[${r1.stderr.trim()}] stdoutNull=${r1.stdout == null}"),
             docker(out="r2", cmd='echo "err merged" >&2', redirectErrorStream=True, saveOut=True),
             log("merged=[${r2.stdout.trim()}]"))
    pid, status, text = run(admin, f, files={"vars.env": b"# a comment\nFROM_FILE=from the env file\nHOME\n"})
    assert status == "FINISHED", text
    assert "DOCKER: from the env file" in text
    assert "10.0.0.3" in text and "db.example" in text
    assert "DOCKER: to stderr" not in text  # logErr: false
    assert "stderr=[to stderr] stdoutNull=true" in text
    assert "merged=[err merged]" in text


@neutral
def test_failing_command_fails_the_step_with_its_exit_code(admin):
    pid, status, text = run(admin, flow(docker(cmd="echo before; exit 7"), log("not reached")))
    assert status == "FAILED", text
    assert "DOCKER: before" in text
    assert "Docker process finished with exit code 7" in text
    assert "not reached" not in text


def containers_of(pid):
    out = subprocess.run(ENGINE + ["ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True).stdout
    return [n for n in out.split() if pid in n]


@neutral
@pytest.mark.parametrize("how", ["kill", "processTimeout"])
def test_a_stop_kills_the_container(admin, how):
    pid = start_process(admin, flow(docker(cmd="echo started; sleep 600"),
                                    timeout="PT8S" if how == "processTimeout" else None))
    deadline = time.time() + 120
    while "DOCKER: started" not in process_log(admin, pid):
        assert time.time() < deadline, process_log(admin, pid)
        time.sleep(0.2)
    assert containers_of(pid), "the container should be running"
    if how == "kill":
        r = admin.delete("/api/v1/process/%s" % pid)
        assert r.status_code in (200, 204), r.text
    p = wait_process(admin, pid, timeout=120)
    assert p["status"] == ("CANCELLED" if how == "kill" else "TIMED_OUT"), process_log(admin, pid)
    deadline = time.time() + 60
    while containers_of(pid):
        assert time.time() < deadline, "container of %s still there: %s" % (pid, containers_of(pid))
        time.sleep(0.2)


@neutral
def test_the_container_cannot_see_the_server_data_folder(admin, srv):
    data = os.path.abspath(srv.data_dir)
    cmd = ('if test -e "%s/accord.db" || test -e "%s"; then echo DATA-SEEN; else echo DATA-NOT-SEEN; fi\n'
           "ls /workspace/.. | tr '\\n' ' '; echo\nid\n" % (data, data))
    pid, status, text = run(admin, flow(docker(cmd=cmd)))
    assert status == "FINISHED", text
    assert "DOCKER: DATA-NOT-SEEN" in text
    assert "DATA-SEEN" not in text.replace("DATA-NOT-SEEN", "")
    assert "accord.db" not in text
    assert "uid=0(" not in text and "uid=0 " not in text  # never root in the container


@neutral
@pytest.mark.parametrize("params, message", [
    ({"image": None}, "mandatory parameter 'image'"),
    ({"image": "--privileged"}, "'image' must be an image reference"),
    ({"image": "docker-archive:/etc/shadow"}, "'image' must be an image reference"),
    ({"envFile": "../../accord.db"}, "'envFile' must be a path inside"),
    ({"envFile": "missing.env"}, "'envFile' file not found: missing.env"),
    ({"hosts": ["--privileged"]}, "'hosts' entry 0"),
    ({"env": {"A B": 1}}, "'A B' is not a variable name"),
    ({"pullRetryCount": -1}, "'pullRetryCount' must be between 0 and 100"),
])
def test_bad_parameters_fail_clearly(admin, params, message):
    pid, status, text = run(admin, flow(docker(**params)))
    assert status == "FAILED", text
    assert message in text, text


@neutral
def test_an_env_file_link_out_of_the_working_directory_is_refused(admin):
    f = flow("    - script: python\n      body: |\n        import os\n        os.symlink('/etc/passwd', 'link.env')\n",
             docker(envFile="link.env", cmd="env"))
    pid, status, text = run(admin, f)
    assert status == "FAILED", text
    assert "root:x:" not in text
    assert "outside the working directory" in text, text


@neutral
def test_no_engine_fails_clearly(fresh_server):
    s = fresh_server(args=["--docker-command", "accord-no-such-engine --flag"]).start()
    admin = Client(s.url, auth="Bearer " + ADMIN_KEY)
    pid, status, text = run(admin, flow(docker(cmd="echo hi")))
    assert status == "FAILED", text
    assert "the container engine 'accord-no-such-engine' is not installed on this server" in text


@neutral
def test_sensitive_values_are_masked_in_the_container_output(admin):
    f = flow("    - set:\n        token: \"${sensitive('tok-4711-secret')}\"\n",
             docker(debug=True, env={"TOKEN": "${token}"}, cmd='echo "token is $TOKEN"'))
    pid, status, text = run(admin, f)
    assert status == "FINISHED", text
    assert "DOCKER: token is ******" in text
    assert "tok-4711-secret" not in text
    assert "env: TOKEN" in text  # debug: the command line and the variables' names
    assert " run --rm --name accord-%s-" % pid in text


def accord_run(tmp_path, text, env):
    d = tmp_path / "flow"
    d.mkdir()
    (d / "concord.yml").write_text(text)
    return subprocess.run([BIN, "run", str(d)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **env))


@neutral
def test_accord_run_runs_the_engine_itself(engine, tmp_path):
    f = flow(docker(out="r", cmd='echo "hello $WHO"; echo "to stderr" >&2', env={"WHO": "local"},
                    saveOut=True, saveErr=True),
             log("out=[${r.stdout.trim()}] err=[${r.stderr.trim()}]"),
             docker(cmd="exit 3"))
    p = accord_run(tmp_path, f, {"ACCORD_DOCKER_COMMAND": " ".join(ENGINE), "ACCORD_DOCKER_NETWORK": "none",
                                 "ACCORD_DOCKER_RUN_OPTIONS": RUN_OPTIONS})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "DOCKER: hello local" in p.stdout
    assert "out=[hello local] err=[to stderr]" in p.stdout
    assert "Docker process finished with exit code 3" in p.stdout + p.stderr


@neutral
def test_accord_run_without_an_engine_fails_clearly(tmp_path):
    p = accord_run(tmp_path, flow(docker(cmd="echo hi")), {"ACCORD_DOCKER_COMMAND": "accord-no-such-engine"})
    assert p.returncode == 1, p.stdout + p.stderr
    assert "the container engine 'accord-no-such-engine' is not installed" in p.stdout + p.stderr


@neutral
def test_a_pull_that_keeps_failing_fails_the_step(admin):
    # forcePull (the default): the engine cannot reach the image's registry from here
    pid, status, text = run(admin, flow(docker(forcePull=True, pullRetryCount=1, pullRetryInterval=10,
                                               cmd="echo not run")))
    assert status == "FAILED", text
    assert "docker: pulling the image failed with exit code" in text and "(2 attempts)" in text, text
    assert "DOCKER: not run" not in text
