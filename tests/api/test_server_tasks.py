"""Server-backed tasks (issue 9 part 5): `kv` and `crypto` answered by the supervisor as
the process's initiator, and sensitive values printed as ****** by the runner."""
import json

import pytest

from conftest import process_log, start_process, unique, wait_process
from proc_util import make_org, make_project, make_team

SECRET_API = "/api/v1/org/%s/secret"


def create_secret(client, org, **parts):
    files = {k: (None, v) for k, v in parts.items()}
    r = client.post(SECRET_API % org, files=files)
    assert r.status_code == 200, r.text
    return r.json()


@pytest.fixture
def setup(admin, new_user):
    """An org with two projects; a member who may run processes in both."""
    org, _ = make_org(admin)
    pa, pa_id = make_project(admin, org, rawPayloadMode="EVERYONE")
    pb, pb_id = make_project(admin, org, rawPayloadMode="EVERYONE")
    user = new_user()
    make_team(admin, org, [(user, "MEMBER")], project=pa, level="WRITER")
    r = admin.post("/api/v1/org/%s/project/%s/access" % (org, pb), json={"teamName": None, "level": "WRITER"})
    return {"org": org, "pa": pa, "pb": pb, "pa_id": pa_id, "user": user}


def run(client, org, project, flow, expect="FINISHED"):
    parts = {"org": org}
    if project:
        parts["project"] = project
    pid = start_process(client, flow, parts=parts)
    p = wait_process(client, pid)
    log = process_log(client, pid)
    assert p["status"] == expect, log
    return pid, log


def all_events(client, pid):
    r = client.get("/api/v1/process/%s/event" % pid, params={"limit": 10000, "includeAll": "true"})
    assert r.status_code == 200, r.text
    return json.dumps(r.json())


# ---- kv -------------------------------------------------------------------------------------

KV_FLOW = """
flows:
  default:
    - ${kv.putString("greeting", "hello")}
    - log: "s=${kv.getString('greeting')}"
    - ${kv.putLong("n", 40)}
    - expr: ${kv.inc("n")}
      out: a
    - expr: ${kv.incLong("n")}
      out: b
    - log: "n=${kv.getLong('n')} a=${a} b=${b} fresh=${kv.inc('seq')}"
    - log: "missing=${kv.getString('nothing') == null}"
    - ${kv.remove("greeting")}
    - log: "removed=${kv.getString('greeting') == null}"
    - task: kv
      in:
        action: putString
        key: step
        value: "via step"
    - log: "step=${kv.getString('step')}"
"""


def test_kv_round_trip(admin):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    _, log = run(admin, org, proj, KV_FLOW)
    assert "s=hello" in log
    assert "n=42 a=41 b=42 fresh=1" in log
    assert "missing=true" in log
    assert "removed=true" in log
    assert "step=via step" in log


def test_kv_projects_are_isolated(admin):
    org, _ = make_org(admin)
    pa, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    pb, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    run(admin, org, pa, """
flows:
  default:
    - ${kv.putString("shared", "from A")}
""")
    _, log = run(admin, org, pb, """
flows:
  default:
    - log: "B sees ${kv.getString('shared') == null}"
    - ${kv.putString("shared", "from B")}
""")
    assert "B sees true" in log
    _, log = run(admin, org, pa, """
flows:
  default:
    - log: "A sees ${kv.getString('shared')}"
""")
    assert "A sees from A" in log


def test_kv_errors(admin):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    _, log = run(admin, org, proj, """
flows:
  default:
    - ${kv.putString("s", "text")}
    - ${kv.inc("s")}
""", expect="FAILED")
    assert "a string value cannot be incremented" in log
    _, log = run(admin, org, proj, """
flows:
  default:
    - ${kv.putString("%s", "v")}
""" % ("k" * 1100), expect="FAILED")
    assert "the key is longer than 1024 bytes" in log


def test_kv_needs_a_project(admin):
    _, log = run(admin, "Default", None, """
flows:
  default:
    - ${kv.putString("a", "b")}
""", expect="FAILED")
    assert "the process has no project" in log


# ---- crypto ---------------------------------------------------------------------------------

def assert_masked(client, pid, log, value, shown=True):
    assert value not in log
    assert value not in all_events(client, pid)
    assert ("******" in log) == shown


def test_export_as_string_is_masked(setup, admin):
    s = setup
    value = "s3cr3t-" + unique("v")
    create_secret(admin, s["org"], name="pub", type="data", data=value, visibility="PUBLIC")
    pid, log = run(s["user"], s["org"], s["pa"], """
configuration:
  events:
    recordTaskInVars: true
    recordTaskOutVars: true
flows:
  default:
    - expr: ${crypto.exportAsString('%s', 'pub', null)}
      out: v
    - log: "value=${v}"
    - log: "length=${v.length()} starts=${v.startsWith('s3cr3t-')}"
    - log: "two-arg=${crypto.exportAsString('pub', null)}"
""" % s["org"])
    assert "value=******" in log
    assert "length=%d starts=true" % len(value) in log
    assert "two-arg=******" in log
    assert_masked(s["user"], pid, log, value)
    # the task's ELEMENT events carry the result, masked
    assert '"******"' in all_events(s["user"], pid)


def test_password_protected_secret(setup, admin):
    s = setup
    value = "guarded-" + unique("v")
    create_secret(admin, s["org"], name="pwsecret", type="data", data=value, visibility="PUBLIC", storePassword="Str0ngPass1")
    pid, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - log: "ok=${crypto.exportAsString('%s', 'pwsecret', 'Str0ngPass1') == '%s'}"
    - log: "password: Str0ngPass1"
""" % (s["org"], value))
    assert "ok=true" in log
    assert "password: ******" in log
    assert_masked(s["user"], pid, log, value)
    pid, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - log: "${crypto.exportAsString('%s', 'pwsecret', 'WrongPass1')}"
""" % s["org"], expect="FAILED")
    assert "Error while fetching a secret 'pwsecret'" in log
    assert value not in log
    _, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - log: "${crypto.exportAsString('%s', 'pwsecret', null)}"
""" % s["org"], expect="FAILED")
    assert "requires a password" in log


def test_project_restricted_secret(setup, admin):
    s = setup
    create_secret(admin, s["org"], name="ponly", type="data", data="for-A-only", visibility="PUBLIC", project=s["pa"])
    _, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - log: "A: ${crypto.exportAsString('%s', 'ponly', null) == 'for-A-only'}"
""" % s["org"])
    assert "A: true" in log
    _, log = run(admin, s["org"], s["pb"], """
flows:
  default:
    - log: "${crypto.exportAsString('%s', 'ponly', null)}"
""" % s["org"], expect="FAILED")
    assert "Secret 'ponly' is restricted to project '%s' and cannot be used by a process of project '%s'" % (
        s["pa"], s["pb"]) in log
    assert "for-A-only" not in log


def test_initiator_without_access_is_refused(setup, admin):
    s = setup
    create_secret(admin, s["org"], name="private", type="data", data="nope-" + unique("v"), visibility="PRIVATE")
    _, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - log: "${crypto.exportAsString('%s', 'private', null)}"
""" % s["org"], expect="FAILED")
    assert "nope-" not in log
    assert "secret" in log.lower() and s["user"].username in log
    # the admin, as initiator, may
    _, log = run(admin, s["org"], s["pa"], """
flows:
  default:
    - log: "len=${crypto.exportAsString('%s', 'private', null).length()}"
""" % s["org"])
    assert "len=17" in log


def test_encrypt_decrypt_round_trip(setup, admin):
    s = setup
    pid, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - expr: ${crypto.encryptString('plain-value-xyz')}
      out: enc
    - log: "enc=${enc}"
    - expr: ${crypto.decryptString(enc)}
      out: dec
    - log: "dec=${dec} same=${dec == 'plain-value-xyz'}"
""")
    assert "dec=****** same=true" in log
    enc = log.split("enc=")[1].split()[0]
    assert enc != "plain-value-xyz" and len(enc) > 20
    # another project cannot decrypt it
    _, log = run(admin, s["org"], s["pb"], """
flows:
  default:
    - log: "${crypto.decryptString('%s')}"
""" % enc, expect="FAILED")
    assert "Invalid encrypted value" in log
    _, log = run(admin, "Default", None, """
flows:
  default:
    - log: "${crypto.encryptString('x')}"
""", expect="FAILED")
    assert "the process has no project" in log


def test_export_files_and_credentials(setup, admin):
    s = setup
    create_secret(admin, s["org"], name="creds", type="username_password", username="bob", password="hunter2-pw",
                  visibility="PUBLIC")
    create_secret(admin, s["org"], name="file", type="data", data="file-content-42", visibility="PUBLIC")
    create_secret(admin, s["org"], name="key", type="key_pair", visibility="PUBLIC")
    pid, log = run(s["user"], s["org"], s["pa"], """
configuration:
  events:
    recordTaskOutVars: true
flows:
  default:
    - expr: ${crypto.exportCredentials('%(org)s', 'creds', null)}
      out: c
    - log: "user=${c.username} pw=${c.password} ok=${c.password == 'hunter2-pw'}"
    - expr: ${crypto.exportAsFile('%(org)s', 'file', null)}
      out: f
    - log: "file=${f} content=${resource.asString(f) == 'file-content-42'}"
    - expr: ${crypto.exportAsFile('mydir', '%(org)s', 'file', null)}
      out: f2
    - log: "file2=${f2}"
    - expr: ${crypto.exportKeyAsFile('%(org)s', 'key', null)}
      out: k
    - log: "pub=${k.public} priv=${k.private} pubok=${resource.asString(k.public).startsWith('ssh-rsa')}"
""" % {"org": s["org"]})
    assert "user=bob pw=****** ok=true" in log
    assert "hunter2-pw" not in log and "hunter2-pw" not in all_events(s["user"], pid)

    assert '"password": "******"' in all_events(s["user"], pid)
    assert "content=true" in log
    assert "file=.tmp/file_" in log
    assert "file2=mydir/file_" in log
    assert "pub=.tmp/public_" in log and "priv=.tmp/private_" in log and "pubok=true" in log
    _, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - log: "${crypto.exportAsFile('../out', '%s', 'file', null)}"
""" % s["org"], expect="FAILED")
    assert "not a relative path inside the working directory" in log
    _, log = run(s["user"], s["org"], s["pa"], """
flows:
  default:
    - log: "${crypto.exportAsString('%s', 'creds', null)}"
""" % s["org"], expect="FAILED")
    assert "Invalid secret type: USERNAME_PASSWORD, expected: DATA" in log


def test_masking_survives_suspend_and_resume(setup, admin):
    s = setup
    value = "kept-" + unique("v")
    create_secret(admin, s["org"], name="kept", type="data", data=value, visibility="PUBLIC")
    pid = start_process(s["user"], """
configuration:
  events:
    recordTaskOutVars: true
flows:
  default:
    - expr: ${crypto.exportAsString('%s', 'kept', null)}
      out: v
    - log: "before=${v}"
    - suspend: go
    - log: "after=${v}"
    - log: "method=${vars.get('v')}"
""" % s["org"], parts={"org": s["org"], "project": s["pa"]})
    p = wait_process(s["user"], pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(s["user"], pid)
    r = s["user"].post("/api/v1/process/%s/resume/go" % pid, json={})
    assert r.status_code == 200, r.text
    p = wait_process(s["user"], pid)
    log = process_log(s["user"], pid)
    assert p["status"] == "FINISHED", log
    assert "before=******" in log and "after=******" in log and "method=******" in log
    assert_masked(s["user"], pid, log, value)


def test_kv_inc_is_atomic_across_processes(admin):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    flow = """
flows:
  default:
    - call: bump
      loop:
        items: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
  bump:
    - ${kv.inc('counter')}
"""
    pids = [start_process(admin, flow, parts={"org": org, "project": proj}) for _ in range(4)]
    for pid in pids:
        assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    _, log = run(admin, org, proj, """
flows:
  default:
    - log: "counter=${kv.getLong('counter')}"
""")
    assert "counter=40" in log
