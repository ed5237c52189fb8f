"""Server mode of the flow fixtures (tests/flows/run --server): each fixture runs as a
process of one real `accord serve`, started here as tests/api/conftest.py starts it (a
fresh data folder, the admin API key; on the PostgreSQL database of $ACCORD_TEST_DB when it
is set), and its expectations are checked through the REST API:

  start       POST /api/v1/process: the fixture's files as a ZIP `archive` (with "path",
              that file as concord.yml), or with ACCORD_FLOWS_PARTS=1 each file as a part
              of its own (a start held in memory, queue/start_staged.h; files lose their
              execute bit, so fixtures that run one may fail that way); accord run's
              arguments as the request's parts:
              -a K=V -> text part arguments.K, --arg-json K=J -> the `request` JSON part,
              -e -> entryPoint, -p -> activeProfiles, --out -> out, --debug -> debug,
              --dry-run -> dryRun
  exit        0 FINISHED, 1 FAILED, 3 SUSPENDED; 2 (an invalid definition or entry point)
              the start answered 400, its message standing for the log
  log, forbid, stdout
              against GET /api/v1/process/{id}/log (a resume step: what the log gained),
              plus, when SUSPENDED, the lines accord run prints then, made from the last
              PROCESS_WAIT event: "Process suspended, waiting for: a b", "Pending form: f"
  out, out_has  against the attachment out.json
  events      against the data of GET /api/v1/process/{id}/event?type=ELEMENT&includeAll=true
  resume      a pending form's name: POST …/form/{name} with the arguments (exit 2: the
              answer's field errors); a checkpoint's name (not awaited): GET
              /api/v2/process/{id}/checkpoint?name=…&action=restore; else POST
              …/resume/{event} with {"arguments": …} (exit 2: the 400's message)

A resume step's "move" and "absent" are about accord run's working folder and are not
checked here.  In test.json, "server" (at the top or in a resume step) holds keys that
replace the fixture's own in server mode, where the server rightly differs from accord run
(the initiator is admin, not the local user; projectInfo names the org), with "why"; and
"skip": "why" for a fixture that has no meaning on a server.  Fixtures that plant files
around accord run's working folder, set its --workdir or change the definition between
runs are skipped on their own; skipped fixtures are listed with the reason.  A sanitizer
report in a process's log fails its fixture, and one in the server's log the whole run.
"""
import io
import json
import os
import sys
import threading
import time
import traceback
import zipfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "api"))
from check import check_events, check_lines, check_out, log_lines  # noqa: E402
from conftest import ADMIN_KEY, Client, Server  # noqa: E402

STATUS_OF_EXIT = {0: "FINISHED", 1: "FAILED", 3: "SUSPENDED"}
SETTLED = ("FINISHED", "FAILED", "CANCELLED", "TIMED_OUT", "SUSPENDED")
SANITIZER = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "LeakSanitizer has encountered", "runtime error:")
WAIT_SECONDS = 90
# Fixtures run at once, and processes the server runs at once: enough that the fixtures
# that sleep or wait do not hold up the others.
PARALLEL = 8


class Skip(Exception):
    """The fixture has no meaning on a server; the message says why."""


def for_server(spec):
    s = dict(spec)
    s.update(spec.get("server", {}))
    return s


def set_path(obj, dotted, value):
    keys = dotted.split(".")
    for k in keys[:-1]:
        obj = obj.setdefault(k, {})
        if not isinstance(obj, dict):
            raise Skip("argument %s nests below a value" % dotted)
    obj[keys[-1]] = value


def key_value(opt, kv):
    if "=" not in kv:
        raise Skip("%s %s is not KEY=VALUE" % (opt, kv))
    return kv.split("=", 1)


def start_request(args):
    """accord run's arguments as the parts of a start request: [(name, text)], request."""
    parts, request, profiles, outs = [], {}, [], []
    i = 0
    while i < len(args):
        opt = args[i]
        if opt == "--debug":
            request["debug"] = True
            i += 1
            continue
        if opt == "--dry-run":
            parts.append(("dryRun", "true"))
            i += 1
            continue
        if i + 1 >= len(args):
            raise Skip("%s has no value" % opt)
        v = args[i + 1]
        i += 2
        if opt in ("-a", "--arg"):
            k, val = key_value(opt, v)
            parts.append(("arguments." + k, val))
        elif opt == "--arg-json":
            k, val = key_value(opt, v)
            set_path(request.setdefault("arguments", {}), k, json.loads(val))
        elif opt in ("-e", "--entry-point"):
            parts.append(("entryPoint", v))
        elif opt in ("-p", "--profile"):
            profiles.append(v)
        elif opt == "--out":
            outs.append(v)
        else:
            raise Skip("accord run's %s has no counterpart in a start request" % opt)
    if profiles:
        parts.append(("activeProfiles", ",".join(profiles)))
    if outs:
        parts.append(("out", ",".join(outs)))
    return parts, request


def resume_arguments(args):
    """A resume step's -a / --arg-json arguments as one JSON object."""
    parts, request = start_request(args)
    got = request.get("arguments", {})
    for name, val in parts:
        if not name.startswith("arguments."):
            raise Skip("a resume takes arguments only, not %s" % name)
        set_path(got, name[len("arguments."):], val)
    return got


def archive(path, spec):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for root, dirs, files in os.walk(path):
            dirs.sort()
            for f in sorted(files):
                rel = os.path.relpath(os.path.join(root, f), path)
                if rel != "test.json" and not ("path" in spec and rel == "concord.yml"):
                    z.write(os.path.join(root, f), rel)
        if "path" in spec:
            z.write(os.path.join(path, spec["path"]), "concord.yml")
    return buf.getvalue()


def file_parts(path, spec):
    """The fixture's files as the parts of a start, as archive() packs them."""
    got = []
    for root, dirs, files in os.walk(path):
        dirs.sort()
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(root, f), path)
            if rel != "test.json" and not ("path" in spec and rel == "concord.yml"):
                with open(os.path.join(root, f), "rb") as fh:
                    got.append((rel, (f, fh.read(), "application/octet-stream")))
    if "path" in spec:
        with open(os.path.join(path, spec["path"]), "rb") as fh:
            got.append(("concord.yml", ("concord.yml", fh.read(), "application/octet-stream")))
    return got


def skip_reason(spec):
    if "skip" in spec:
        return spec["skip"]
    if "plant" in spec:
        return "plants files around accord run's working folder (its own confinement; the server's is tested by tests/api)"
    if any("setup" in step for step in spec.get("resume", [])):
        return "changes the flow's files between runs: a server process keeps its stored payload"
    return None


class Run:
    """One fixture's process on the server, and what the last step of it showed."""

    def __init__(self, client, path, spec):
        self.c = client
        self.path = path
        self.spec = spec
        self.pid = None
        self.log_len = 0

    def start(self, errors):
        parts, request = start_request(self.spec.get("args", []))
        if os.environ.get("ACCORD_FLOWS_PARTS") == "1":
            multipart = file_parts(self.path, self.spec)
        else:
            multipart = [("archive", ("archive.zip", archive(self.path, self.spec), "application/zip"))]
        multipart += [(k, (None, v, "text/plain")) for k, v in parts]
        if request:
            multipart.append(("request", ("request.json", json.dumps(request).encode(), "application/json")))
        r = self.c.post("/api/v1/process", files=multipart)
        return self.settle(self.spec, r, errors)

    def settle(self, step, r, errors):
        """Checks the answer r to a start or resume, then what the process did."""
        want = step.get("exit", 0)
        refused = r.status_code != 200 or r.json().get("ok") is False
        if want == 2 or refused:
            if not refused or want != 2:
                errors.append("answered %d %s, expected %s" % (r.status_code, r.text, "a refusal" if want == 2 else "ok"))
                return False
            check_lines(step, refusal_lines(r.json()), errors)
            return not errors
        if self.pid is None:
            self.pid = r.json()["instanceId"]
        p = self.wait()
        if p["status"] != STATUS_OF_EXIT.get(want):
            errors.append("status %s, expected %s (exit %d)" % (p["status"], STATUS_OF_EXIT.get(want), want))
        self.check(step, p, errors)
        return not errors

    def wait(self):
        deadline = time.time() + WAIT_SECONDS
        while True:
            r = self.c.get("/api/v2/process/%s" % self.pid)
            if r.status_code != 200:
                raise AssertionError("status of %s: %d %s" % (self.pid, r.status_code, r.text))
            p = r.json()
            if p["status"] in SETTLED:
                return p
            if time.time() > deadline:
                raise AssertionError("process %s is still %s after %ds" % (self.pid, p["status"], WAIT_SECONDS))
            time.sleep(0.02)

    def events(self):
        r = self.c.get("/api/v1/process/%s/event" % self.pid, params={"includeAll": "true"})
        assert r.status_code == 200, r.text
        return r.json()

    def check(self, step, p, errors):
        log = self.c.get("/api/v1/process/%s/log" % self.pid).content
        new = log[self.log_len :].decode("utf-8", "replace")
        self.log_len = len(log)
        for marker in SANITIZER:
            if marker in new:
                errors.append("sanitizer report in the process log")
        lines = log_lines(new)
        events = self.events()
        if p["status"] == "SUSPENDED":
            lines += suspension_lines(events)
        check_lines(step, lines, errors)
        r = self.c.get("/api/v1/process/%s/attachment/out.json" % self.pid)
        check_out(step, r.json() if r.status_code == 200 else None, errors)
        check_events(step, [e["data"] for e in events if e["eventType"] == "ELEMENT"], errors)
        if errors:
            errors.append("process %s is %s; its log:\n%s" % (self.pid, p["status"], log.decode("utf-8", "replace")))

    def waiting_for(self):
        waits = [e["data"] for e in self.events() if e["eventType"] == "PROCESS_WAIT"]
        return waits[-1] if waits else {}

    def resume(self, step, errors):
        event = step["event"]
        wait = self.waiting_for()
        if event.startswith("$EVENT"):  # the N-th name the process waits for
            names, n = wait.get("eventNames", []), int(event[6:])
            event = names[n] if n < len(names) else event
        args = resume_arguments(step.get("args", []))
        checkpoints = [c["name"] for c in self.c.get("/api/v1/process/%s/checkpoint" % self.pid).json()]
        if event in wait.get("forms", []):
            values = args.get(event) if isinstance(args.get(event), dict) else args
            r = self.c.post("/api/v1/process/%s/form/%s" % (self.pid, event), json=values)
        elif event in checkpoints and event not in wait.get("eventNames", []):
            r = self.c.get("/api/v2/process/%s/checkpoint" % self.pid, params={"name": event, "action": "restore"})
        else:
            r = self.c.post("/api/v1/process/%s/resume/%s" % (self.pid, event), json={"arguments": args})
        return self.settle(step, r, errors)


def refusal_lines(body):
    """What a refused start or resume said, as lines (a form's: one a field)."""
    if isinstance(body.get("errors"), dict):
        return list(body["errors"].values())
    return [body.get("message", json.dumps(body))]


def suspension_lines(events):
    """What accord run prints when the process suspends, from the last PROCESS_WAIT event."""
    waits = [e["data"] for e in events if e["eventType"] == "PROCESS_WAIT"]
    if not waits:
        return []
    w = waits[-1]
    return ["Process suspended, waiting for: " + " ".join(w.get("eventNames", []))] + [
        "Pending form: " + f for f in w.get("forms", [])
    ]


def run_fixture(client, path):
    """None when it passed, ("skip", why) or ("fail", [errors])."""
    with open(os.path.join(path, "test.json")) as f:
        spec = for_server(json.load(f))
    errors = []
    try:
        why = skip_reason(spec)
        if why:
            raise Skip(why)
        run = Run(client, path, spec)
        if run.start(errors):
            for step in spec.get("resume", []):
                if not run.resume(for_server(step), errors):
                    break
    except Skip as e:
        return ("skip", str(e))
    except Exception:  # a broken answer: the fixture fails, the others go on
        errors.append(traceback.format_exc())
    return ("fail", errors) if errors else None


def main(names):
    srv = Server(args=["--workers", str(PARALLEL)]).start()
    backend = "PostgreSQL" if os.environ.get("ACCORD_TEST_DB") else "SQLite"
    client_of = threading.local()

    def one(name):
        if not hasattr(client_of, "c"):
            client_of.c = Client(srv.url, ADMIN_KEY)
        return name, run_fixture(client_of.c, os.path.join(HERE, name))

    passed, failed, skipped = 0, 0, {}
    started = time.time()
    try:
        with ThreadPoolExecutor(PARALLEL) as pool:
            for name, res in pool.map(one, names):
                if res is None:
                    passed += 1
                elif res[0] == "skip":
                    skipped.setdefault(res[1], []).append(name)
                else:
                    failed += 1
                    print("FAIL %s\n  %s" % (name, "\n  ".join(res[1])))
    finally:
        try:
            srv.cleanup()
        except AssertionError as e:
            failed += 1
            print("FAIL the server: %s" % e)
    for why, which in sorted(skipped.items()):
        print("skipped (%s): %s" % (why, ", ".join(which)))
    print(
        "flows (server, %s): %d passed, %d failed, %d skipped in %.0fs"
        % (backend, passed, failed, sum(len(w) for w in skipped.values()), time.time() - started)
    )
    return 1 if failed else 0
