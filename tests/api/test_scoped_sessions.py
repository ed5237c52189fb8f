"""A process started with a scoped API key is held to the key's scopes (docs/security.md "Scoped
API keys", "Process sessions"): its session token on the API, the server tasks acting as its
initiator (crypto, concordSecrets, jsonStore, inventory, concord, apiKey), its children and
handlers, never more than the key.  A flow that tries to exceed the key fails or is
refused; the same flow started with a key that has the scope (or none) gets through."""
import pytest

from conftest import process_log, start_process, unique, wait_process
from proc_util import wait_for
from test_scoped_keys import key_for, world  # noqa: F401 (a fixture)

SECRET_FLOW = """
flows:
  default:
    - log: "value=${crypto.exportAsString('%s', '%s', null)}"
"""

SESSION_FLOW = """
flows:
  default:
    - task: http
      in:
        url: "${server}/api/v1/org/${org}/secret"
        headers:
          X-Concord-SessionToken: "${processInfo.sessionToken}"
        response: json
        ignoreErrors: true
      out: listed
    - log: "code=${listed.statusCode}"
"""

FORK_FLOW = """
flows:
  default:
    - task: concord
      in:
        action: fork
        entryPoint: child
        sync: true
        ignoreFailures: true
      out: forked
    - log: "forked"
  child:
    - log: "value=${crypto.exportAsString('%s', '%s', null)}"
"""


@pytest.fixture
def w(world):
    """test_scoped_keys.py's world with a secret of the user in its org."""
    world.secret = unique("s")
    files = {"name": (None, world.secret), "type": (None, "data"), "data": (None, "hush-%s" % world.secret)}
    r = world.user.post("/api/v1/org/%s/secret" % world.org, files=files)
    assert r.status_code == 200, r.text
    return world


def run(w, client, flow, **parts):
    pid = start_process(client, flow, parts=dict({"org": w.org, "project": w.proj}, **parts))
    return pid, wait_process(w.user, pid, timeout=60), process_log(w.user, pid)


def test_a_flow_cannot_read_secrets_past_its_key(admin, w):
    narrow, _ = key_for(admin, w.user, scopes=["process:start"])
    pid, p, log = run(w, narrow, SECRET_FLOW % (w.org, w.secret))
    assert p["status"] == "FAILED", log
    assert "secret:read" in log and "scoped" in log, log
    # The same flow with a key that has the scope, and with one without scopes, reads it.
    wide, _ = key_for(admin, w.user, scopes=["process:start", "secret:read"])
    for k in (wide, w.user):
        pid, p, log = run(w, k, SECRET_FLOW % (w.org, w.secret))
        assert p["status"] == "FINISHED", log


def test_the_session_token_is_held_to_the_key(admin, w, server):
    narrow, _ = key_for(admin, w.user, scopes=["process:start"])
    parts = {"arguments.server": server.url, "arguments.org": w.org}
    _, p, log = run(w, narrow, SESSION_FLOW, **parts)
    assert p["status"] == "FINISHED", log
    assert "code=403" in log, log
    wide, _ = key_for(admin, w.user, scopes=["process:start", "secret:read"])
    _, p, log = run(w, wide, SESSION_FLOW, **parts)
    assert "code=200" in log, log


def test_a_fork_inherits_the_narrowing(admin, w):
    narrow, _ = key_for(admin, w.user, scopes=["process:start"])
    pid, p, log = run(w, narrow, FORK_FLOW % (w.org, w.secret))
    assert p["status"] == "FINISHED", log
    kids = w.user.get("/api/v1/process/%s/subprocess" % pid).json()
    assert len(kids) == 1, kids
    child = wait_process(w.user, kids[0]["instanceId"], timeout=60)
    assert child["status"] == "FAILED", process_log(w.user, kids[0]["instanceId"])
    wait_for(lambda: "secret:read" in process_log(w.user, kids[0]["instanceId"]))


HANDLER_FLOW = """
flows:
  default:
    - throw: "boom"
  onFailure:
    - log: "value=${crypto.exportAsString('%s', '%s', null)}"
"""


def test_a_handler_inherits_the_narrowing(admin, w):
    narrow, _ = key_for(admin, w.user, scopes=["process:start"])
    pid, p, log = run(w, narrow, HANDLER_FLOW % (w.org, w.secret))
    assert p["status"] == "FAILED", log
    kids = wait_for(lambda: w.user.get("/api/v1/process/%s/subprocess" % pid).json(), timeout=60)
    # the handler fails too, so Concord's watchdog starts it again (up to three tries,
    # test_process_timeouts): the first one is the one this test looks at
    assert all(k["kind"] == "FAILURE_HANDLER" for k in kids), kids
    first = min(kids, key=lambda k: k["createdAt"])["instanceId"]
    handler = wait_process(w.user, first, timeout=60)
    assert handler["status"] == "FAILED", process_log(w.user, first)
    wait_for(lambda: "secret:read" in process_log(w.user, first))


STORE_FLOW = """
flows:
  default:
    - log: "exists=${jsonStore.isStoreExists('%(store)s')}"
    - "${jsonStore.put('%(store)s', 'item', {'x': 1})}"
    - log: "written"
"""


def test_json_store_reads_and_writes_follow_the_key(admin, w):
    store = unique("js")
    r = w.user.post("/api/v1/org/%s/jsonstore" % w.org, json={"name": store})
    assert r.status_code == 200, r.text
    reader, _ = key_for(admin, w.user, scopes=["process:start", "jsonstore:read"])
    _, p, log = run(w, reader, STORE_FLOW % {"store": store})
    assert p["status"] == "FAILED", log
    assert "exists=true" in log and "jsonstore:write" in log and "written" not in log, log
    writer, _ = key_for(admin, w.user, scopes=["process:start", "jsonstore:*"])
    _, p, log = run(w, writer, STORE_FLOW % {"store": store})
    assert p["status"] == "FINISHED" and "written" in log, log


START_FLOW = """
flows:
  default:
    - task: concord
      in:
        action: start
        org: %(org)s
        project: %(project)s
        payload: child
        sync: true
      out: started
    - log: "started"
"""


def test_the_concord_task_starts_only_within_the_key(admin, w):
    child = {"child/concord.yml": b"flows:\n  default:\n    - log: hi\n"}
    narrow, _ = key_for(admin, w.user, scopes=["process:start@%s/%s" % (w.org, w.proj)])
    for target, ok in ((w.other, False), (w.proj, True)):
        pid = start_process(narrow, START_FLOW % {"org": w.org, "project": target},
                            parts={"org": w.org, "project": w.proj}, files=child)
        p = wait_process(w.user, pid, timeout=60)
        log = process_log(w.user, pid)
        if ok:
            assert p["status"] == "FINISHED" and "started" in log, log
        else:
            assert p["status"] == "FAILED" and "does not reach" in log and "started" not in log, log
