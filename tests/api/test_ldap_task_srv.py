"""The `ldap` task's `dnsSrvRr` and `certificate` (docs/flows.md "ldap", Concord's ldap
plugin): the directory found through a DNS SRV record served by a real DNS server
(Debian's dnsmasq on a loopback port, the server pointed at it with
--ldap-task-dns-server), its servers tried in priority order while they cannot be
reached, ldapAdServer as the fallback of a name without records; and the CAs of
`certificate` (text or a file of the process) trusted for ldaps:// instead of the
system's."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import ADMIN_PASSWORD, Client, Server, backend_neutral, process_log, start_process, wait_process
from test_ldap import BASE, basic, directory, free_port, pytestmark, tls_directory  # noqa: F401

neutral = backend_neutral("the ldap task's DNS SRV lookup and certificates against local dnsmasq and slapd, in "
                          "the runner: the database takes no part; test_ldap_task runs the task on both "
                          "backends")

READER = "cn=reader,ou=system," + BASE
DNSMASQ = shutil.which("dnsmasq") or "/usr/sbin/dnsmasq"


def dns_server(records):
    """dnsmasq answering only the SRV records given as (name, target, port, priority, weight)
    on 127.0.0.1:<port>; yields "127.0.0.1:<port>"."""
    port = free_port()
    d = tempfile.mkdtemp(prefix="accord-dns-")
    args = [DNSMASQ, "--keep-in-foreground", "--port=%d" % port, "--listen-address=127.0.0.1", "--bind-interfaces",
            "--no-resolv", "--no-hosts", "--no-poll", "--conf-file=/dev/null", "--pid-file=" + os.path.join(d, "pid"),
            "--user=nobody" if os.geteuid() == 0 else "--user=" + os.environ.get("USER", "nobody")]
    args += ["--srv-host=%s,%s,%d,%d,%d" % r for r in records]
    # every other name in the test domain: no such name (not forwarded anywhere)
    args += ["--local=/accord.test/"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 10
    while True:  # ready once the port answers
        r = subprocess.run(["python3", "-c", "import socket;s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM);"
                            "s.settimeout(0.2);s.sendto(b'\\x00\\x01\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00"
                            "\\x00\\x00\\x00\\x00\\x01\\x00\\x01', ('127.0.0.1', %d));s.recv(512)" % port],
                           capture_output=True)
        if r.returncode == 0:
            break
        assert p.poll() is None, p.stderr.read().decode()
        assert time.time() < deadline, "dnsmasq did not answer"
        time.sleep(0.1)
    return p, d, "127.0.0.1:%d" % port


@pytest.fixture(scope="module")
def dns_srv(directory):  # noqa: F811
    if not os.path.exists(DNSMASQ):
        pytest.fail("dnsmasq is not installed (scripts/deps)")
    ldap_port = int(directory.rstrip("/").rsplit(":", 1)[1])
    dead = free_port()
    records = [
        # tried first: a name that resolves nowhere, then a port where nothing listens
        ("_ldap._tcp.accord.test", "nowhere.invalid", ldap_port, 0, 0),
        ("_ldap._tcp.accord.test", "localhost", dead, 5, 10),
        ("_ldap._tcp.accord.test", "localhost", ldap_port, 10, 0),
        ("_ldap._tcp.down.accord.test", "localhost", dead, 0, 0),
    ]
    p, d, addr = dns_server(records)
    s = Server(args=["--ldap-task-dns-server", addr], admin_password=True).start()
    yield Client(s.url, basic("admin", ADMIN_PASSWORD)), ldap_port, dead
    s.cleanup()
    p.send_signal(signal.SIGTERM)
    p.wait(10)
    shutil.rmtree(d, ignore_errors=True)


def run(admin, params, steps, files=None):
    flow = """
configuration:
  arguments:
    ldapParams:
%s
flows:
  default:
%s
""" % ("\n".join("      %s: %s" % kv for kv in params.items()),
       "\n".join("    " + line for line in steps.strip().splitlines()))
    pid = start_process(admin, flow, files=files)
    return pid, wait_process(admin, pid, timeout=60)["status"], process_log(admin, pid)


def params(**extra):
    p = {"bindUserDn": '"%s"' % READER, "bindPassword": '"reader-pw"', "searchBase": '"%s"' % BASE}
    p.update(extra)
    return p


GET_ALICE = """
- task: ldap
  in: {action: getUser, user: "alice@example.org"}
  out: u
- log: "found=${u.success} dn=${u.result.dn}"
"""


@neutral
def test_the_servers_of_a_srv_record_are_tried_in_priority_order(dns_srv):
    admin, ldap_port, dead = dns_srv
    # the record's port ignored for the one of dnsSrvRr, as in Concord: the unreachable
    # names are passed over
    _, status, log = run(admin, params(dnsSrvRr="{name: _ldap._tcp.accord.test, protocol: ldap, port: '%d'}"
                                       % ldap_port), GET_ALICE)
    assert status == "FINISHED", log
    assert "found=true dn=cn=alice,ou=people,%s" % BASE in log
    assert "ldap: used ldap://localhost:%d of the SRV record _ldap._tcp.accord.test" % ldap_port in log
    # without a port, each record's own: the dead port is passed over for the next one
    _, status, log = run(admin, params(dnsSrvRr="{name: _ldap._tcp.accord.test, protocol: ldap}"), GET_ALICE)
    assert status == "FINISHED", log
    assert "found=true" in log
    assert "ldap: used ldap://localhost:%d of the SRV record" % ldap_port in log


@neutral
def test_dns_srv_rr_is_preferred_to_ldap_ad_server(dns_srv):
    admin, ldap_port, dead = dns_srv
    _, status, log = run(admin, params(dnsSrvRr="{name: _ldap._tcp.accord.test, protocol: ldap}",
                                       ldapAdServer='"ldap://127.0.0.1:%d/"' % dead), GET_ALICE)
    assert status == "FINISHED", log
    assert "found=true" in log


@neutral
def test_a_name_without_records_falls_back_to_ldap_ad_server_or_fails(dns_srv, directory):  # noqa: F811
    admin, ldap_port, dead = dns_srv
    srv = "{name: _ldap._tcp.none.accord.test, protocol: ldap, port: %d}" % ldap_port
    _, status, log = run(admin, params(dnsSrvRr=srv, ldapAdServer='"%s"' % directory), GET_ALICE)
    assert status == "FINISHED", log
    assert "found=true" in log
    _, status, log = run(admin, params(dnsSrvRr=srv), GET_ALICE)
    assert status == "FAILED", log
    assert "ldap: dnsSrvRr: DNS: no SRV record for _ldap._tcp.none.accord.test" in log
    assert "reader-pw" not in log


@neutral
def test_every_server_of_the_record_down_fails_naming_them(dns_srv):
    admin, ldap_port, dead = dns_srv
    _, status, log = run(admin, params(dnsSrvRr="{name: _ldap._tcp.down.accord.test, protocol: ldap}"), GET_ALICE)
    assert status == "FAILED", log
    assert ("ldap: cannot reach any server of the SRV record _ldap._tcp.down.accord.test (tried ldap://localhost:%d)"
            % dead) in log


@neutral
@pytest.mark.parametrize("srv,expect", [
    ("'_ldap._tcp.accord.test'", "'dnsSrvRr' must be a map of name, protocol and port"),
    ("{protocol: ldap}", "'dnsSrvRr.name' is required"),
    ("{name: _ldap._tcp.accord.test}", "'dnsSrvRr.protocol' is required: ldap or ldaps"),
    ("{name: _ldap._tcp.accord.test, protocol: http}", "'dnsSrvRr.protocol' is required: ldap or ldaps"),
    ("{name: _ldap._tcp.accord.test, protocol: ldap, port: 'x1'}", "'dnsSrvRr.port' must be a port number"),
    ("{name: _ldap._tcp.accord.test, protocol: ldap, port: 70000}", "'dnsSrvRr.port' must be a port number"),
])
def test_bad_dns_srv_rr_fails_the_step_clearly(dns_srv, srv, expect):
    admin, _, _ = dns_srv
    _, status, log = run(admin, params(dnsSrvRr=srv), GET_ALICE)
    assert status == "FAILED", log
    assert expect in log


@neutral
def test_a_bad_dns_server_setting_is_refused_at_start():
    s = Server(args=["--ldap-task-dns-server", "dns.example.com:53"])
    with pytest.raises(RuntimeError) as refused:
        s.start(timeout=10)
    s.cleanup()
    assert "--ldap-task-dns-server: DNS server 'dns.example.com:53': expected an IPv4 address" in str(refused.value)


@neutral
def test_the_certificate_given_is_trusted_for_ldaps(admin, tls_directory):  # noqa: F811
    _, ldaps, ca_file = tls_directory
    with open(ca_file) as f:
        ca = f.read()
    # without it the system's CAs do not know the directory's
    _, status, log = run(admin, params(ldapAdServer='"%s"' % ldaps), GET_ALICE)
    assert status == "FAILED", log
    assert "ldap: cannot reach %s" % ldaps in log
    # its text
    indented = "\n".join("          " + line for line in ca.strip().splitlines())
    _, status, log = run(admin, params(ldapAdServer='"%s"' % ldaps, certificate="\n        text: |\n" + indented),
                         GET_ALICE)
    assert status == "FINISHED", log
    assert "found=true dn=cn=alice,ou=people,%s" % BASE in log
    # a file of the process
    _, status, log = run(admin, params(ldapAdServer='"%s"' % ldaps, certificate="{file: certs/ca.pem}"), GET_ALICE,
                         files={"certs/ca.pem": ca.encode()})
    assert status == "FINISHED", log
    assert "found=true" in log


@neutral
@pytest.mark.parametrize("cert,expect", [
    ("{text: 'not a certificate'}", "'certificate' holds no PEM certificate"),
    ("{file: ../../etc/passwd}", "'certificate.file' '../../etc/passwd'"),
    ("{file: missing.pem}", "'certificate.file' 'missing.pem'"),
    ("'just text'", "'certificate' must be a map of text and/or file"),
])
def test_a_bad_certificate_fails_the_step_clearly(admin, tls_directory, cert, expect):  # noqa: F811
    _, ldaps, _ = tls_directory
    _, status, log = run(admin, params(ldapAdServer='"%s"' % ldaps, certificate=cert), GET_ALICE)
    assert status == "FAILED", log
    assert expect in log
