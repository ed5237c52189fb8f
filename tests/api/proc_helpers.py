"""Starting a process over HTTP and waiting for it, for the process data tests."""
import time

TERMINAL = ("FINISHED", "FAILED", "CANCELLED", "TIMED_OUT")


def start(client, flow, files=None):
    """POST /api/v1/process with concord.yml = flow (plus extra octet-stream parts);
    returns the instance id."""
    parts = {"concord.yml": ("concord.yml", flow, "application/octet-stream")}
    for name, data in (files or {}).items():
        parts[name] = (name, data, "application/octet-stream")
    r = client.post("/api/v1/process", files=parts)
    assert r.status_code == 200, r.text
    return r.json()["instanceId"]


def status(client, pid):
    r = client.get("/api/v2/process/%s" % pid)
    assert r.status_code == 200, r.text
    return r.json()["status"]


def wait(client, pid, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = status(client, pid)
        if s in TERMINAL:
            return s
        time.sleep(0.05)
    raise AssertionError("process %s did not end: %s" % (pid, status(client, pid)))


def run(client, flow, files=None, want="FINISHED"):
    pid = start(client, flow, files)
    assert wait(client, pid) == want
    return pid
