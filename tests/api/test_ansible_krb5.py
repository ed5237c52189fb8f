"""The `ansible` task's `auth.krb5` against a real KDC (Debian's krb5-kdc in a throwaway
realm, tests/api/krb5_kdc.py; the server pointed at its krb5.conf with --krb5-config):
the ticket got with the password from an Accord secret, a wrong password, the credentials
cache inside the working directory and gone after the step, and the ticket renewed while a
playbook outlives its lifetime (Concord's KerberosAuth)."""
import os
import time
import uuid

import pytest
from conftest import ADMIN_KEY, Client, Server, backend_neutral, process_log, start_process, wait_process
from krb5_kdc import Kdc, installed

pytestmark = [
    pytest.mark.skipif(not os.access("/usr/bin/ansible-playbook", os.X_OK),
                       reason="ansible-core is not installed (scripts/deps)"),
    pytest.mark.skipif(not os.access("/usr/bin/kinit", os.X_OK), reason="krb5-user is not installed (scripts/deps)"),
    pytest.mark.skipif(not installed(), reason="krb5-kdc/krb5-admin-server are not installed (scripts/deps)"),
    backend_neutral("kinit and its renewal around ansible-playbook in the runner, against a local KDC; the "
                    "process's log and events are the store's part, proven by test_ansible and test_process_*"),
]

PASSWORD = "krb-pw-" + uuid.uuid4().hex
LIFE = 10  # seconds: the realm's longest ticket, so that a playbook can outlive one (renewed after 5 s)
LOCAL = "{hosts: [h1], vars: {ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}}"


@pytest.fixture(scope="module")
def kdc():
    k = Kdc(max_life="%ds" % LIFE).start()
    yield k
    k.stop()


@pytest.fixture(scope="module")
def realm(kdc):
    principal = kdc.add_principal("deployer", PASSWORD)
    s = Server(args=["--krb5-config", kdc.krb5_conf]).start()
    admin = Client(s.url, ADMIN_KEY)
    r = admin.post("/api/v1/org/Default/secret", files={"name": (None, "krb5pw"), "type": (None, "data"),
                                                        "data": (None, PASSWORD)})
    assert r.status_code == 200, r.text
    yield admin, principal
    s.cleanup()


def start(admin, principal, play, password="${crypto.exportAsString('Default', 'krb5pw', null)}", after=""):
    flow = ("flows:\n  default:\n    - task: ansible\n      in:\n        playbook: p.yml\n"
            "        inventory: {local: %s}\n        auth:\n          krb5: {user: '%s', password: \"%s\"}\n"
            "      error:\n        - log: \"left=${files.exists('.ansible_run')}\"\n        - throw: ${lastError}\n"
            "    - log: \"left=${files.exists('.ansible_run')}\"\n%s" % (LOCAL, principal, password, after))
    return start_process(admin, flow, files={"p.yml": play.encode()})


def run(admin, principal, play, **kw):
    pid = start(admin, principal, play, **kw)
    p = wait_process(admin, pid, timeout=300)
    return pid, p["status"], process_log(admin, pid)


KLIST_PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - command: klist
      register: k
    - debug: {msg: "cache={{ lookup('env', 'KRB5CCNAME') }} workdir={{ lookup('env', 'HOME') }}"}
    - debug: {var: k.stdout_lines}
"""


def test_a_ticket_from_the_password_in_a_secret(realm):
    admin, principal = realm
    pid, status, log = run(admin, principal, KLIST_PLAY)
    assert status == "FINISHED", log
    assert "Default principal: %s" % principal in log
    assert "krbtgt/TEST.REALM@TEST.REALM" in log
    # the cache is in the run's folder inside the working directory, removed after the step
    line = next(x for x in log.splitlines() if "cache=FILE:" in x)
    cache = line.split("cache=FILE:")[1].split()[0]
    workdir = line.split("workdir=")[1].split()[0].rstrip('"')
    assert cache == workdir + "/.ansible_run/krb5cc", line
    assert "left=false" in log
    assert PASSWORD not in log
    r = admin.get("/api/v1/process/%s/event" % pid, params={"includeAll": "true"})
    assert r.status_code == 200 and PASSWORD not in r.text


def test_a_wrong_password_fails_the_step_clearly(realm):
    admin, principal = realm
    wrong = "wrong-" + uuid.uuid4().hex
    pid, status, log = run(admin, principal, KLIST_PLAY, password=wrong)
    assert status == "FAILED", log
    assert "kinit failed for '%s' (exit code 1): kinit: Password incorrect" % principal in log, log
    assert "PLAY [" not in log and "left=false" in log
    assert wrong not in log and PASSWORD not in log


# Waits, on states and never on a clock, until the first ticket (a copy of the cache taken
# at the start) has expired, then checks that the live cache still holds a valid one.
RENEW_PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - shell: cp "${KRB5CCNAME#FILE:}" first.cc && klist
    - shell: |
        n=0
        while klist -s -c FILE:first.cc; do n=$((n+1)); [ $n -lt 600 ] || exit 3; sleep 1; done
        rm -f first.cc
        klist -s && klist
      register: later
    - debug: {msg: "still valid: {{ later.stdout_lines | select('search', 'krbtgt') | list }}"}
"""


def test_a_playbook_that_outlives_the_ticket_keeps_a_valid_one(realm):
    admin, principal = realm
    pid, status, log = run(admin, principal, RENEW_PLAY)
    assert status == "FINISHED", log
    assert "Kerberos ticket for '%s' obtained, valid until " % principal in log
    assert "Kerberos ticket for '%s' renewed, valid until " % principal in log
    assert "still valid: ['" in log and "krbtgt/TEST.REALM@TEST.REALM" in log
    assert PASSWORD not in log and "left=false" in log


def test_an_unreadable_krb5_config_is_refused_at_start(tmp_path):
    s = Server(args=["--krb5-config", str(tmp_path / "missing.conf")])
    with pytest.raises(RuntimeError) as refused:
        s.start(timeout=10)
    s.cleanup()
    assert "--krb5-config" in str(refused.value) and "missing.conf" in str(refused.value), refused.value


OUTLIVE_PLAY = """
- hosts: all
  gather_facts: false
  tasks:
    - shell: |
        cp "${KRB5CCNAME#FILE:}" first.cc
        n=0
        while klist -s -c FILE:first.cc; do n=$((n+1)); [ $n -lt 600 ] || exit 3; sleep 1; done
        rm -f first.cc
"""


def test_a_failed_renewal_is_logged_and_tried_again(realm, kdc):
    """The principal's password changes while the playbook runs: renewing fails with kinit's
    reason, a warning, and is tried again; the playbook itself goes on."""
    admin, _ = realm
    principal = kdc.add_principal("rotated", PASSWORD)
    pid = start(admin, principal, OUTLIVE_PLAY)
    deadline = time.time() + 120
    while "Kerberos ticket for '%s' obtained" % principal not in process_log(admin, pid):
        assert time.time() < deadline, process_log(admin, pid)
        time.sleep(0.2)
    kdc.change_password("rotated", "new-" + uuid.uuid4().hex)
    p = wait_process(admin, pid, timeout=300)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert ("ansible: renewing the Kerberos ticket for '%s' failed: ansible: kinit failed for '%s' (exit code 1): "
            "kinit: Password incorrect" % (principal, principal)) in log, log
    assert "; trying again in " in log
    assert "renewed, valid until" not in log and PASSWORD not in log and "left=false" in log
