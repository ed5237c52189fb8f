"""Helpers shared by the process tests: orgs, projects, teams, counting, archives."""
import io
import time
import zipfile

from conftest import unique

HELLO = """
flows:
  default:
    - log: "hello from ${txId}"
"""


def sleeper(seconds):
    return """
flows:
  default:
    - log: "sleeping"
    - task: sleep
      in:
        duration: %d
    - log: "woke up"
""" % seconds


def make_org(admin, **fields):
    name = unique("porg")
    body = {"name": name}
    body.update(fields)
    r = admin.post("/api/v1/org", json=body)
    assert r.status_code == 200, r.text
    return name, r.json()["id"]


def make_project(client, org, **fields):
    body = {"name": unique("proj")}
    body.update(fields)
    r = client.post("/api/v1/org/%s/project" % org, json=body)
    assert r.status_code == 200, r.text
    return body["name"], r.json()["id"]


def make_team(admin, org, members, project=None, level=None):
    """A team with members [(client, role)]; with project, it gets level on it."""
    name = unique("team")
    r = admin.post("/api/v1/org/%s/team" % org, json={"name": name})
    assert r.status_code == 200, r.text
    body = [{"username": c.username, "role": role} for c, role in members]
    r = admin.put("/api/v1/org/%s/team/%s/users" % (org, name), json=body)
    assert r.status_code == 200, r.text
    if project:
        r = admin.post("/api/v1/org/%s/project/%s/access" % (org, project), json={"teamName": name, "level": level})
        assert r.status_code == 200, r.text
    return name


def zip_bytes(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def count_all(admin, **params):
    """How many processes exist (admin view), through the list endpoint."""
    params.setdefault("limit", 1000)
    r = admin.get("/api/v2/process", params=params)
    assert r.status_code == 200, r.text
    return len(r.json())


def status(client, pid, **params):
    r = client.get("/api/v2/process/%s" % pid, params=params)
    assert r.status_code == 200, r.text
    return r.json()


def has_log_endpoint(client, pid):
    r = client.get("/api/v1/process/%s/log" % pid)
    return not (r.status_code == 404 and "no such endpoint" in r.text.lower())


def log_text(client, pid):
    r = client.get("/api/v1/process/%s/log" % pid)
    if r.status_code == 404 and "no such endpoint" in r.text.lower():
        return None
    assert r.status_code in (200, 206), r.text
    return r.text


def wait_for(pred, timeout=20, step=0.05):
    """pred's first true value, looked for every step seconds for the first 3 s, then every
    quarter of a second at least (as conftest.wait_process: what takes longer — cron
    minutes, timeouts — is seen a little later, with fewer requests)."""
    started = time.time()
    deadline = started + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step if time.time() - started < 3 else max(step, 0.25))
    raise AssertionError("condition not met in %ss" % timeout)
