"""The LDAP realm's connections (docs/operations.md "LDAP"): logins reuse a few idle
connections to the directory (--ldap-pool-size) instead of opening one each, and a directory
that restarted under them is reconnected to; against real slapd processes
(scripts/ldap-server)."""
import subprocess
import tempfile
import os

from conftest import Client, backend_neutral
from test_ldap import LDAP_ENV, SCRIPT, basic, free_port, ldap_args, pytestmark  # noqa: F401

neutral = backend_neutral("the connections to a local slapd (their reuse and reconnection): the database takes "
                          "no part")


def start_directory(port):
    d = tempfile.mkdtemp(prefix="accord-ldap-pool-")
    os.rmdir(d)
    url = subprocess.run([SCRIPT, "start", d, str(port)], check=True, capture_output=True, text=True).stdout.strip()
    return d, url


def stop_directory(d):
    subprocess.run([SCRIPT, "stop", d], check=True)


def connections_to(port):
    """Established TCP connections whose far end is 127.0.0.1:port (the server's to slapd)."""
    n = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            if cols[3] == "01" and int(cols[2].split(":")[1], 16) == port:
                n += 1
    return n


def whoami(s, user="alice", password="alice-pw"):
    return Client(s.url, basic(user, password)).get("/api/service/console/whoami")


@neutral
def test_many_logins_in_a_row_reuse_a_few_connections(fresh_server):
    port = free_port()
    d, url = start_directory(port)
    try:
        pooled = fresh_server(env=LDAP_ENV, args=ldap_args(url) + ["--ldap-pool-size", "2"]).start()
        for i in range(40):
            r = whoami(pooled) if i % 5 else whoami(pooled, password="wrong")
            assert r.status_code == (200 if i % 5 else 401), r.text
        assert 1 <= connections_to(port) <= 2
        pooled.stop()
        unpooled = fresh_server(env=LDAP_ENV, args=ldap_args(url) + ["--ldap-pool-size", "0"]).start()
        for _ in range(5):
            assert whoami(unpooled).status_code == 200
        assert connections_to(port) == 0
    finally:
        stop_directory(d)


@neutral
def test_a_restarted_directory_is_reconnected_to(fresh_server):
    port = free_port()
    d, url = start_directory(port)
    try:
        s = fresh_server(env=LDAP_ENV, args=ldap_args(url)).start()
        assert whoami(s).status_code == 200
        assert connections_to(port) == 1
        # Restarted with no login in between: the kept connection is dead.
        stop_directory(d)
        d, _ = start_directory(port)
        r = whoami(s)
        assert r.status_code == 200, r.text
        # Down, then back.
        stop_directory(d)
        r = whoami(s)
        assert r.status_code == 503 and "LDAP directory unavailable" in r.json()["message"], r.text
        d, _ = start_directory(port)
        assert whoami(s).status_code == 200
        assert "reader-pw" not in s.read_log()
    finally:
        stop_directory(d)
