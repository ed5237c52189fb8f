"""The `ansible` task under the server: Debian's ansible-playbook run through the
external-tool layer inside the runner's confinement, with local-connection host aliases.
Skipped where ansible-core is not installed (scripts/deps installs it).  Plays here (and in
the other Ansible test files) gather no facts unless facts are the subject: gathering costs
0.6–0.85 s of CPU a host and run; test_concord_it_ansible's test_event_processor proves a
play that gathers them (tests/api/concord_it_ansible/README.md)."""
import binascii
import os
import time
import uuid

import pytest
from cryptography.hazmat.primitives import hashes, hmac, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC
from conftest import FINAL, backend_neutral, process_log, start_process, wait_process

pytestmark = pytest.mark.skipif(not os.access("/usr/bin/ansible-playbook", os.X_OK),
                                reason="ansible-core is not installed (scripts/deps)")

neutral = backend_neutral("ansible-playbook and Accord's callbacks in the runner: what it asserts is the run's "
                          "log, attachments, out variables or events as the runner wrote them; the store's part"
                          " (process rows, logs, events, secrets) is proven on PostgreSQL by the tests left "
                          "unmarked here and by test_process_*")



def vault_encrypt(password, name, value):
    """A vars file holding `name: value` encrypted as `ansible-vault encrypt_string` does
    (format 1.1: PBKDF2-SHA256 of the password, 10,000 rounds, gives the AES-256-CTR key, the
    HMAC-SHA256 key and the counter; the salt, the HMAC and the ciphertext in hex, all in hex
    again).  Made here rather than by ansible-vault: each of its starts cost ~0.6 CPU-s of
    Python and Ansible imports (bench/RESULTS.md); the playbook decrypting it proves the
    same, and a wrong password fails its run."""
    salt = os.urandom(32)
    keys = PBKDF2HMAC(hashes.SHA256(), 80, salt, 10000).derive(password.encode())
    padder = padding.PKCS7(128).padder()
    enc = Cipher(algorithms.AES(keys[:32]), modes.CTR(keys[64:])).encryptor()
    ciphertext = enc.update(padder.update(value.encode()) + padder.finalize()) + enc.finalize()
    mac = hmac.HMAC(keys[32:64], hashes.SHA256())
    mac.update(ciphertext)
    text = binascii.hexlify(b"\n".join(binascii.hexlify(x) for x in (salt, mac.finalize(), ciphertext))).decode()
    lines = "".join("\n          " + text[i:i + 80] for i in range(0, len(text), 80))
    return ("%s: !vault |\n          $ANSIBLE_VAULT;1.1;AES256%s\n" % (name, lines)).encode()


def secret(admin, name, **parts):
    """Creates a secret in Default from multipart text parts."""
    files = {"name": (None, name)}
    files.update({k: (None, v) for k, v in parts.items()})
    r = admin.post("/api/v1/org/Default/secret", files=files)
    assert r.status_code == 200, r.text


def run(admin, flow, files=None, timeout=60):
    """Starts a process, waits for its end: (status, log)."""
    pid = start_process(admin, flow, files=files)
    p = wait_process(admin, pid, timeout=timeout)
    return pid, p["status"], process_log(admin, pid)

INVENTORY = """
        inventory:
          web:
            hosts: ["web1", "web2"]
            vars: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}
          db:
            hosts: ["db1"]
            vars: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}
          _meta:
            hostvars:
              web2: {color: blue}
"""

HELLO = b"""
- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "{{ greeting }} from {{ inventory_hostname }} in {{ group_names[0] }} {{ color | default('plain') }}"
      register: said
      tags: [hello]
    - debug:
        msg: "not run: tagged skipped"
      tags: [later]
"""


@neutral
def test_playbook_with_inline_inventory_extra_vars_and_out_vars(admin):
    flow = """
flows:
  default:
    - task: ansible
      in:
        playbook: hello.yml
%s
        extraVars: {greeting: "hello"}
        skipTags: [later]
        outVars: ["said"]
      out: r
    - log: "exit=${r.exitCode} ok=${r.ok} web2=${r.said.web2.msg}"
    - log: "stats ok=${r.ansibleStats.ok} failures=${r.ansibleStats.failures}"
    - log: "leftover=${files.exists('.ansible_run')}"
""" % INVENTORY
    pid, status, log = run(admin, flow, files={"hello.yml": HELLO})
    assert status == "FINISHED", log
    assert "Using a playbook: hello.yml" in log
    assert '"msg": "hello from web1 in web plain"' in log
    assert '"msg": "hello from db1 in db plain"' in log
    assert "PLAY RECAP" in log
    assert "not run: tagged skipped" not in log
    assert "\x1b[" not in log  # no colours
    assert "exit=0 ok=true web2=hello from web2 in web blue" in log
    assert "stats ok=[db1, web1, web2] failures=[]" in log
    assert "leftover=false" in log


@neutral
def test_inventory_file_limit_tags_and_check(admin):
    # a local connection's temporary files must be inside the working directory
    inv = b"[app]\napp1\napp2\n\n[app:vars]\nansible_connection=local\nansible_python_interpreter=/usr/bin/python3\n" \
        b"ansible_remote_tmp={{ playbook_dir }}/.tmp-remote\n"
    play = b"""
- hosts: app
  gather_facts: false
  tasks:
    - copy: {content: "x", dest: "{{ playbook_dir }}/made-by-{{ inventory_hostname }}"}
      tags: [write]
    - debug: {msg: "tag one on {{ inventory_hostname }}"}
      tags: [one]
"""
    flow = """
flows:
  default:
    - task: ansible
      in:
        playbook: p.yml
        inventoryFile: hosts.ini
        limit: app2
        tags: "write,one"
        check: true
        verbose: 1
    - log: "made=${files.exists('made-by-app2')}"
"""
    pid, status, log = run(admin, flow, files={"p.yml": play, "hosts.ini": inv})
    assert status == "FINISHED", log
    assert "Running in the check mode. No changes will be made." in log
    assert "tag one on app2" in log and "tag one on app1" not in log
    assert "made=false" in log  # --check changed nothing


@neutral
def test_syntax_check(admin):
    flow = "flows:\n  default:\n    - task: ansible\n      in:\n        playbook: hello.yml\n%s        syntaxCheck: true\n" % INVENTORY
    pid, status, log = run(admin, flow, files={"hello.yml": HELLO})
    assert status == "FINISHED", log
    assert "playbook: hello.yml" in log
    assert "hello from" not in log


FAILING = b"""
- hosts: all
  gather_facts: false
  tasks:
    - fail: {msg: "db refuses"}
      when: inventory_hostname == 'db1'
"""


def test_failed_playbook_fails_the_step_unless_ignore_errors(admin, new_user):
    base = "flows:\n  default:\n    - task: ansible\n      in:\n        playbook: f.yml\n%s" % INVENTORY
    pid = start_process(admin, base)
    # no playbook uploaded: a clear error, nothing run
    assert wait_process(admin, pid)["status"] == "FAILED"
    assert "ansible: playbook 'f.yml' not found" in process_log(admin, pid)

    pid, status, log = run(admin, base, files={"f.yml": FAILING})
    assert status == "FAILED", log
    assert "db refuses" in log
    assert "Process finished with exit code 2" in log

    flow = base + "        ignoreErrors: true\n        saveRetryFile: true\n      out: r\n" \
        "    - log: \"ok=${r.ok} exit=${r.exitCode} failed=${r.ansibleStats.failures}\"\n"
    pid, status, log = run(admin, flow, files={"f.yml": FAILING})
    assert status == "FINISHED", log
    assert "ok=false exit=2 failed=[db1]" in log
    r = admin.get("/api/v1/process/%s/attachment/f.retry" % pid)
    assert r.status_code == 200, r.text
    assert r.text.strip() == "db1"
    p = admin.get("/api/v2/process/%s" % pid).json()
    assert p["meta"]["ansibleStats"]["failures"] == ["db1"], p
    assert p["meta"]["ansibleStats"]["exitCode"] == 2
    r = admin.get("/api/v1/process/%s/attachment/ansible_stats.json" % pid)
    assert r.status_code == 200 and r.json()["skipped"] == ["web1", "web2"], r.text
    r = admin.get("/api/v1/process/%s/ansible/hosts" % pid, params={"status": "FAILED"})
    assert [h["host"] for h in r.json()["items"]] == ["db1"]
    other = new_user()
    for view in ("hosts", "events"):
        r = other.get("/api/v1/process/%s/ansible/%s" % (pid, view))
        assert r.status_code == 403, r.text


@neutral
def test_private_key_from_a_secret_and_vault_password(admin):
    key = "k" + uuid.uuid4().hex[:8]
    secret(admin, key, type="key_pair", keyType="ed25519")  # RSA-4096 takes seconds under ASan
    vault_pw = "vault-" + uuid.uuid4().hex
    secret(admin, key + "v", type="data", data=vault_pw)
    enc = vault_encrypt(vault_pw, "hidden", "the hidden value")
    play = b"""
- hosts: all
  gather_facts: false
  vars_files: [vaulted.yml]
  tasks:
    - stat: {path: "{{ playbook_dir }}/.ansible_run/private_key"}
      register: k
    - debug: {msg: "key mode {{ k.stat.mode }} user {{ ansible_user | default('none') }}"}
    - debug: {msg: "vault says {{ hidden }}"}
    - debug: {msg: "password {{ lookup('file', playbook_dir + '/.ansible_run/vault_0') }}"}
"""
    flow = """
flows:
  default:
    - task: ansible
      in:
        playbook: p.yml
        inventory:
          one: {hosts: [h1], vars: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}}
        auth:
          privateKey:
            user: deployer
            secret: {org: Default, name: %s}
        vaultPassword: ${crypto.exportAsString('Default', '%sv', null)}
    - log: "after: key=${files.exists('.ansible_run/private_key')} exported=${files.exists('.tmp')}"
""" % (key, key)
    pid, status, log = run(admin, flow, files={"p.yml": play, "vaulted.yml": enc})
    assert status == "FINISHED", log
    assert "key mode 0600 user deployer" in log
    assert "vault says the hidden value" in log
    assert vault_pw not in log
    assert "password ******" in log
    assert "after: key=false" in log


def marker_pids(marker):
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    if marker.encode() in f.read():
                        with open("/proc/%s/stat" % d) as s:
                            if s.read().split(")")[-1].split()[0] != "Z":
                                found.append(int(d))
            except OSError:
                pass
    return found


def wait_for(pred, timeout=120):
    """Polls pred until it holds; timeout only bounds a failure (Ansible runs at nice 5: on a
    machine loaded with other suites its forks may take tens of seconds to start)."""
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def cancel_left(admin, pid):
    """Cancels a process a failed test left running: its sleeping playbook would hold one of
    the shared server's process slots (--workers: the number of CPUs) and the next tests'
    processes would wait ENQUEUED behind it until they time out."""
    if admin.get("/api/v2/process/%s" % pid).json()["status"] not in FINAL:
        admin.delete("/api/v1/process/%s" % pid)


@neutral
@pytest.mark.parametrize("how", ["kill", "processTimeout"])
def test_a_playbook_dies_with_its_process(admin, how):
    marker = "accord-ansible-%s" % uuid.uuid4().hex
    play = ("""
- hosts: all
  gather_facts: false
  tasks:
    - command: python3 -c "import time; time.sleep(600)" %s
""" % marker).encode()
    cfg = "configuration:\n  processTimeout: PT10S\n" if how == "processTimeout" else ""
    flow = cfg + "flows:\n  default:\n    - task: ansible\n      in:\n        playbook: p.yml\n%s" % INVENTORY
    pid = start_process(admin, flow, files={"p.yml": play})
    try:
        dies(admin, pid, how, marker)
    finally:
        cancel_left(admin, pid)


def dies(admin, pid, how, marker):
    seen = []

    def running_or_over():
        """The three marked processes are up, or the process has ended before they were
        (a loaded machine may reach the 10 s timeout first): no use watching longer."""
        if len(marker_pids(marker)) == 3:
            seen.append(True)
            return True
        return admin.get("/api/v2/process/%s" % pid).json()["status"] in FINAL

    wait_for(running_or_over, timeout=60)
    started = bool(seen)
    # a loaded machine may reach the process timeout first; a kill needs them running
    assert started or how == "processTimeout", process_log(admin, pid)
    if how == "kill":
        r = admin.delete("/api/v1/process/%s" % pid)
        assert r.status_code in (200, 204), r.text
    p = wait_process(admin, pid, timeout=60)
    assert p["status"] == ("CANCELLED" if how == "kill" else "TIMED_OUT"), process_log(admin, pid)
    # Ansible runs below the server (nice 5): on a loaded machine the 10 s may end first
    assert "TASK [command]" in process_log(admin, pid) or not started
    assert wait_for(lambda: marker_pids(marker) == []), marker_pids(marker)


def test_ansible_events_per_host_and_task(admin):
    play = b"""
- hosts: all
  gather_facts: false
  tasks:
    - name: say
      debug: {msg: "token {{ token }}"}
    - name: touch
      file: {path: "{{ playbook_dir }}/touched-{{ inventory_hostname }}", state: touch}
      when: inventory_hostname != 'db1'
"""
    flow = """
flows:
  default:
    - set:
        tok: ${crypto.exportAsString('Default', '%s', null)}
    - task: ansible
      in:
        playbook: p.yml
%s
        extraVars: {token: "${tok}"}
""" % ("SECRET_NAME", INVENTORY)
    name = "tok" + uuid.uuid4().hex[:8]
    value = "tok-" + uuid.uuid4().hex
    secret(admin, name, type="data", data=value)
    pid, status, log = run(admin, flow.replace("SECRET_NAME", name), files={"p.yml": play})
    assert status == "FINISHED", log
    assert value not in log and "token ******" in log
    r = admin.get("/api/v1/process/%s/event" % pid, params={"type": "ANSIBLE", "limit": 1000})
    assert r.status_code == 200, r.text
    events = r.json()
    assert events and all(e["eventType"] == "ANSIBLE" for e in events)
    post = {(e["data"]["host"], e["data"]["task"]): e["data"] for e in events if e["data"]["phase"] == "post"}
    pre = [e["data"] for e in events if e["data"]["phase"] == "pre"]
    assert {h for h, _ in post} == {"web1", "web2", "db1"}
    assert post[("web1", "say")]["status"] == "OK"
    assert post[("web1", "touch")]["status"] == "CHANGED"
    assert post[("db1", "touch")]["status"] == "SKIPPED"
    assert post[("web2", "say")]["hostGroup"] == "web"
    assert post[("web2", "say")]["playbook"] == "p.yml"
    assert isinstance(post[("web2", "say")]["duration"], int)
    assert post[("web2", "say")]["isHandler"] is False
    assert len({e["data"]["playbookId"] for e in events}) == 1
    assert post[("web1", "say")]["taskId"] == post[("db1", "say")]["taskId"] != post[("web1", "touch")]["taskId"]
    assert post[("web1", "say")]["playId"] == post[("web1", "touch")]["playId"]
    assert post[("db1", "say")]["result"]["msg"] == "token ******"  # masked in events too
    assert all(e["status"] == "RUNNING" for e in pre) and len(pre) >= 5
    assert value not in r.text
    r = admin.get("/api/v1/process/%s/event" % pid, params={"type": "ELEMENT"})
    assert all(e["eventType"] == "ELEMENT" for e in r.json())

    # Concord's Ansible views of the process
    r = admin.get("/api/v1/process/%s/ansible/events" % pid, params={"host": "db1", "status": "SKIPPED"})
    assert r.status_code == 200, r.text
    assert [(e["data"]["host"], e["data"]["task"]) for e in r.json()] == [("db1", "touch")]
    r = admin.get("/api/v1/process/%s/ansible/events" % pid, params={"hostGroup": "web"})
    assert {e["data"]["host"] for e in r.json()} == {"web1", "web2"}
    r = admin.get("/api/v1/process/%s/ansible/hosts" % pid)
    assert r.status_code == 200, r.text
    body = r.json()
    assert sorted(body["hostGroups"]) == ["db", "web"]
    hosts = {h["host"]: h for h in body["items"]}
    assert hosts["web1"]["status"] == "CHANGED" and hosts["web1"]["hostGroup"] == "web"
    assert hosts["db1"]["status"] == "OK"
    assert all(isinstance(h["duration"], int) for h in body["items"])
    r = admin.get("/api/v1/process/%s/ansible/hosts" % pid, params={"status": "CHANGED", "limit": 1})
    assert len(r.json()["items"]) == 1 and r.json()["items"][0]["status"] == "CHANGED"
    r = admin.get("/api/v1/process/%s/ansible/hosts" % pid, params={"limit": "x"})
    assert r.status_code == 400 and r.json()["ok"] is False


@neutral
def test_group_vars_from_a_secret(admin):
    name = "gv" + uuid.uuid4().hex[:8]
    secret(admin, name, type="data", data="gv_color: green\n", storePassword="Gv-pass-123")
    play = b"""
- hosts: all
  gather_facts: false
  tasks:
    - debug: {msg: "{{ inventory_hostname }} is {{ gv_color | default('uncoloured') }}"}
"""
    flow = """
flows:
  default:
    - task: ansible
      in:
        playbook: plays/p.yml
%s
        groupVars:
          - web: {orgName: Default, secretName: %s, password: "Gv-pass-123"}
    - log: "left: ${files.exists('plays/group_vars')}"
""" % (INVENTORY, name)
    pid, status, log = run(admin, flow, files={"plays/p.yml": play})
    assert status == "FINISHED", log
    assert "web1 is green" in log and "web2 is green" in log
    assert "db1 is uncoloured" in log
    assert "left: false" in log


@neutral
def test_dynamic_inventory_vault_password_file_and_retry(admin):
    inv = b"""#!/usr/bin/python3
import json
print(json.dumps({"dyn": {"hosts": ["d1", "d2"], "vars": {"ansible_connection": "local",
                  "ansible_python_interpreter": "/usr/bin/python3"}}, "_meta": {"hostvars": {}}}))
"""
    vault_pw = "pw-" + uuid.uuid4().hex
    enc = vault_encrypt(vault_pw, "sealed", "opened")
    play = b"""
- hosts: all
  gather_facts: false
  vars_files: [v.yml]
  tasks:
    - debug: {msg: "{{ inventory_hostname }} {{ sealed }}"}
"""
    # p.retry names d2 only: retry: true limits the run to it
    flow = """
flows:
  default:
    - task: ansible
      in:
        playbook: p.yml
        dynamicInventoryFile: inv.py
        vaultPasswordFile: pw.txt
        retry: true
"""
    pid, status, log = run(admin, flow, files={"p.yml": play, "inv.py": inv, "v.yml": enc,
                                               "pw.txt": vault_pw.encode(), "p.retry": b"d2\n"})
    assert status == "FINISHED", log
    assert "d2 opened" in log and "d1 opened" not in log


@neutral
def test_a_playbook_dies_with_its_process_while_a_parallel_http_call_waits(admin):
    """The stop signal must reach the thread that runs the playbook, not the thread of
    the parallel branch's HTTP call, which would end the runner and leave Ansible running."""
    import socket
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers
    marker = "accord-ansible-%s" % uuid.uuid4().hex
    play = ("""
- hosts: all
  gather_facts: false
  tasks:
    - command: python3 -c "import time; time.sleep(600)" %s
""" % marker).encode()
    flow = """
flows:
  default:
    - parallel:
        - task: http
          in: {url: "http://127.0.0.1:%d/never", socketTimeout: 600000, requestTimeout: 600000}
        - task: ansible
          in:
            playbook: p.yml
%s""" % (silent.getsockname()[1], INVENTORY.replace("\n        ", "\n            "))
    pid = None
    try:
        pid = start_process(admin, flow, files={"p.yml": play})
        assert wait_for(lambda: len(marker_pids(marker)) == 3), process_log(admin, pid)
        r = admin.delete("/api/v1/process/%s" % pid)
        assert r.status_code in (200, 204), r.text
        assert wait_process(admin, pid, timeout=60)["status"] == "CANCELLED"
        assert wait_for(lambda: marker_pids(marker) == []), marker_pids(marker)
    finally:
        if pid:
            cancel_left(admin, pid)
        silent.close()


TWO_PLAYS = b"""
- name: first play
  hosts: all
  gather_facts: false
  tasks:
    - name: say
      debug: {msg: "hi"}
    - block:
        - name: inner
          debug: {msg: "inner"}
      rescue:
        - name: rescued
          debug: {msg: "rescued"}
- name: second play
  hosts: web
  gather_facts: false
  tasks:
    - name: fail on web2
      fail: {msg: "web2 refuses"}
      when: inventory_hostname == 'web2'
"""


def test_playbook_start_and_end_events_and_concord_playbook_views(admin, new_user):
    flow = ("flows:\n  default:\n    - task: ansible\n      in:\n        playbook: two.yml\n%s"
            "        ignoreErrors: true\n" % INVENTORY)
    pid, status, log = run(admin, flow, files={"two.yml": TWO_PLAYS})
    assert status == "FINISHED", log
    r = admin.get("/api/v1/process/%s/event" % pid, params={"type": "ANSIBLE_PLAYBOOK_INFO"})
    assert r.status_code == 200, r.text
    [info] = [e["data"] for e in r.json()]
    assert info["playbook"] == "two.yml" and info["uniqueHosts"] == 3
    assert [(p["play"], p["hosts"], [t["task"] for t in p["tasks"]]) for p in info["plays"]] == [
        ("first play", 3, ["say", "inner", "rescued"]), ("second play", 2, ["fail on web2"])]
    assert info["totalWork"] == 3 * 3 + 2 * 1
    r = admin.get("/api/v1/process/%s/event" % pid, params={"type": "ANSIBLE_PLAYBOOK_RESULT"})
    [result] = [e["data"] for e in r.json()]
    assert result["status"] == "FAILED" and result["playbookId"] == info["playbookId"]
    assert isinstance(result["duration"], int)

    # Concord's GET …/ansible/playbooks
    r = admin.get("/api/v1/process/%s/ansible/playbooks" % pid)
    assert r.status_code == 200, r.text
    [pb] = r.json()
    assert pb["id"] == info["playbookId"] and pb["name"] == "two.yml"
    assert pb["status"] == "FAILED" and pb["progress"] == 100
    assert pb["hostsCount"] == 3 and pb["playsCount"] == 2
    assert pb["failedHostsCount"] == 1 and pb["failedTasksCount"] == 1
    assert pb["startedAt"].endswith("Z") and "retryNum" not in pb

    # …/ansible/{playbookId}/plays
    r = admin.get("/api/v1/process/%s/ansible/%s/plays" % (pid, pb["id"]))
    assert r.status_code == 200, r.text
    plays = r.json()
    assert [(p["playName"], p["playOrder"], p["hostCount"], p["taskCount"]) for p in plays] == [
        ("first play", 0, 3, 3), ("second play", 1, 2, 1)]
    assert plays[0]["taskStats"] == {"ok": 6, "failed": 0, "unreachable": 0, "skipped": 0, "running": 0}
    assert plays[0]["finishedTaskCount"] == 6
    assert plays[1]["taskStats"] == {"ok": 0, "failed": 1, "unreachable": 0, "skipped": 1, "running": 0}

    # …/ansible/tasks?playId=
    r = admin.get("/api/v1/process/%s/ansible/tasks" % pid, params={"playId": plays[0]["playId"]})
    assert r.status_code == 200, r.text
    assert [(t["taskName"], t["type"], t["taskOrder"], t["okCount"]) for t in r.json()] == [
        ("say", "TASK", 0, 3), ("inner", "TASK", 1, 3), ("rescued", "TASK", 2, 0)]
    r = admin.get("/api/v1/process/%s/ansible/tasks" % pid, params={"playId": plays[1]["playId"]})
    [t] = r.json()
    assert (t["failedCount"], t["skippedCount"], t["runningCount"]) == (1, 1, 0)

    # …/ansible/stats and the hosts of one playbook run
    r = admin.get("/api/v1/process/%s/ansible/stats" % pid)
    assert r.status_code == 200, r.text
    stats = r.json()
    assert stats["uniqueHosts"] == 3 and sorted(stats["hostGroups"]) == ["db", "web"]
    assert stats["stats"]["FAILED"] == 1 and stats["stats"]["OK"] == 2 and stats["stats"]["RUNNING"] == 0
    r = admin.get("/api/v1/process/%s/ansible/hosts" % pid, params={"playbookId": pb["id"]})
    assert len(r.json()["items"]) == 3
    r = admin.get("/api/v1/process/%s/ansible/hosts" % pid, params={"playbookId": str(uuid.uuid4())})
    assert r.json()["items"] == []

    # bad ids, other users
    for path in ("ansible/tasks", "ansible/tasks?playId=x", "ansible/not-a-uuid/plays"):
        r = admin.get("/api/v1/process/%s/%s" % (pid, path))
        assert r.status_code == 400 and r.json()["ok"] is False, (path, r.text)
    r = admin.get("/api/v1/process/%s/ansible/%s/plays" % (pid, uuid.uuid4()))
    assert r.status_code == 200 and r.json() == []
    other = new_user()
    for path in ("ansible/playbooks", "ansible/stats", "ansible/%s/plays" % pb["id"],
                 "ansible/tasks?playId=%s" % plays[0]["playId"]):
        r = other.get("/api/v1/process/%s/%s" % (pid, path))
        assert r.status_code == 403, (path, r.text)
    r = admin.get("/api/v1/process/%s/ansible/playbooks" % uuid.uuid4())
    assert r.status_code == 404


def test_no_ansible_run_gives_empty_views(admin):
    pid, status, log = run(admin, "flows:\n  default:\n    - log: nothing\n")
    assert status == "FINISHED", log
    assert admin.get("/api/v1/process/%s/ansible/playbooks" % pid).json() == []
    assert admin.get("/api/v1/process/%s/ansible/stats" % pid).json() == {
        "uniqueHosts": 0, "stats": {}, "hostGroups": []}


def test_playbook_views_are_live_while_it_runs(admin):
    marker = "accord-ansible-live-%s" % uuid.uuid4().hex
    play = ("""
- name: slow
  hosts: all
  gather_facts: false
  tasks:
    - name: quick
      debug: {msg: "quick"}
    - name: wait
      command: python3 -c "import time; time.sleep(600)" %s
""" % marker).encode()
    flow = "flows:\n  default:\n    - task: ansible\n      in:\n        playbook: p.yml\n%s" % INVENTORY
    pid = start_process(admin, flow, files={"p.yml": play})
    try:
        live_views(admin, pid, marker)
    finally:
        cancel_left(admin, pid)


def live_views(admin, pid, marker):
    assert wait_for(lambda: len(marker_pids(marker)) == 3), process_log(admin, pid)
    # the events reach the store in batches: wait for them, not for a time
    def seen():
        pbs = admin.get("/api/v1/process/%s/ansible/playbooks" % pid).json()
        plays = admin.get("/api/v1/process/%s/ansible/%s/plays" % (pid, pbs[0]["id"])).json() if pbs else []
        return pbs, plays[0]["taskStats"] if plays else {}
    assert wait_for(lambda: seen()[1].get("running") == 3), seen()
    [pb], stats = seen()
    assert pb["status"] == "RUNNING" and pb["progress"] == 50, pb  # quick done on 3 hosts of 6 task runs
    assert stats["ok"] == 3, stats
    r = admin.delete("/api/v1/process/%s" % pid)
    assert r.status_code in (200, 204), r.text
    assert wait_process(admin, pid, timeout=60)["status"] == "CANCELLED"
    assert wait_for(lambda: marker_pids(marker) == []), marker_pids(marker)


UNDECODABLE = b"""
- hosts: web1
  gather_facts: false
  tasks:
    - name: undecodable
      ansible.builtin.shell: printf 'A\\377B'
"""


def test_a_result_python_could_not_decode_is_still_recorded(admin):
    """A command's output byte that is not UTF-8 reaches the callback as a lone surrogate
    (Ansible decodes it with surrogateescape), which no JSON parser takes: the callback
    records it as '?' rather than losing the event."""
    flow = "flows:\n  default:\n    - task: ansible\n      in:\n        playbook: p.yml\n" + INVENTORY
    pid, status, log = run(admin, flow, files={"p.yml": UNDECODABLE})
    assert status == "FINISHED", log
    events = admin.get("/api/v1/process/%s/ansible/events" % pid, params={"host": "web1", "status": "OK"}).json()
    out = [e["data"]["result"]["stdout"] for e in events if e["data"]["task"] == "undecodable"]
    assert out == ["A?B"], events


NICE_PLAY = b"""
- hosts: all
  gather_facts: false
  tasks:
    - debug:
        msg: "controller nice {{ lookup('pipe', 'nice') }}"
      run_once: true
    - command: nice
      register: n
    - debug:
        msg: "host nice {{ n.stdout }}"
"""


@neutral
def test_the_playbook_runs_below_the_server(admin):
    """Programs a task runs (ansible-playbook and its forks) are lowered to nice 5
    (runner/tool.c): a playbook's forks take the CPU the server and other processes leave."""
    flow = "flows:\n  default:\n    - task: ansible\n      in:\n        playbook: nice.yml\n%s" % INVENTORY
    pid, status, log = run(admin, flow, files={"nice.yml": NICE_PLAY})
    assert status == "FINISHED", log
    assert "controller nice 5" in log and log.count("host nice 5") == 3, log
    own = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[16])
    assert own < 5  # the test itself (and the server it started) run above it
