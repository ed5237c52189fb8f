"""publicFlows and dry-run mode (issue 24 part 4).

publicFlows: a definition that declares them may be started only at one of them — through
the API, a start link, a trigger or the concord task — else Concord's message "entryPoint
'x' is not a public flow" and nothing started.  Dry-run: dryRun=true on start makes
isDryRun() true, the http task sends only GET requests, a task that is not dry-run ready
fails with Concord's message unless its step says meta.dryRunReady, children inherit the
mode; a dryRun that is not a boolean is a 400."""
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import process_log, start_process, wait_process
from proc_util import count_all, make_org, make_project
from repo_util import create_repo, git  # noqa: F401  (git is a fixture)

PUBLIC = """
publicFlows:
  - main
  - other
flows:
  default:
    - log: "default ran"
  main:
    - log: "main ran"
  other:
    - log: "other ran"
  hidden:
    - log: "hidden ran"
"""


def test_a_non_public_entry_point_is_refused_and_nothing_started(admin):
    before = count_all(admin)
    r = start_process(admin, PUBLIC, parts={"entryPoint": "hidden"}, expect=400)
    assert r.json() == {"ok": False, "message": "entryPoint 'hidden' is not a public flow"}
    # without an entry point the start takes "default", which is not public either
    r = start_process(admin, PUBLIC, expect=400)
    assert r.json()["message"] == "entryPoint 'default' is not a public flow"
    # a flow that does not exist at all is not public either (Concord checks that first)
    r = start_process(admin, PUBLIC, parts={"entryPoint": "nope"}, expect=400)
    assert r.json()["message"] == "entryPoint 'nope' is not a public flow"
    assert count_all(admin) == before


def test_a_public_entry_point_runs_and_calls_reach_private_flows(admin):
    flow = PUBLIC.replace('    - log: "main ran"', '    - log: "main ran"\n    - call: hidden')
    pid = start_process(admin, flow, parts={"entryPoint": "main"})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "main ran" in log and "hidden ran" in log


def test_without_public_flows_every_flow_is_an_entry_point(admin):
    flow = PUBLIC.replace("publicFlows:\n  - main\n  - other\n", "")
    pid = start_process(admin, flow, parts={"entryPoint": "hidden"})
    assert wait_process(admin, pid)["status"] == "FINISHED"


def test_the_concord_task_cannot_start_a_child_at_a_non_public_flow(admin):
    flow = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        entryPoint: hidden
      error:
        - log: "refused: ${lastError.message}"
    - task: concord
      in:
        action: start
        payload: child
        entryPoint: main
        sync: true
      out: job
    - log: "public child ${job.ok}"
"""
    pid = start_process(admin, flow, files={"child/concord.yml": PUBLIC.encode()})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "entryPoint 'hidden' is not a public flow" in log
    assert "public child true" in log
    kids = admin.get("/api/v1/process/%s/subprocess" % pid).json()
    assert len(kids) == 1, kids


# ---- dry-run -------------------------------------------------------------------------------

class Recorder(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        self.server.seen.append((self.command, self.path))
        body = b'{"got":"it"}'
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


@pytest.fixture
def recorder():
    s = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    s.daemon_threads = True
    s.seen = []
    threading.Thread(target=s.serve_forever, daemon=True).start()
    s.url = "http://127.0.0.1:%d" % s.server_address[1]
    yield s
    s.shutdown()
    s.server_close()


HTTP_FLOW = """
flows:
  default:
    - log: "isDryRun: ${isDryRun()}"
    - task: http
      in:
        method: POST
        url: "%(url)s/change"
        request: json
        body: {a: 1}
      out: posted
    - task: http
      in:
        url: "%(url)s/read"
      out: read
    - log: "posted ${posted.ok} ${posted.statusCode}; read ${read.statusCode}"
"""


def test_dry_run_sends_no_side_effecting_request(admin, recorder):
    pid = start_process(admin, HTTP_FLOW % {"url": recorder.url}, parts={"dryRun": "true"})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "Dry-run mode: enabled" in log
    assert "isDryRun: true" in log
    assert "Running in dry-run mode: Skipping sending request" in log
    assert "posted true 200; read 201" in log
    assert recorder.seen == [("GET", "/read")]


def test_without_dry_run_the_requests_are_sent(admin, recorder):
    for parts in ({}, {"dryRun": "false"}):
        recorder.seen.clear()
        pid = start_process(admin, HTTP_FLOW % {"url": recorder.url}, parts=parts)
        p = wait_process(admin, pid)
        log = process_log(admin, pid)
        assert p["status"] == "FINISHED", log
        assert "isDryRun: false" in log and "Dry-run mode" not in log
        assert "posted true 201; read 201" in log
        assert recorder.seen == [("POST", "/change"), ("GET", "/read")]


def test_dry_run_from_the_request_json(admin, recorder):
    files = {"request": (b'{"dryRun": true}', "application/json")}
    pid = start_process(admin, HTTP_FLOW % {"url": recorder.url}, files=files)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert recorder.seen == [("GET", "/read")]


def test_a_bad_dry_run_value_is_refused(admin):
    before = count_all(admin)
    r = start_process(admin, "flows:\n  default:\n    - log: hi\n", parts={"dryRun": "yes"}, expect=400)
    assert r.json() == {"ok": False, "message": "Invalid 'dryRun' mode value type. Expected a boolean value true or false, got: 'yes'"}
    r = start_process(admin, "flows:\n  default:\n    - log: hi\n",
                      files={"request": (b'{"dryRun": 1}', "application/json")}, expect=400)
    assert "Expected a boolean value true or false, got: '1'" in r.json()["message"]
    assert count_all(admin) == before


def test_a_task_that_is_not_dry_run_ready_fails_the_process(admin):
    flow = """
flows:
  default:
    - log: "before"
    - task: kv
      in: {action: putString, key: k, value: v}
    - log: "never"
"""
    pid = start_process(admin, flow, parts={"dryRun": "true"})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    assert "Dry-run mode is not supported for 'kv' task (yet)" in log
    assert "never" not in log


def test_meta_dry_run_ready_lets_a_step_run(admin):
    flow = """
configuration:
  arguments:
    sure: true
flows:
  default:
    - expr: "${kv.getString('k')}"
      error:
        - log: "expression: ${lastError.message}"
    - task: repositoryRefresh
      in: {}
      meta:
        dryRunReady: "${sure}"
      error:
        - log: "step: ${lastError.message}"
"""
    pid = start_process(admin, flow, parts={"dryRun": "true"})
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "Dry-run mode is not supported for 'kv' task (yet)" in log
    # the repositoryRefresh step got past the dry-run check to the task itself
    assert "step: Invalid in parameters: no repository info" in log


def test_children_inherit_dry_run_unless_told(admin):
    child = "flows:\n  default:\n    - log: \"child dry ${isDryRun()}\"\n"
    flow = """
flows:
  default:
    - task: concord
      in: {action: start, payload: child, sync: true}
    - task: concord
      in: {action: start, payload: child, sync: true, dryRunMode: false}
"""
    pid = start_process(admin, flow, parts={"dryRun": "true"}, files={"child/concord.yml": child.encode()})
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    kids = admin.get("/api/v1/process/%s/subprocess" % pid).json()
    logs = sorted(process_log(admin, k["instanceId"]) for k in kids)
    assert len(logs) == 2
    assert any("child dry true" in l for l in logs) and any("child dry false" in l for l in logs)


def test_dry_run_survives_suspend_and_resume(admin, recorder):
    flow = """
flows:
  default:
    - suspend: goOn
    - log: "after resume isDryRun: ${isDryRun()}"
    - task: http
      in: {method: PUT, url: "%s/late", request: string, body: x}
""" % recorder.url
    pid = start_process(admin, flow, parts={"dryRun": "true"})
    assert wait_process(admin, pid, statuses=("SUSPENDED",))["status"] == "SUSPENDED"
    r = admin.post("/api/v1/process/%s/resume/goOn" % pid, json={})
    assert r.status_code == 200, r.text
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "after resume isDryRun: true" in log
    assert recorder.seen == []


def test_a_start_link_to_a_non_public_flow_is_refused(admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": PUBLIC})
    name, _ = create_repo(admin, org, project, repo.url)
    base = "/api/v1/org/%s/project/%s/repo/%s/start/" % (org, project, name)
    r = admin.get(base + "hidden", allow_redirects=False)
    assert r.status_code == 400, (r.status_code, r.text)
    assert "entryPoint &#39;hidden&#39; is not a public flow" in r.text, r.text  # an HTML page
    assert admin.get("/api/v2/process", params={"orgName": org}).json() == []
    r = admin.get(base + "main", allow_redirects=False)
    assert r.status_code == 303, (r.status_code, r.text)
