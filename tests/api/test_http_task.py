"""Black-box tests of the flow `http` task: a small HTTP server on 127.0.0.1 records the
requests it gets, `accord run` runs a flow that calls it, and the tests check the server's
view, the log lines, the exit status and out.json (--out)."""
import base64
import json
import os
import pathlib
import re
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import backend_neutral

neutral = backend_neutral("the http task against a local HTTP server, run by accord run (no database); the "
                          "tests in a server's process run on both backends")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ACCORD_BIN") or os.path.join(ROOT, "build", "accord")
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000 ", re.M)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, ctype="application/json", extra=()):
        data = body if isinstance(body, bytes) else body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Test", "yes")
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        u = urlsplit(self.path)
        self.server.requests.append(
            {"method": self.command, "path": u.path, "query": parse_qs(u.query), "headers": dict(self.headers),
             "body": body})
        route = u.path
        if route == "/json":
            self.reply(200, json.dumps({"hello": "world", "n": 1, "list": [1, 2]}))
        elif route == "/text":
            self.reply(200, "plain text", "text/plain")
        elif route == "/files/data.bin":
            self.reply(200, b"BINARY\x01\x02", "application/octet-stream")
        elif route == "/notfound":
            self.reply(404, "no such thing", "text/plain")
        elif route == "/fail":
            self.reply(500, "boom", "text/plain")
        elif route == "/unauth":
            self.reply(401, "who are you", "text/plain")
        elif route == "/slow":
            time.sleep(3)
            self.reply(200, "late", "text/plain")
        elif route == "/barrier":
            # Answers only when `n` requests with the same `key` wait here at once: calls
            # made one after another never get there and end with 504 after 20 s.
            q = parse_qs(u.query)
            with self.server.lock:
                b = self.server.barriers.setdefault(q["key"][0], threading.Barrier(int(q["n"][0])))
            try:
                b.wait(timeout=20)
                self.reply(200, "met", "text/plain")
            except threading.BrokenBarrierError:
                self.reply(504, "the others never came", "text/plain")
        elif route == "/redirect":
            self.reply(302, "", "text/plain", [("Location", "/json")])
        elif route == "/redirect-other-host":
            # the same server under another host name
            self.reply(302, "", "text/plain", [("Location", "http://localhost:%d/echo" % self.server.server_address[1])])
        elif route == "/redirect-file":
            self.reply(302, "", "text/plain", [("Location", "file:///etc/passwd")])
        else:
            self.reply(200, json.dumps({"method": self.command}))

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


@pytest.fixture(scope="module")
def srv():
    s = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    s.daemon_threads = True
    s.requests = []
    s.barriers = {}
    s.lock = threading.Lock()
    t = threading.Thread(target=s.serve_forever, daemon=True)
    t.start()
    s.url = "http://127.0.0.1:%d" % s.server_address[1]
    yield s
    s.shutdown()
    s.server_close()


@pytest.fixture(autouse=True)
def clear(srv):
    srv.requests.clear()


class Run:
    def __init__(self, proc, workdir):
        self.rc = proc.returncode
        self.output = TS.sub("", proc.stdout + proc.stderr)
        self.workdir = workdir
        p = os.path.join(workdir, "_attachments", "out.json")
        self.out = json.load(open(p)) if os.path.exists(p) else {}


def run_flow(tmp_path, steps, out=None, files=None, timeout=60):
    base = tempfile.mkdtemp(dir=tmp_path)
    flow = pathlib.Path(base) / "flow"
    flow.mkdir()
    (flow / "concord.yml").write_text("flows:\n  default:\n" + "".join("    " + l + "\n" for l in steps.splitlines()))
    for name, data in (files or {}).items():
        (flow / name).write_bytes(data)
    workdir = os.path.join(base, "work")
    args = [BIN, "run", str(flow), "--workdir", workdir]
    if out:
        args += ["--out", out]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    return Run(proc, workdir)


@neutral
def test_get_json(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/json", response: json}}
  out: resp
- log: "hello=${{resp.content.hello}} n=${{resp.content.n}} ok=${{resp.ok}} code=${{resp.statusCode}}"
""", out="resp")
    assert r.rc == 0, r.output
    assert "[INFO ] hello=world n=1 ok=true code=200" in r.output
    resp = r.out["resp"]
    assert resp["ok"] is True and resp["statusCode"] == 200
    assert resp["content"] == {"hello": "world", "n": 1, "list": [1, 2]}
    assert resp["headers"]["X-Test"] == "yes"
    assert "error" not in resp
    assert srv.requests[0]["method"] == "GET"


@neutral
def test_post_json_with_headers_and_query(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in:
    method: POST
    url: "{srv.url}/echo"
    request: json
    response: json
    body: {{a: 1, nested: {{b: [true, "x"]}}}}
    headers: {{X-A: "b", X-Num: 5}}
    query: {{q: "hello world", multi: [1, 2], amp: "a&b=c"}}
  out: resp
- log: "method=${{resp.content.method}}"
""")
    assert r.rc == 0, r.output
    assert "[INFO ] method=POST" in r.output
    req = srv.requests[0]
    assert req["method"] == "POST"
    assert json.loads(req["body"]) == {"a": 1, "nested": {"b": [True, "x"]}}
    assert req["headers"]["Content-Type"] == "application/json"
    assert req["headers"]["X-A"] == "b" and req["headers"]["X-Num"] == "5"
    assert req["query"] == {"q": ["hello world"], "multi": ["1", "2"], "amp": ["a&b=c"]}


@neutral
def test_put_string_and_form(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{method: PUT, url: "{srv.url}/s", request: string, body: "just text"}}
- task: http
  in: {{method: POST, url: "{srv.url}/f", request: form, body: {{a: "x y", b: [1, 2]}}}}
""")
    assert r.rc == 0, r.output
    put, form = srv.requests
    assert put["method"] == "PUT" and put["body"] == b"just text"
    assert put["headers"]["Content-Type"] == "text/plain"
    assert form["headers"]["Content-Type"] == "application/x-www-form-urlencoded"
    assert parse_qs(form["body"].decode()) == {"a": ["x y"], "b": ["1", "2"]}


@neutral
def test_basic_auth_username_password_and_token(srv, tmp_path):
    token = base64.b64encode(b"tok:en").decode()
    r = run_flow(tmp_path, f"""- task: http
  in:
    url: "{srv.url}/a"
    auth: {{basic: {{username: "user", password: "s3cret-pass"}}}}
    debug: true
- task: http
  in:
    url: "{srv.url}/b"
    auth: {{basic: {{token: "{token}"}}}}
""")
    assert r.rc == 0, r.output
    a, b = srv.requests
    assert a["headers"]["Authorization"] == "Basic " + base64.b64encode(b"user:s3cret-pass").decode()
    assert b["headers"]["Authorization"] == "Basic " + token
    # debug logs method, URL and status, never the credentials
    assert "[INFO ] http: GET %s/a -> 200" % srv.url in r.output
    assert "s3cret-pass" not in r.output and "Authorization" not in r.output
    assert base64.b64encode(b"user:s3cret-pass").decode() not in r.output


@neutral
def test_bad_auth_token_is_refused_without_echo(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/a", auth: {{basic: {{token: "not base64 !!"}}}}}}
""")
    assert r.rc == 1
    assert "Invalid auth token value. Expected a base64 encoded string" in r.output
    assert "not base64 !!" not in r.output
    assert srv.requests == []


@neutral
def test_404_is_a_result_not_an_error(srv, tmp_path):
    # As in Concord: a non-2xx status gives ok=false with the body as `error`; only 401 fails.
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/notfound"}}
  out: resp
- log: "ok=${{resp.ok}} code=${{resp.statusCode}} error=${{resp.error}} content='${{resp.content}}'"
""", out="resp")
    assert r.rc == 0, r.output
    assert "[INFO ] ok=false code=404 error=no such thing content=''" in r.output
    assert r.out["resp"]["headers"]["X-Test"] == "yes"


@neutral
def test_500_with_ignore_errors(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/fail", ignoreErrors: true}}
  out: resp
- log: "ok=${{resp.ok}} code=${{resp.statusCode}} error=${{resp.error}}"
""")
    assert r.rc == 0, r.output
    assert "[INFO ] ok=false code=500 error=boom" in r.output


@neutral
def test_401_fails_unless_ignore_errors(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/unauth"}}
""")
    assert r.rc == 1
    assert "Authorization required for %s/unauth(code: 401)" % srv.url in r.output
    r2 = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/unauth", ignoreErrors: true}}
  out: resp
- log: "ok=${{resp.ok}} code=${{resp.statusCode}} error=${{resp.error}}"
""")
    assert r2.rc == 0, r2.output
    assert "[INFO ] ok=false code=401 error=who are you" in r2.output


@neutral
def test_response_string(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/text", response: string}}
  out: resp
- log: "content=${{resp.content}}"
- log: "asString=${{http.asString('{srv.url}/text')}}"
""")
    assert r.rc == 0, r.output
    assert "[INFO ] content=plain text" in r.output
    assert "[INFO ] asString=plain text" in r.output


@neutral
def test_response_file(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/files/data.bin?x=1", response: file}}
  out: resp
- log: "path=${{resp.content}}"
- log: "back=${{resource.asString(resp.content)}}"
""", out="resp")
    assert r.rc == 0, r.output
    rel = r.out["resp"]["content"]
    assert re.fullmatch(r"\.tmp/tmpdir_\w{6}/data\.bin", rel), rel
    with open(os.path.join(r.workdir, rel), "rb") as f:
        assert f.read() == b"BINARY\x01\x02"
    assert "[INFO ] path=" + rel in r.output


@neutral
def test_response_file_without_name(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/", response: file}}
  out: resp
""", out="resp")
    assert r.rc == 0, r.output
    assert re.fullmatch(r"\.tmp/tmpdir_\w{6}/tmpfile_\w{6}\.tmp", r.out["resp"]["content"])


@neutral
def test_request_file(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{method: POST, url: "{srv.url}/up", request: file, body: "payload.bin"}}
""", files={"payload.bin": b"\x00\x01file data"})
    assert r.rc == 0, r.output
    req = srv.requests[0]
    assert req["body"] == b"\x00\x01file data"
    assert req["headers"]["Content-Type"] == "application/octet-stream"


@neutral
def test_request_file_missing(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{method: POST, url: "{srv.url}/up", request: file, body: "nope.bin"}}
""")
    assert r.rc == 1
    assert "File: nope.bin not found" in r.output
    assert srv.requests == []


@neutral
@pytest.mark.parametrize("path", ["../secret.txt", "/etc/passwd", "a/../../secret.txt"])
def test_request_file_outside_workdir_refused(srv, tmp_path, path):
    (tmp_path / "secret.txt").write_text("do not send")
    r = run_flow(tmp_path, f"""- task: http
  in: {{method: POST, url: "{srv.url}/up", request: file, body: "{path}"}}
""")
    assert r.rc == 1
    assert "'body' must be a path inside the working directory, got '%s'" % path in r.output
    assert srv.requests == []


@neutral
def test_form_data(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in:
    method: POST
    url: "{srv.url}/md"
    request: formData
    body: {{field1: "text value", field2: "@up.txt", field3: {{type: "application/json", data: "{{}}"}}}}
""", files={"up.txt": b"uploaded"})
    assert r.rc == 0, r.output
    req = srv.requests[0]
    assert req["headers"]["Content-Type"].startswith("multipart/form-data; boundary=")
    body = req["body"]
    assert b'name="field1"' in body and b"text value" in body
    assert b'name="field2"; filename="up.txt"' in body and b"uploaded" in body
    assert b"Content-Type: application/json" in body


@neutral
def test_request_timeout(srv, tmp_path):
    # /slow answers after 3 s: the step failing with this message (not succeeding late) is
    # the timeout at work
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/slow", requestTimeout: 500}}
""")
    assert r.rc == 1
    assert "Request timeout after 500ms" in r.output


@neutral
def test_socket_timeout_with_ignore_errors(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/slow", socketTimeout: 1000, ignoreErrors: true}}
  out: resp
- log: "ok=${{resp.ok}} error=${{resp.error}}"
""")
    assert r.rc == 0, r.output
    assert "[INFO ] ok=false error=GET %s/slow: socket timeout, no data for 1000ms" % srv.url in r.output


@neutral
def test_connection_refused(tmp_path):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "http://127.0.0.1:{port}/x"}}
""")
    assert r.rc == 1
    assert "GET http://127.0.0.1:%d/x failed: " % port in r.output


@neutral
def test_redirect_followed(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/redirect", response: json}}
  out: resp
- log: "hello=${{resp.content.hello}} code=${{resp.statusCode}}"
""")
    assert r.rc == 0, r.output
    assert "[INFO ] hello=world code=200" in r.output
    assert [q["path"] for q in srv.requests] == ["/redirect", "/json"]


@neutral
def test_redirect_to_other_host_drops_authorization(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in:
    url: "{srv.url}/redirect-other-host"
    auth: {{basic: {{username: "u", password: "p"}}}}
    response: json
  out: resp
- log: "code=${{resp.statusCode}}"
""")
    assert r.rc == 0, r.output
    assert "[INFO ] code=200" in r.output
    first, second = srv.requests
    assert first["headers"]["Authorization"].startswith("Basic ")
    assert second["path"] == "/echo" and "Authorization" not in second["headers"]


@neutral
def test_redirect_not_followed(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/redirect", followRedirects: false}}
  out: resp
- log: "ok=${{resp.ok}} code=${{resp.statusCode}} location=${{resp.headers.Location}}"
""")
    assert r.rc == 0, r.output
    assert "[INFO ] ok=false code=302 location=/json" in r.output
    assert [q["path"] for q in srv.requests] == ["/redirect"]


@neutral
def test_redirect_to_file_scheme_refused(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{srv.url}/redirect-file"}}
""")
    assert r.rc == 1
    assert "GET %s/redirect-file failed: " % srv.url in r.output
    assert "root:" not in r.output


@neutral
@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/"])
def test_non_http_scheme_refused(tmp_path, url):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "{url}", ignoreErrors: true}}
""")
    assert r.rc == 1
    assert "'url' must be an http or https URL, got scheme '%s'" % url.split(":")[0] in r.output
    assert "root:" not in r.output


@neutral
def test_invalid_input(srv, tmp_path):
    r = run_flow(tmp_path, """- task: http
  in: {method: GET}
  error:
    - log: "1: ${lastError.message}"
- task: http
  in: {url: "%s/x", method: TRACE}
  error:
    - log: "2: ${lastError.message}"
- task: http
  in: {url: "%s/x", method: POST, body: {a: 1}}
  error:
    - log: "3: ${lastError.message}"
- task: http
  in: {url: "%s/x", method: POST, request: string, body: {a: 1}}
  error:
    - log: "4: ${lastError.message}"
- task: http
  in: {url: "%s/x", headers: {"X-Bad": "a\\r\\nInjected: 1"}}
  error:
    - log: "5: ${lastError.message}"
""" % ((srv.url,) * 4))
    assert r.rc == 0, r.output
    assert "[INFO ] 1: ('url') argument is missing" in r.output
    assert "[INFO ] 2: 'method: TRACE' is not a supported HTTP method" in r.output
    assert "[INFO ] 3: ('request') argument is missing for ('POST') method" in r.output
    assert "[INFO ] 4: 'request: string' is not compatible with 'body'" in r.output
    assert "[INFO ] 5: 'headers': the value of 'X-Bad' contains a line break" in r.output
    assert srv.requests == []


@neutral
def test_password_in_url_is_not_shown(srv, tmp_path):
    r = run_flow(tmp_path, f"""- task: http
  in: {{url: "http://u:hunter2@127.0.0.1:{srv.server_address[1]}/unauth"}}
""")
    assert r.rc == 1
    assert "Authorization required for %s/unauth(code: 401)" % srv.url in r.output
    assert "hunter2" not in r.output


def test_in_a_server_process(srv, admin):
    """The server's process runner loads libcurl on the task's first call, after it has
    confined itself: the call must still work there."""
    from conftest import process_log, start_process, wait_process
    flow = f"""flows:
  default:
    - task: http
      in: {{url: "{srv.url}/json", response: json}}
      out: resp
    - log: "hello=${{resp.content.hello}} code=${{resp.statusCode}}"
"""
    pid = start_process(admin, flow=flow)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "hello=world code=200" in log
    assert [r["path"] for r in srv.requests] == ["/json"]


@neutral
def test_parallel_branches_wait_on_http_together(srv, tmp_path):
    """The calls of parallel branches and of a parallel loop are in flight at the same time
    (issue 14 part 8): the server answers each only when all of them have arrived, so calls
    made one after another would fail with 504."""
    r = run_flow(tmp_path, f"""- parallel:
    - block:
        - task: http
          in: {{url: "{srv.url}/barrier?key=blocks&n=3", response: string}}
          out: a
        - log: "a=${{a.content}}"
    - block:
        - task: http
          in: {{url: "{srv.url}/barrier?key=blocks&n=3", response: string}}
          out: b
        - log: "b=${{b.content}}"
    - block:
        - task: http
          in: {{url: "{srv.url}/barrier?key=blocks&n=3", response: string}}
          out: c
        - log: "c=${{c.content}}"
- task: http
  in: {{url: "{srv.url}/barrier?key=loop&n=4", response: string}}
  out: r
  loop:
    items: [1, 2, 3, 4]
    mode: parallel
    parallelism: 4
- log: "loop=${{r.stream().map(x -> x.content).toList()}}"
- task: http
  in: {{url: "{srv.url}/json", response: json}}
  out: single
- log: "single=${{single.content.hello}}"
""")
    assert r.rc == 0, r.output
    for name in "abc":
        assert "[INFO ] %s=met" % name in r.output
    assert "[INFO ] loop=[met, met, met, met]" in r.output
    assert "[INFO ] single=world" in r.output
    assert len([q for q in srv.requests if q["path"] == "/barrier"]) == 7


def test_parallel_http_in_a_server_process(srv, admin):
    """The same in a confined process runner on the server: the transfers run on threads of
    the runner while its VM goes on."""
    from conftest import process_log, start_process, wait_process
    flow = f"""flows:
  default:
    - task: http
      in: {{url: "{srv.url}/barrier?key=server&n=3", response: string}}
      out: r
      loop:
        items: [1, 2, 3]
        mode: parallel
        parallelism: 3
    - log: "loop=${{r.stream().map(x -> x.content).toList()}}"
"""
    pid = start_process(admin, flow=flow)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "loop=[met, met, met]" in log
