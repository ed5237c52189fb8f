"""GitHub events (issue 26 part 3; docs/api.md "GitHub events", docs/flows.md "GitHub
triggers"): POST /events/github/webhook signed as GitHub signs it (X-Hub-Signature-256,
HMAC-SHA256 of the body with the webhook's secret), deliveries acted on once, `ping`
answered, Concord's event built from a push or pull_request payload and matched against
`github` triggers (version 2) with their defaults (the repository's GitHub org, name and
branch; ignoreEmptyPush), useInitiator, useEventCommitId, files, and a push refreshing the
repositories that follow the pushed branch.

The repositories are local git folders named <org>/<repo> like GitHub's, read over file://;
the payloads have the shape GitHub documents for its webhooks (push, pull_request)."""
import hashlib
import hmac
import json
import os
import shutil
import tempfile
import uuid

import pytest
import requests

import git_servers as gs
from conftest import ADMIN_KEY, Client, process_log, unique, wait_process
from proc_util import wait_for
from test_triggers import Project

SECRET = "gh-webhook-secret-" + "5e1f0a"
HOOK = "/events/github/webhook"


def flow(message, trigger):
    return """
flows:
  default:
    - log: "default"
  onEvent:
    - log: "%s ${event.type} ${event.sender} ${event.branch} ${event.commitId} ${event.githubOrg}/${event.githubRepo}"
triggers:
%s
""" % (message, trigger)


class GhRepo:
    """A git repository at <tmp>/<org>/<name> (branch main), as GitHub names it."""

    def __init__(self, files, org=None, name=None):
        self.org, self.name = org or unique("acme"), name or unique("widgets")
        self.root = tempfile.mkdtemp(prefix="accord-gh-")
        self.path = os.path.join(self.root, self.org, self.name)
        os.makedirs(self.path)
        gs.make_repo(self.path, files)

    @property
    def url(self):
        return "file://" + self.path

    def commit(self, files, message="change"):
        return gs.commit(self.path, files, message)

    def head(self):
        return gs.rev(self.path)

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture
def gh(fresh_server):
    srv = fresh_server(env={"ACCORD_GITHUB_SECRET": SECRET}, args=["--repo-fetch-max-age", "0"]).start()
    made = []

    def repo(files, **kw):
        r = GhRepo(files, **kw)
        made.append(r)
        return r

    yield srv, Client(srv.url, ADMIN_KEY), repo
    for r in made:
        r.cleanup()


def push_payload(repo, branch="main", before="0" * 40, after=None, sender="octocat", modified=()):
    after = after or repo.head()
    return {
        "ref": "refs/heads/" + branch, "before": before, "after": after,
        "repository": {"full_name": "%s/%s" % (repo.org, repo.name), "name": repo.name,
                       "git_url": "git://github.com/%s/%s.git" % (repo.org, repo.name)},
        "sender": {"login": sender, "node_id": "MDQ6VXNlcjE="},
        "commits": [{"id": after, "added": [], "removed": [], "modified": list(modified)}],
    }


def pr_payload(repo, action="opened", base="main", sha=None, sender="octocat"):
    return {
        "action": action, "number": 7,
        "pull_request": {"base": {"ref": base}, "head": {"ref": "feature", "sha": sha or "ab" * 20}, "merged": False},
        "repository": {"full_name": "%s/%s" % (repo.org, repo.name), "name": repo.name,
                       "git_url": "git://github.com/%s/%s.git" % (repo.org, repo.name)},
        "sender": {"login": sender},
    }


def deliver(srv, event, payload, secret=SECRET, delivery=None, signature=None):
    body = json.dumps(payload).encode()
    sig = signature or "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return requests.post(srv.url + HOOK, data=body, timeout=60, headers={
        "Content-Type": "application/json", "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()), "X-Hub-Signature-256": sig})


def started(p, n):
    return wait_for(lambda: len(p.processes()) >= n and p.processes(), timeout=30)


def test_signature_ping_and_deliveries(gh):
    srv, admin, repo = gh
    r = repo({"concord.yml": flow("pushed", "- github:\n    version: 2\n    entryPoint: onEvent\n"
                                             "    conditions:\n      type: push\n")})
    p = Project(admin)
    p.add_repo(r, name="widgets")
    payload = push_payload(r)
    # unsigned, wrongly signed, signed with another secret: 401 and nothing started
    assert deliver(srv, "push", payload, signature="sha256=" + "0" * 64).status_code == 401
    assert deliver(srv, "push", payload, signature="sha1=abc").status_code == 401
    assert deliver(srv, "push", payload, secret="another-secret-value").status_code == 401
    body = json.dumps(payload).encode()
    assert requests.post(srv.url + HOOK, data=body, timeout=30,
                         headers={"X-GitHub-Event": "push", "X-GitHub-Delivery": "d1"}).status_code == 401
    r2 = deliver(srv, "ping", {"zen": "Keep it logically awesome.", "hook_id": 1})
    assert r2.status_code == 200 and r2.text == "ok"
    assert p.processes() == []
    # a signed push starts the trigger's process, once per delivery
    delivery = str(uuid.uuid4())
    r3 = deliver(srv, "push", payload, delivery=delivery)
    assert r3.status_code == 200 and r3.text == "ok", r3.text
    procs = started(p, 1)
    pid = procs[0]["instanceId"]
    assert wait_process(admin, pid)["status"] == "FINISHED"
    log = process_log(admin, pid)
    assert "pushed push octocat main %s %s/%s" % (r.head(), r.org, r.name) in log, log
    assert deliver(srv, "push", payload, delivery=delivery).status_code == 200
    assert len(p.processes()) == 1
    by = admin.get("/api/v1/process/%s" % pid).json().get("triggeredBy", {})
    assert by.get("externalEventId") == delivery and by["trigger"]["eventSource"] == "github", by
    audit = admin.get("/api/v1/audit", params={"object": "EXTERNAL_EVENT"}).json()
    assert any(e["details"].get("eventId") == delivery and e["details"].get("githubEvent") == "push" for e in audit)


def test_defaults_branch_empty_push_and_other_repositories(gh):
    srv, admin, repo = gh
    r = repo({"concord.yml": flow("pushed", "- github:\n    version: 2\n    entryPoint: onEvent\n"
                                             "    conditions:\n      type: push\n")})
    other = repo({".keep": ""}, org=r.org)
    p = Project(admin)
    p.add_repo(r, name="widgets")
    assert deliver(srv, "push", push_payload(r, branch="feature")).status_code == 200  # not the repo's branch
    assert deliver(srv, "push", push_payload(other)).status_code == 200  # another GitHub repository
    head = r.head()
    assert deliver(srv, "push", push_payload(r, before=head, after=head)).status_code == 200  # empty push
    assert deliver(srv, "pull_request", pr_payload(r)).status_code == 200  # type push only
    assert p.processes() == []
    assert deliver(srv, "push", push_payload(r)).status_code == 200
    started(p, 1)


def test_pull_requests_files_and_use_initiator(gh):
    srv, admin, repo = gh
    username = unique("dev")
    assert admin.post("/api/v1/user", json={"username": username}).status_code == 200
    triggers = """- github:
    version: 2
    entryPoint: onEvent
    useInitiator: true
    conditions:
      type: pull_request
      status: "(opened|synchronize)"
      branch: ".*"
- github:
    version: 2
    entryPoint: onEvent
    conditions:
      type: push
      files:
        modified:
          - "concord.yml"
"""
    r = repo({"concord.yml": flow("event", triggers)})
    p = Project(admin)
    p.add_repo(r, name="widgets")
    assert deliver(srv, "pull_request", pr_payload(r, action="closed")).status_code == 200
    assert deliver(srv, "push", push_payload(r, modified=["README.md"])).status_code == 200
    assert p.processes() == []
    assert deliver(srv, "pull_request", pr_payload(r, sender=username)).status_code == 200
    pr = started(p, 1)[0]
    assert pr["initiator"] == username, pr
    assert deliver(srv, "push", push_payload(r, modified=["concord.yml"])).status_code == 200
    push = [x for x in started(p, 2) if x["instanceId"] != pr["instanceId"]][0]
    assert push["initiator"] != username  # no useInitiator: the trigger processes' identity
    assert wait_process(admin, push["instanceId"])["status"] == "FINISHED"


def test_a_push_refreshes_the_repository_and_use_event_commit_id(gh):
    srv, admin, repo = gh
    trig = "- github:\n    version: 2\n    entryPoint: onEvent\n    conditions:\n      type: push\n"
    r = repo({"concord.yml": flow("first", trig)})
    first = r.head()
    p = Project(admin)
    p.add_repo(r, name="widgets")
    # a new commit whose trigger asks for the event's commit
    r.commit({"concord.yml": flow("second", trig.replace("entryPoint: onEvent",
                                                          "entryPoint: onEvent\n    useEventCommitId: true"))})
    second = r.head()
    assert deliver(srv, "push", push_payload(r, after=second)).status_code == 200
    pid = started(p, 1)[0]["instanceId"]
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "second push" in process_log(admin, pid)
    trig_cfg = p.triggers("widgets")[0]["cfg"]
    assert trig_cfg.get("useEventCommitId") is True, trig_cfg  # the push refreshed the triggers
    # useEventCommitId: a delivery naming the first commit runs the first commit's flow
    assert deliver(srv, "push", push_payload(r, before=second, after=first)).status_code == 200
    procs = started(p, 2)
    old = [x for x in procs if x["instanceId"] != pid][0]["instanceId"]
    assert wait_process(admin, old)["status"] == "FINISHED"
    assert "first push" in process_log(admin, old)


def test_not_configured_is_503(admin, server):
    r = requests.post(server.url + HOOK, data=b"{}", timeout=30, headers={
        "X-GitHub-Event": "push", "X-GitHub-Delivery": "x", "X-Hub-Signature-256": "sha256=" + "0" * 64})
    assert r.status_code == 503 and "ACCORD_GITHUB_SECRET" in r.json()["message"], r.text
