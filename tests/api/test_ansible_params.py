"""The `ansible` task's parameters that need more than ansible-playbook itself: `roles`
(cloned with Debian's git from a local HTTP git server, test_git_task's), `virtualenv`,
`auth.krb5` and `dockerImage`.  Skipped where ansible-core is not installed."""
import os
import uuid

import pytest
from conftest import backend_neutral, process_log, start_process, wait_process
from test_git_task import GitHttp, PASSWORD, USER, git, remote  # noqa: F401 (the fixture)

pytestmark = pytest.mark.skipif(not os.access("/usr/bin/ansible-playbook", os.X_OK),
                                reason="ansible-core is not installed (scripts/deps)")

neutral = backend_neutral("ansible-playbook and Accord's callbacks in the runner: what it asserts is the run's "
                          "log, attachments, out variables or events as the runner wrote them; the store's part"
                          " (process rows, logs, events, secrets) is proven on PostgreSQL by the tests left "
                          "unmarked here and by test_process_*")

LOCAL = "{hosts: [h1], vars: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}}"


def run(admin, flow, files=None, timeout=90):
    pid = start_process(admin, flow, files=files)
    p = wait_process(admin, pid, timeout=timeout)
    return pid, p["status"], process_log(admin, pid)


def ansible_flow(params, play="p.yml", after=""):
    return ("flows:\n  default:\n    - task: ansible\n      in:\n        playbook: %s\n"
            "        inventory: {local: %s}\n%s%s" % (play, LOCAL, "".join("        %s\n" % p for p in params), after))


ROLE_PLAY = b"""
- hosts: all
  gather_facts: false
  roles: [greeter]
"""


@pytest.fixture
def role_repo(remote, tmp_path):
    """remote's repository with roles/greeter on master, and a version of it on the branch v2."""
    seed = tmp_path / "roles-seed"
    git("clone", "-q", str(remote.bare), str(seed))
    tasks = seed / "roles" / "greeter" / "tasks"
    tasks.mkdir(parents=True)
    (tasks / "main.yml").write_text("- debug: {msg: 'greeter says one'}\n")
    git("add", ".", cwd=seed)
    git("commit", "-q", "-m", "role", cwd=seed)
    git("checkout", "-q", "-b", "v2", cwd=seed)
    (tasks / "main.yml").write_text("- debug: {msg: 'greeter says two'}\n")
    git("commit", "-q", "-am", "v2", cwd=seed)
    git("push", "-q", "origin", "master", "v2", cwd=seed)
    return remote


@neutral
def test_roles_from_a_git_repository(admin, role_repo):
    auth = "auth: {basic: {username: %s, password: %s}}" % (USER, PASSWORD)
    flow = ansible_flow(["roles:", "  - {src: '%s', name: shared, path: roles, %s}" % (role_repo.url, auth)],
                        after="    - log: \"left=${files.exists('.ansible_run')}\"\n")
    pid, status, log = run(admin, flow, files={"p.yml": ROLE_PLAY})
    assert status == "FINISHED", log
    assert "greeter says one" in log and "left=false" in log
    assert PASSWORD not in log

    flow = ansible_flow(["roles:", "  - {src: '%s', name: shared, path: roles, version: v2, %s}"
                         % (role_repo.url, auth)])
    pid, status, log = run(admin, flow, files={"p.yml": ROLE_PLAY})
    assert status == "FINISHED", log
    assert "greeter says two" in log and "greeter says one" not in log


@neutral
def test_roles_from_the_default_role_src(admin, role_repo):
    """Concord's shortcut: a role without src is cloned from ansibleParams.roleSrc + '/' +
    its name, into the folder named by the name's part after its first '/'."""
    git("clone", "-q", "--bare", str(role_repo.bare), os.path.join(role_repo.root, "my-org", "roles.git"))
    base = role_repo.url.rsplit("/", 1)[0]  # http://127.0.0.1:port, no trailing '/'
    auth = "auth: {basic: {username: %s, password: %s}}" % (USER, PASSWORD)
    flow = ("configuration:\n  arguments:\n    ansibleParams: {roleSrc: '%s'}\n" % base
            + ansible_flow(["roles:", "  - {name: my-org/roles.git, path: roles, version: v2, %s}" % auth]))
    pid, status, log = run(admin, flow, files={"p.yml": ROLE_PLAY})
    assert status == "FINISHED", log
    assert "greeter says two" in log
    assert "fetching the role 'roles.git' from %s/my-org/roles.git" % base in log


@neutral
@pytest.mark.parametrize("role,message", [
    ("{src: 'URL', name: shared, path: nowhere, AUTH}", "The specified role path doesn't exist: nowhere"),
    ("{src: 'URL', name: shared, version: no-such-branch, AUTH}", "GIT finished with exit code"),
    ("{src: 'URL', name: shared}", "GIT finished with exit code 128"),
    ("{src: '/srv/roles.git', name: shared}", "is not an http(s), ssh or git URL"),
    ("{src: 'URL', name: ../up, AUTH}", "bad role name '../up'"),
    ("{src: 'URL'}", "Role 'name' is required"),
    ("{name: my-org/roles.git}", "role 'my-org/roles.git' has no 'src': 'roleSrc' is required in default "
                                 "'ansibleParams'"),
])
def test_bad_roles_fail_clearly(admin, role_repo, role, message):
    role = role.replace("URL", role_repo.url).replace("AUTH", "auth: {basic: {username: %s, password: %s}}"
                                                       % (USER, PASSWORD))
    pid, status, log = run(admin, ansible_flow(["roles: [%s]" % role]), files={"p.yml": ROLE_PLAY})
    assert status == "FAILED", log
    assert message in log and "PLAY [" not in log
    assert PASSWORD not in log


def wheel_index():
    """A pip index (a folder of the working directory, PEP 503's layout) holding one wheel,
    accordpkg 1.0, made here: no package index is reachable from these machines."""
    import io
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("accordpkg.py", "VALUE = 'from the wheel'\n")
        info = "accordpkg-1.0.dist-info/"
        z.writestr(info + "METADATA", "Metadata-Version: 2.1\nName: accordpkg\nVersion: 1.0\n")
        z.writestr(info + "WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        z.writestr(info + "RECORD", "accordpkg.py,,\n%sMETADATA,,\n%sWHEEL,,\n%sRECORD,,\n" % (info, info, info))
    name = "accordpkg-1.0-py3-none-any.whl"
    return {"index/accordpkg/" + name: buf.getvalue(),
            "index/accordpkg/index.html": ('<a href="%s">%s</a>' % (name, name)).encode()}


VENV_PLAY = b"""
- hosts: all
  gather_facts: false
  tasks:
    - debug: {msg: "controller python {{ ansible_playbook_python }}"}
    - debug: {msg: "{{ lookup('pipe', 'python3 -c \\"import accordpkg; print(accordpkg.VALUE)\\"') }}"}
      when: with_package | bool
"""


@neutral
def test_virtualenv_without_packages(admin):
    flow = ansible_flow(["virtualenv: {}", "extraVars: {with_package: false}"],
                        after="    - log: \"left=${files.exists('.ansible_run')}\"\n")
    pid, status, log = run(admin, flow, files={"p.yml": VENV_PLAY})
    assert status == "FINISHED", log
    assert "controller python " in log and ".ansible_run/ve/bin/python3" in log
    assert "left=false" in log


@neutral
def test_virtualenv_installs_packages_from_an_index(admin):
    flow = ansible_flow(["virtualenv: {packages: [accordpkg], indexUrl: 'file://${workDir}/index'}",
                         "extraVars: {with_package: true}"])
    pid, status, log = run(admin, flow, files=dict(wheel_index(), **{"p.yml": VENV_PLAY}))
    assert status == "FINISHED", log
    assert "Successfully installed accordpkg-1.0" in log
    assert '"msg": "from the wheel"' in log


@neutral
def test_virtualenv_package_that_cannot_be_installed_fails_naming_it(admin):
    flow = ansible_flow(["virtualenv: {packages: [accordpkg, nosuchpkg], indexUrl: 'file://${workDir}/index'}"])
    pid, status, log = run(admin, flow, files=dict(wheel_index(), **{"p.yml": VENV_PLAY}))
    assert status == "FAILED", log
    assert "virtualenv: pip could not install accordpkg, nosuchpkg (exit code 1)" in log
    assert "No matching distribution found for nosuchpkg" in log
    assert "PLAY [" not in log


@neutral
@pytest.mark.parametrize("venv,message", [
    ("virtualenv: [a]", "Invalid 'virtualenv' value"),
    ("virtualenv: {packages: ['--index-url=http://x']}", "invalid virtualenv package '--index-url=http://x'"),
    ("virtualenv: {packages: 'a'}", "'packages' must be a list"),
])
def test_bad_virtualenv_fails_clearly(admin, venv, message):
    pid, status, log = run(admin, ansible_flow([venv]), files={"p.yml": VENV_PLAY})
    assert status == "FAILED", log
    assert message in log and "PLAY [" not in log


def secret(admin, name, **parts):
    files = {"name": (None, name)}
    files.update({k: (None, v) for k, v in parts.items()})
    r = admin.post("/api/v1/org/Default/secret", files=files)
    assert r.status_code == 200, r.text


@neutral
@pytest.mark.skipif(not os.access("/usr/bin/kinit", os.X_OK), reason="krb5-user is not installed (scripts/deps)")
def test_krb5_kinit_error_is_surfaced_and_the_password_never_shown(admin):
    """No KDC is reachable here: kinit's own error must fail the step, before Ansible runs,
    with the password in no log line, event or file left behind."""
    name, password = "krb" + uuid.uuid4().hex[:8], "krb-pw-" + uuid.uuid4().hex
    secret(admin, name, type="data", data=password)
    flow = ansible_flow(["auth:", "  krb5: {user: deployer@EXAMPLE.INVALID, "
                         "password: \"${crypto.exportAsString('Default', '%s', null)}\"}" % name])
    flow = flow.replace("    - task: ansible\n", "    - task: ansible\n      error:\n"
                        "        - log: \"left=${files.exists('.ansible_run')}\"\n        - throw: ${lastError}\n", 1)
    pid, status, log = run(admin, flow, files={"p.yml": VENV_PLAY})
    assert status == "FAILED", log
    assert "getting a Kerberos ticket for 'deployer@EXAMPLE.INVALID'" in log
    assert "kinit failed for 'deployer@EXAMPLE.INVALID' (exit code 1): kinit: " in log
    assert "left=false" in log and "PLAY [" not in log
    assert password not in log
    r = admin.get("/api/v1/process/%s/event" % pid, params={"includeAll": "true"})
    assert r.status_code == 200 and password not in r.text


@neutral
@pytest.mark.parametrize("krb5,message", [
    ("{user: u}", "auth.krb5 needs 'user' and 'password'"),
    ("{user: '-X', password: p}", "bad auth.krb5 user '-X'"),
])
def test_bad_krb5_fails_clearly(admin, krb5, message):
    pid, status, log = run(admin, ansible_flow(["auth: {krb5: %s}" % krb5]), files={"p.yml": VENV_PLAY})
    assert status == "FAILED", log
    assert message in log and "PLAY [" not in log


# dockerImage: podman as test_docker_task runs it.  Registries are out of reach and no image
# with Ansible can be built offline, so the image with Ansible here is a busybox root whose
# /usr is the host's, mounted read-only by the server's run options (python3 and
# ansible-core from the host); the plain busybox image has no Ansible.
from test_docker_task import ENGINE, IMAGE, RUN_OPTIONS, engine  # noqa: E402,F401 (the fixture)

ANSIBLE_IMAGE = IMAGE + "-ansible"


@pytest.fixture(scope="module")
def ansible_image(engine):  # noqa: F811
    import shutil
    import subprocess
    import tempfile
    root = tempfile.mkdtemp(prefix="accord-ansible-root-")
    try:
        os.makedirs(os.path.join(root, "bin"))
        os.makedirs(os.path.join(root, "usr"))
        os.makedirs(os.path.join(root, "tmp"))
        shutil.copy("/bin/busybox", os.path.join(root, "bin", "busybox"))
        for a in ("sh", "echo", "cat", "ls", "env"):
            os.symlink("busybox", os.path.join(root, "bin", a))
        for link in ("lib", "lib64"):
            os.symlink("usr/" + link, os.path.join(root, link))
        tar = subprocess.Popen(["tar", "-C", root, "-c", "."], stdout=subprocess.PIPE)
        imp = subprocess.run(ENGINE + ["import", "-", ANSIBLE_IMAGE], stdin=tar.stdout, capture_output=True,
                             timeout=120)
        tar.wait()
        assert imp.returncode == 0, imp.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)
    yield ANSIBLE_IMAGE
    subprocess.run(ENGINE + ["rmi", "-f", ANSIBLE_IMAGE], capture_output=True)


@pytest.fixture(scope="module")
def docker_admin(ansible_image):
    from conftest import ADMIN_KEY, Client, Server
    s = Server(args=["--docker-command", " ".join(ENGINE), "--docker-network", "none",
                     "--docker-run-options", RUN_OPTIONS + " -v /usr:/usr:ro"]).start()
    yield Client(s.url, auth="Bearer " + ADMIN_KEY)
    s.cleanup()


DOCKER_PLAY = b"""
- hosts: all
  gather_facts: false
  tasks:
    - debug: {msg: "in the container: {{ playbook_dir }} {{ greeting }}"}
    - fail: {msg: "h1 refuses"}
      when: fail_it | bool
"""


def test_docker_image_runs_the_playbook_in_a_container(docker_admin, ansible_image):
    flow = ansible_flow(["dockerImage: %s" % ansible_image, "extraVars: {greeting: hello, fail_it: false}",
                         "outVars: [_stats]"],
                        after="      out: r\n    - log: \"ok=${r.ok} stats=${r.ansibleStats.ok} "
                              "left=${files.exists('.ansible_run')}\"\n")
    flow = flow.replace("    - task: ansible\n", "    - task: ansible\n", 1)
    pid, status, log = run(docker_admin, flow, files={"p.yml": DOCKER_PLAY})
    assert status == "FINISHED", log
    assert "in the container: /workspace hello" in log
    assert "ok=true stats=[h1] left=false" in log
    # the events the callback left in the container's run folder, recorded after it
    r = docker_admin.get("/api/v1/process/%s/ansible/playbooks" % pid)
    assert [(p["name"], p["status"], p["hostsCount"]) for p in r.json()] == [("p.yml", "OK", 1)], r.text
    r = docker_admin.get("/api/v1/process/%s/ansible/hosts" % pid)
    assert [(h["host"], h["status"]) for h in r.json()["items"]] == [("h1", "OK")], r.text

    flow = ansible_flow(["dockerImage: %s" % ansible_image, "extraVars: {greeting: hi, fail_it: true}",
                         "ignoreErrors: true"], after="      out: r\n    - log: \"ok=${r.ok} exit=${r.exitCode}\"\n")
    pid, status, log = run(docker_admin, flow, files={"p.yml": DOCKER_PLAY})
    assert status == "FINISHED", log
    assert "h1 refuses" in log and "ok=false exit=2" in log


@neutral
def test_docker_image_without_ansible_fails_saying_so(docker_admin):
    pid, status, log = run(docker_admin, ansible_flow(["dockerImage: %s" % IMAGE]), files={"p.yml": DOCKER_PLAY})
    assert status == "FAILED", log
    assert "the image '%s' has no ansible-playbook" % IMAGE in log


@neutral
def test_docker_image_without_an_engine_fails_clearly(fresh_server):
    from conftest import ADMIN_KEY, Client
    s = fresh_server(args=["--docker-command", "accord-no-such-engine"]).start()
    admin = Client(s.url, auth="Bearer " + ADMIN_KEY)
    pid, status, log = run(admin, ansible_flow(["dockerImage: some/image"]), files={"p.yml": DOCKER_PLAY})
    assert status == "FAILED", log
    assert "the container engine 'accord-no-such-engine' is not installed" in log


LOOKUP_PLAY = b"""
- hosts: all
  gather_facts: false
  tasks:
    - debug: {msg: "with org: {{ lookup('concord_data_secret', 'Default', secret_name, None) }}"}
    - debug: {msg: "without org: {{ lookup('concord_secret', secret_name, None) }}"}
    - debug: {msg: "protected: {{ lookup('concord_data_secret', 'Default', protected_name, 'Lk-pass-123') }}"}
    - debug: {msg: "west hosts: {{ lookup('concord_inventory', inv, 'by-loc', {'location': 'westus'}) | map(attribute='host') | sort | join(',') }}"}
    - debug: {msg: "first: {{ lookup('concord_inventory', inv, 'by-loc result=0', {'location': 'eastus'}) }}"}
    - debug: {msg: "{{ lookup('concord_data_secret', 'Default', 'no-such-secret-' + secret_name, None) }}"}
      ignore_errors: true
"""


def test_concord_lookup_plugins(admin):
    name, value = "lk" + uuid.uuid4().hex[:8], "lookup-value-" + uuid.uuid4().hex
    secret(admin, name, type="data", data=value)
    secret(admin, name + "p", type="data", data="protected-" + value, storePassword="Lk-pass-123")
    inv = "inv-" + name
    r = admin.post("/api/v1/org/Default/jsonstore", json={"name": inv})
    assert r.status_code == 200, r.text
    base = "/api/v1/org/Default/jsonstore/" + inv
    for i, loc in ((1, "eastus"), (2, "westus"), (3, "westus")):
        r = admin.put(base + "/item/h%d" % i, json={"host": "h%d" % i, "location": loc})
        assert r.status_code == 200, r.text
    r = admin.post(base + "/query", json={"name": "by-loc",
                                         "text": "select item_data from inventory_data where item_data @> ?::jsonb"})
    assert r.status_code == 200, r.text
    flow = ansible_flow(["extraVars: {secret_name: %s, protected_name: %sp, inv: %s}" % (name, name, inv)])
    pid, status, log = run(admin, flow, files={"p.yml": LOOKUP_PLAY})
    assert status == "FINISHED", log
    assert "with org: ******" in log and "without org: ******" in log and "protected: ******" in log
    assert value not in log
    assert "west hosts: h2,h3" in log
    assert "'host': 'h1'" in log and "'location': 'eastus'" in log
    assert "not found" in log.lower()  # the missing secret's error, ignored


PUBLIC_KEY_PLAY = b"""
- hosts: all
  gather_facts: false
  tasks:
    - debug: {msg: "with org: {{ lookup('concord_public_key_secret', 'Default', key_name) }}"}
    - debug: {msg: "without org: {{ lookup('concord_public_key_secret', key_name) }}"}
    - debug: {msg: "private: {{ lookup('concord_public_key_secret', private_name) }}"}
      ignore_errors: true
"""


@neutral
def test_concord_public_key_lookup(admin, new_user):
    """concord_public_key_secret gives the key pair's public key (the API's …/public), read
    as the initiator with the crypto task's rules: a PRIVATE key pair of another user is
    refused, for the lookup as for exportKeyAsFile."""
    name = "pk" + uuid.uuid4().hex[:8]
    secret(admin, name, type="key_pair", keyType="ed25519")  # RSA-4096 takes seconds under ASan
    secret(admin, name + "p", type="key_pair", keyType="ed25519", visibility="PRIVATE")
    public = admin.get("/api/v1/org/Default/secret/%s/public" % name).json()["publicKey"].strip()
    private = admin.get("/api/v1/org/Default/secret/%sp/public" % name).json()["publicKey"].strip()
    flow = ansible_flow(["extraVars: {key_name: %s, private_name: %sp}" % (name, name)])
    pid, status, log = run(admin, flow, files={"p.yml": PUBLIC_KEY_PLAY})
    assert status == "FINISHED", log
    assert "with org: %s" % public in log and "without org: %s" % public in log
    assert "private: %s" % private in log  # admin reads every secret
    pid, status, log = run(new_user(), flow, files={"p.yml": PUBLIC_KEY_PLAY})
    assert status == "FINISHED", log
    assert "with org: %s" % public in log and "without org: %s" % public in log
    assert private not in log and "private: " not in log
    assert "necessary access level (READER) to the secret: %sp" % name in log, log  # the refusal, ignored


FILTER_PLAY = b"""
- hosts: all
  gather_facts: false
  tasks:
    - name: plain
      debug: {msg: "nothing to hide here"}
    - name: keyed
      set_fact: {db_password: "hunter2-in-a-fact"}
    - name: by argument
      debug: {msg: "the secret is {{ db_password }}"}
      register: said
"""


@neutral
def test_enable_log_filtering_masks_sensitive_values(admin):
    pid, status, log = run(admin, ansible_flow(["enableLogFiltering: true"]), files={"p.yml": FILTER_PLAY})
    assert status == "FINISHED", log
    assert "Log filter is enabled..." in log
    assert "nothing to hide here" in log
    assert "hunter2-in-a-fact" not in log
    assert "THIS TASK CONTAINS SENSITIVE INFORMATION. ENABLING NO_LOG" in log
    # without the filter the value is printed: the next test's run of the same play shows it


@neutral
def test_enable_outs_vars_false_skips_out_vars(admin):
    flow = ansible_flow(["outVars: [said]", "enableOutsVars: false"],
                        after="      out: r\n    - log: \"has=${r.containsKey('said')} stats=${r.ansibleStats.ok}\"\n")
    pid, status, log = run(admin, flow, files={"p.yml": FILTER_PLAY})
    assert status == "FINISHED", log
    assert "has=false stats=[h1]" in log
    assert "hunter2-in-a-fact" in log and "Log filter is enabled" not in log  # the filter is off by default


@neutral
def test_debug_logs_the_command_line_and_the_environment_names(admin):
    flow = ansible_flow(["debug: true", "extraEnv: {MY_TOKEN: tok-value-4711}", "limit: h1"])
    pid, status, log = run(admin, flow, files={"p.yml": FILTER_PLAY})
    assert status == "FINISHED", log
    assert "ansible: command: ansible-playbook -i " in log and "--limit h1 p.yml" in log
    assert "ansible: environment: " in log and "MY_TOKEN" in log
    assert "tok-value-4711" not in log.split("ansible: environment: ")[1].split("\n")[0]
