"""Black-box tests of the flow `smtp` task against a real SMTP server (Debian's
python3-aiosmtpd) on 127.0.0.1: `accord run` and `accord serve` run flows that send mail,
and the tests check what the server received — envelope, headers, body, attachments —
and that the server-side SMTP password shows up nowhere."""
import email
import email.policy
import json
import os
import pathlib
import re
import socket
import subprocess
import tempfile

import pytest

from conftest import Server, backend_neutral, start_process, wait_process, process_log, ADMIN_KEY, Client

neutral = backend_neutral("the smtp task against a local SMTP server, run by accord run (no database); "
                          "test_smtp_task's test_server_hands_its_defaults_to_processes runs it under the "
                          "server on both backends")

aiosmtpd = pytest.importorskip("aiosmtpd", reason="python3-aiosmtpd is not installed (scripts/deps)")
from aiosmtpd.controller import Controller  # noqa: E402
from aiosmtpd.smtp import AuthResult  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ACCORD_BIN") or os.path.join(ROOT, "build", "accord")
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000 ", re.M)
PASSWORD = "s3cret-smtp-pw-4711"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sink:
    def __init__(self):
        self.messages = []

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address == "nobody@example.com":
            return "550 5.1.1 no such user"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        login = session.auth_data
        self.messages.append({
            "from": envelope.mail_from, "rcpt": list(envelope.rcpt_tos),
            "msg": email.message_from_bytes(envelope.original_content, policy=email.policy.default),
            "login": login.login.decode() if login else None,
            "password": login.password.decode() if login else None})
        return "250 OK queued"


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = auth_data.login == b"mailer" and auth_data.password == PASSWORD.encode()
    return AuthResult(success=ok, auth_data=auth_data)


@pytest.fixture(scope="module")
def smtp():
    sink = Sink()
    port = free_port()
    c = Controller(sink, hostname="127.0.0.1", port=port, authenticator=authenticate, auth_require_tls=False)
    c.start()
    sink.port = port
    yield sink
    c.stop()


@pytest.fixture(autouse=True)
def clear(smtp):
    smtp.messages.clear()


class Run:
    def __init__(self, proc, workdir):
        self.rc = proc.returncode
        self.output = TS.sub("", proc.stdout + proc.stderr)
        self.workdir = workdir


def run_flow(tmp_path, flow, files=None, args=(), env=None):
    base = tempfile.mkdtemp(dir=tmp_path)
    d = pathlib.Path(base) / "flow"
    d.mkdir()
    (d / "concord.yml").write_text(flow)
    for name, data in (files or {}).items():
        (d / name).parent.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())
    workdir = os.path.join(base, "work")
    e = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_SMTP")}
    e.update(env or {})
    proc = subprocess.run([BIN, "run", str(d), "--workdir", workdir] + list(args), capture_output=True, text=True,
                          timeout=60, env=e)
    return Run(proc, workdir)


def smtp_flow(smtp, mail, extra="", params=None):
    p = {"host": "127.0.0.1", "port": smtp.port} if params is None else params
    step = {"task": "smtp", "in": {"mail": mail}, "out": "r"}
    if p:
        step["in"]["smtpParams"] = p
    return "flows:\n  default:\n  - %s\n  - log: 'ok=${r.ok}'\n%s" % (json.dumps(step), extra)


@neutral
def test_message_with_recipients_headers_and_body(smtp, tmp_path):
    r = run_flow(tmp_path, smtp_flow(smtp, {
        "from": "Accord Bot <bot@example.com>", "to": "a@example.com, b@example.com",
        "cc": ["c@example.com"], "bcc": "hidden@example.com", "replyTo": "reply@example.com",
        "subject": "Grüße from run ${txId}", "message": "Line one\nLine two, ünïcode"}))
    assert r.rc == 0, r.output
    assert "ok=true" in r.output and "send -> done, msgId: <" in r.output
    [m] = smtp.messages
    assert m["from"] == "bot@example.com"
    assert m["rcpt"] == ["a@example.com", "b@example.com", "c@example.com", "hidden@example.com"]
    msg = m["msg"]
    assert msg["From"] == "Accord Bot <bot@example.com>"
    assert msg["To"] == "a@example.com, b@example.com"
    assert msg["Cc"] == "c@example.com"
    assert msg["Reply-To"] == "reply@example.com"
    assert msg["Bcc"] is None
    assert msg["Subject"].startswith("Grüße from run ") and "${" not in msg["Subject"]
    assert msg["Message-ID"].endswith("@example.com>") and msg["Date"]
    assert msg.get_content_type() == "text/plain"
    assert msg.get_content().replace("\r\n", "\n") == "Line one\nLine two, ünïcode"


@neutral
def test_template_rendered_with_flow_variables(smtp, tmp_path):
    tpl = ("Hello {{who}} <{{{raw}}}> {{esc}}\n"
           "Started by {{initiator.username}}.\n"
           "{{#items}}\n- {{name}}: {{n}}\n{{/items}}\n"
           "{{^empty}}nothing here{{/empty}}\n")
    flow = """configuration:
  arguments:
    who: World
    raw: "<b>"
    esc: "a & b"
    items: [{name: p, n: 1}, {name: q, n: 2.5}]
    empty: []
""" + smtp_flow(smtp, {"from": "bot@example.com", "to": ["t@example.com"], "subject": "t",
                       "template": "mail/hello.mustache"})
    r = run_flow(tmp_path, flow, files={"mail/hello.mustache": tpl})
    assert r.rc == 0, r.output
    body = smtp.messages[0]["msg"].get_content().replace("\r\n", "\n")
    assert body.startswith("Hello World <<b>> a &amp; b\nStarted by ")
    assert "- p: 1\n- q: 2.5\nnothing here\n" in body


@neutral
def test_html_template_and_template_params(smtp, tmp_path):
    flow = smtp_flow(smtp, {"from": "bot@example.com", "to": "t@example.com", "subject": "html",
                            "template": {"name": "report.mustache.html", "params": {"title": "Done"}}})
    r = run_flow(tmp_path, flow, files={"report.mustache.html": "<h1>{{title}}</h1>"})
    assert r.rc == 0, r.output
    msg = smtp.messages[0]["msg"]
    assert msg.get_content_type() == "text/html"
    assert msg.get_content().strip() == "<h1>Done</h1>"


@neutral
def test_attachments(smtp, tmp_path):
    flow = smtp_flow(smtp, {"from": "bot@example.com", "to": "t@example.com", "subject": "files",
                            "message": "see attached",
                            "attachments": ["report.txt",
                                            {"path": "sub/data.bin", "name": "renamed.bin",
                                             "description": "raw data", "disposition": "inline"}]})
    r = run_flow(tmp_path, flow, files={"report.txt": "hello report\n", "sub/data.bin": bytes(range(256))})
    assert r.rc == 0, r.output
    msg = smtp.messages[0]["msg"]
    assert msg.get_content_type() == "multipart/mixed"
    parts = list(msg.iter_parts())
    assert parts[0].get_content().replace("\r\n", "\n") == "see attached"
    assert parts[1].get_filename() == "report.txt" and parts[1].get_content_type() == "text/plain"
    assert parts[1].get_content_disposition() == "attachment"
    assert parts[1].get_payload(decode=True) == b"hello report\n"
    assert parts[2].get_filename() == "renamed.bin" and parts[2].get_content_disposition() == "inline"
    assert parts[2]["Content-Description"] == "raw data"
    assert parts[2].get_payload(decode=True) == bytes(range(256))


@neutral
@pytest.mark.parametrize("mail,message", [
    ({"from": "bot@example.com", "subject": "x", "message": "m"}, "'to' - expected a single string value"),
    ({"to": "a@example.com", "message": "m"}, "'mail.from' is required"),
    ({"from": "bot@example.com", "to": "a@example.com"}, "'mail.message' (or 'mail.template') is required"),
    ({"from": "bot@example.com", "to": "not-an-address", "message": "m"}, "invalid address 'not-an-address'"),
    ({"from": "bot@example.com", "to": "a@example.com", "replyTo": "r@example.com\r\nBcc: x@example.com",
      "message": "m"}, "has a line break"),
    ({"from": "bot@example.com", "to": "a@example.com", "subject": "a\r\nBcc: x@example.com", "message": "m"},
     "'from' and 'subject' must be one line each"),
    ({"from": "bot@example.com", "to": "a@example.com", "message": "m", "attachments": ["../../etc/passwd"]},
     "outside the working directory"),
    ({"from": "bot@example.com", "to": "a@example.com", "message": "m", "attachments": ["missing.txt"]},
     "attachment 'missing.txt'"),
    ({"from": "bot@example.com", "to": "a@example.com", "message": "m",
      "attachments": [{"path": "x", "disposition": "weird"}]}, "invalid 'attachment' disposition value: 'weird'"),
    ({"from": "bot@example.com", "to": "a@example.com", "template": "bad.mustache"},
     "template 'bad.mustache': template line 1: section 'open' is not closed"),
])
def test_bad_input_fails_clearly_and_sends_nothing(smtp, tmp_path, mail, message):
    r = run_flow(tmp_path, smtp_flow(smtp, mail), files={"bad.mustache": "{{#open}}"})
    assert r.rc == 1, r.output
    assert message in r.output
    assert smtp.messages == []


@neutral
def test_no_server_configured(smtp, tmp_path):
    r = run_flow(tmp_path, smtp_flow(smtp, {"from": "b@example.com", "to": "a@example.com", "message": "m"},
                                     params={}))
    assert r.rc == 1
    assert "no SMTP server: give 'smtpParams' (host, port), or start the server with --smtp-host" in r.output


@neutral
def test_server_defaults_with_login_and_masked_password(smtp, tmp_path):
    flow = """configuration:
  debug: true
flows:
  default:
  - task: smtp
    in:
      debug: true
      mail: {from: bot@example.com, to: a@example.com, subject: s, message: m}
"""
    r = run_flow(tmp_path, flow, args=["--smtp-host", "127.0.0.1", "--smtp-user=mailer", "--debug"],
                 env={"ACCORD_SMTP_PORT": str(smtp.port), "ACCORD_SMTP_PASSWORD": PASSWORD})
    assert r.rc == 0, r.output
    [m] = smtp.messages
    assert m["login"] == "mailer" and m["password"] == PASSWORD
    assert PASSWORD not in r.output


@neutral
def test_refused_send_fails_without_showing_the_password(smtp, tmp_path):
    flow = smtp_flow(smtp, {"from": "b@example.com", "to": "nobody@example.com", "message": "m"}, params={})
    r = run_flow(tmp_path, flow, args=["--smtp-host", "127.0.0.1", "--smtp-port", str(smtp.port),
                                       "--smtp-user", "mailer"], env={"ACCORD_SMTP_PASSWORD": PASSWORD})
    assert r.rc == 1
    assert "smtp: sending to smtp://127.0.0.1:%d failed" % smtp.port in r.output
    assert PASSWORD not in r.output
    assert smtp.messages == []


@neutral
def test_flow_params_override_server_defaults_without_its_credentials(smtp, tmp_path):
    # The server's default points nowhere useful; the flow names the real server, which
    # gets no login: the server's user and password stay with the server's own host.
    flow = smtp_flow(smtp, {"from": "b@example.com", "to": "a@example.com", "message": "m"})
    r = run_flow(tmp_path, flow, args=["--smtp-host", "192.0.2.1", "--smtp-port", "1", "--smtp-user", "mailer"],
                 env={"ACCORD_SMTP_PASSWORD": PASSWORD})
    assert r.rc == 0, r.output
    [m] = smtp.messages
    assert m["login"] is None and m["password"] is None


def test_server_hands_its_defaults_to_processes(smtp):
    srv = Server(env={"ACCORD_SMTP_HOST": "127.0.0.1", "ACCORD_SMTP_PORT": str(smtp.port),
                      "ACCORD_SMTP_USER": "mailer", "ACCORD_SMTP_PASSWORD": PASSWORD}).start()
    try:
        client = Client(srv.url, ADMIN_KEY)
        flow = """flows:
  default:
  - task: smtp
    in:
      debug: true
      mail: {from: bot@example.com, to: "${initiator.username}@example.com", subject: "from ${txId}", message: hi}
"""
        pid = start_process(client, flow)
        p = wait_process(client, pid)
        log = process_log(client, pid)
        assert p["status"] == "FINISHED", log
        [m] = smtp.messages
        assert m["rcpt"] == ["admin@example.com"] and m["login"] == "mailer"
        assert m["msg"]["Subject"] == "from " + pid
        assert PASSWORD not in log
        assert PASSWORD not in srv.read_log()
        # nothing the server stored (database, process state, archives) holds it
        for f in pathlib.Path(srv.data_dir).rglob("*"):
            if f.is_file():
                assert PASSWORD.encode() not in f.read_bytes(), f
    finally:
        srv.cleanup()


@neutral
def test_starttls_required_but_not_offered_fails_before_sending(smtp, tmp_path):
    flow = smtp_flow(smtp, {"from": "b@example.com", "to": "a@example.com", "message": "m"}, params={})
    r = run_flow(tmp_path, flow, args=["--smtp-host", "127.0.0.1", "--smtp-port", str(smtp.port),
                                       "--smtp-starttls", "true", "--smtp-user", "mailer"],
                 env={"ACCORD_SMTP_PASSWORD": PASSWORD})
    assert r.rc == 1
    assert "smtp: sending to smtp://127.0.0.1:%d failed" % smtp.port in r.output
    assert PASSWORD not in r.output
    assert smtp.messages == []


@neutral
def test_smtp_params_from_process_arguments_over_server_defaults(smtp, tmp_path):
    # Concord's SmtpTaskV2Test.testWithBothDefaults: the process's smtpParams variable wins
    # over the defaults of the server (here a host that would not answer).
    flow = """configuration:
  arguments:
    smtpParams: {host: 127.0.0.1, port: %d}
flows:
  default:
  - task: smtp
    in:
      mail: {from: me@localhost.localdomain, to: you@localhost.localdomain, message: "Default vars from process arguments."}
""" % smtp.port
    r = run_flow(tmp_path, flow, args=["--smtp-host", "192.0.2.1", "--smtp-port", "1"])
    assert r.rc == 0, r.output
    [m] = smtp.messages
    assert m["msg"].get_content().replace("\r\n", "\n") == "Default vars from process arguments."
