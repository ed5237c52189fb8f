"""The `smtp` task over TLS against a real SMTP server (Debian's python3-aiosmtpd): STARTTLS
that the server requires before MAIL and AUTH, and implicit TLS (smtps, the server speaks TLS
from the first byte), each with a CA and a server certificate the test makes with openssl.
The certificate is always checked: against the CA the settings name (--smtp-ca-file, or
smtpParams.caFile in a flow), else against the system's CAs, which do not know this one."""
import json
import os
import pathlib
import re
import ssl
import subprocess
import tempfile

import pytest

from conftest import Server, backend_neutral, start_process, wait_process, process_log, ADMIN_KEY, Client
from test_smtp_task import BIN, PASSWORD, TS, Sink, authenticate, free_port  # noqa: F401 (aiosmtpd or skip)

from aiosmtpd.controller import Controller  # noqa: E402

pytestmark = backend_neutral("the smtp task's TLS against a local SMTP server, mostly through accord run: "
                             "the database takes no part; test_smtp_task's server test runs the task under "
                             "the server on both backends")


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """A CA, and a server certificate it signed for 127.0.0.1 and localhost."""
    d = tmp_path_factory.mktemp("smtp-tls")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Accord Test CA",
            "-keyout", "ca.key", "-out", "ca.pem", cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key",
            "-out", "server.csr", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "ext.cnf", "-out", "server.pem", cwd=d)
    os.chmod(d / "ca.pem", 0o644)
    return d


def server_context(certs):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(certs / "server.pem"), str(certs / "server.key"))
    return ctx


@pytest.fixture(scope="module")
def starttls(certs):
    """Requires STARTTLS before MAIL and before AUTH."""
    sink = Sink()
    sink.port = free_port()
    c = Controller(sink, hostname="127.0.0.1", port=sink.port, authenticator=authenticate,
                   tls_context=server_context(certs), require_starttls=True, auth_require_tls=True)
    c.start()
    yield sink
    c.stop()


@pytest.fixture(scope="module")
def smtps(certs):
    """TLS from the first byte (aiosmtpd counts only STARTTLS as TLS for auth_require_tls,
    so AUTH is offered here without it)."""
    sink = Sink()
    sink.port = free_port()
    c = Controller(sink, hostname="127.0.0.1", port=sink.port, authenticator=authenticate,
                   ssl_context=server_context(certs), auth_require_tls=False)
    c.start()
    yield sink
    c.stop()


@pytest.fixture(autouse=True)
def clear(request):
    for name in ("starttls", "smtps"):
        if name in request.fixturenames:
            request.getfixturevalue(name).messages.clear()


MAIL = {"from": "Accord Bot <bot@example.com>", "to": "a@example.com", "cc": ["c@example.com"],
        "subject": "over TLS", "message": "sealed body", "attachments": ["report.txt"]}


def flow_of(params=None, mail=MAIL):
    step = {"task": "smtp", "in": {"mail": mail}, "out": "r"}
    if params:
        step["in"]["smtpParams"] = params
    return "flows:\n  default:\n  - %s\n  - log: 'ok=${r.ok}'\n" % json.dumps(step)


def run_flow(tmp_path, flow, certs, args=(), env=None):
    base = pathlib.Path(tempfile.mkdtemp(dir=tmp_path))
    d = base / "flow"
    d.mkdir()
    (d / "concord.yml").write_text(flow)
    (d / "report.txt").write_text("hello report\n")
    (d / "ca.pem").write_bytes((certs / "ca.pem").read_bytes())
    e = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_SMTP")}
    e.update(env or {})
    proc = subprocess.run([BIN, "run", str(d), "--workdir", str(base / "work")] + list(args), capture_output=True,
                          text=True, timeout=60, env=e)
    return proc.returncode, TS.sub("", proc.stdout + proc.stderr)


def check_message(sink, login="mailer"):
    [m] = sink.messages
    assert m["from"] == "bot@example.com"
    assert m["rcpt"] == ["a@example.com", "c@example.com"]
    assert m["login"] == login
    msg = m["msg"]
    assert msg["From"] == "Accord Bot <bot@example.com>" and msg["Subject"] == "over TLS"
    parts = list(msg.iter_parts())
    assert parts[0].get_content().replace("\r\n", "\n") == "sealed body"
    assert parts[1].get_filename() == "report.txt" and parts[1].get_payload(decode=True) == b"hello report\n"


def run_with_server_settings(tmp_path, certs, host, port, tls_flag):
    """accord run with the server's SMTP settings: the host, TLS, the test's CA and a login."""
    return run_flow(tmp_path, flow_of(), certs,
                    args=["--smtp-host", host, "--smtp-port", str(port), tls_flag, "true",
                          "--smtp-ca-file", str(certs / "ca.pem"), "--smtp-user", "mailer"],
                    env={"ACCORD_SMTP_PASSWORD": PASSWORD})


def test_starttls_with_the_servers_ca_file_and_login(starttls, certs, tmp_path):
    rc, out = run_with_server_settings(tmp_path, certs, "127.0.0.1", starttls.port, "--smtp-starttls")
    assert rc == 0, out
    assert "ok=true" in out
    check_message(starttls)
    assert PASSWORD not in out


def test_starttls_with_a_flows_own_ca_file(starttls, certs, tmp_path):
    params = {"host": "127.0.0.1", "port": starttls.port, "starttls": True, "caFile": "ca.pem",
              "username": "mailer", "password": PASSWORD}
    rc, out = run_flow(tmp_path, flow_of(params), certs)
    assert rc == 0, out
    check_message(starttls)
    assert PASSWORD not in out


def test_starttls_checks_the_certificate_by_default(starttls, certs, tmp_path):
    # No CA named: the system's CAs do not know the test's, so nothing is sent.
    params = {"host": "127.0.0.1", "port": starttls.port, "starttls": True, "username": "mailer",
              "password": PASSWORD}
    rc, out = run_flow(tmp_path, flow_of(params), certs)
    assert rc == 1, out
    assert "smtp: sending to smtp://127.0.0.1:%d failed" % starttls.port in out
    assert re.search(r"certificate|SSL", out), out
    assert PASSWORD not in out
    assert starttls.messages == []


def test_implicit_tls_with_a_flows_params(smtps, certs, tmp_path):
    params = {"host": "127.0.0.1", "port": smtps.port, "ssl": True, "caFile": "ca.pem", "username": "mailer",
              "password": PASSWORD}
    rc, out = run_flow(tmp_path, flow_of(params), certs)
    assert rc == 0, out
    check_message(smtps)


def test_implicit_tls_with_the_servers_settings(smtps, certs, tmp_path):
    rc, out = run_with_server_settings(tmp_path, certs, "localhost", smtps.port, "--smtp-ssl")
    assert rc == 0, out
    check_message(smtps)


def test_implicit_tls_checks_the_certificate_by_default(smtps, certs, tmp_path):
    rc, out = run_flow(tmp_path, flow_of({"host": "127.0.0.1", "port": smtps.port, "ssl": True}), certs)
    assert rc == 1, out
    assert "smtp: sending to smtps://127.0.0.1:%d failed" % smtps.port in out
    assert smtps.messages == []


@pytest.mark.parametrize("content,message", [
    (None, "--smtp-ca-file"),
    ("not a certificate\n", "holds no PEM certificate"),
])
def test_a_bad_ca_file_is_a_usage_error(certs, tmp_path, content, message):
    path = tmp_path / "ca-bad.pem"
    if content is not None:
        path.write_text(content)
    rc, out = run_flow(tmp_path, flow_of(), certs, args=["--smtp-host", "127.0.0.1", "--smtp-ca-file", str(path)])
    assert rc == 2, out
    assert message in out and str(path) in out


def test_a_flows_ca_file_without_a_certificate_fails_the_step(starttls, certs, tmp_path):
    params = {"host": "127.0.0.1", "port": starttls.port, "starttls": True, "caFile": "report.txt"}
    rc, out = run_flow(tmp_path, flow_of(params), certs)
    assert rc == 1, out
    assert "'smtpParams.caFile' holds no PEM certificate" in out
    assert starttls.messages == []


@pytest.mark.parametrize("mode", ["starttls", "ssl"])
def test_server_sends_over_tls_with_its_settings(request, certs, mode):
    sink = request.getfixturevalue("starttls" if mode == "starttls" else "smtps")
    sink.messages.clear()
    env = {"ACCORD_SMTP_HOST": "127.0.0.1", "ACCORD_SMTP_PORT": str(sink.port), "ACCORD_SMTP_USER": "mailer",
           "ACCORD_SMTP_PASSWORD": PASSWORD, "ACCORD_SMTP_CA_FILE": str(certs / "ca.pem"),
           "ACCORD_SMTP_STARTTLS" if mode == "starttls" else "ACCORD_SMTP_SSL": "true"}
    srv = Server(env=env).start()
    try:
        client = Client(srv.url, ADMIN_KEY)
        pid = start_process(client, flow_of(), files={"report.txt": b"hello report\n"})
        p = wait_process(client, pid)
        log = process_log(client, pid)
        assert p["status"] == "FINISHED", log
        check_message(sink)
        assert PASSWORD not in log and PASSWORD not in srv.read_log()
    finally:
        srv.cleanup()


def test_server_with_a_missing_ca_file_does_not_start(tmp_path):
    missing = str(tmp_path / "nope.pem")
    srv = Server(env={"ACCORD_SMTP_HOST": "127.0.0.1", "ACCORD_SMTP_CA_FILE": missing})
    try:
        with pytest.raises(RuntimeError) as exc:
            srv.start()
        assert "exited 2" in str(exc.value) and "--smtp-ca-file" in str(exc.value) and missing in str(exc.value)
    finally:
        srv.cleanup()
