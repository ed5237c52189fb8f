"""Live-log followers and connection hogs (issue 23 items 2 and 3): followers are capped per
user, per process and in the whole server (the rest of the connections stay for other
requests), a follower whose client hung up is closed while the process still sleeps, one
address cannot hold more than its share of connections, and request headers must arrive
within a short deadline.  Every limit is set small by flag, so no test needs many sockets."""
import socket
import time

import requests

from conftest import ADMIN_KEY, Client, start_process

SLEEPER = "flows:\n  default:\n    - log: waiting\n    - task: sleep\n      in: {duration: 120}\n"


def host_port(srv):
    host, port = srv.url.replace("http://", "").split(":")
    return host, int(port)


def read_head(s):
    """Reads up to the end of the response headers: (status, head, bytes after them)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else None
    return status, head, rest


def follow(srv, pid, key=ADMIN_KEY):
    """Opens GET .../log?follow=true on a raw socket: (status, socket, head, bytes after it).
    A follower keeps the socket; anything else is closed here after its body was read."""
    s = socket.create_connection(host_port(srv), timeout=10)
    s.sendall(("GET /api/v1/process/%s/log?follow=true HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n"
               % (pid, key)).encode())
    status, head, rest = read_head(s)
    if status != 200:
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
                while len(rest) < n:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    rest += chunk
        s.close()
        return status, None, head, rest
    return status, s, head, rest


def follow_until_accepted(srv, pid, timeout=20):
    """A follower is accepted once the slot of a closed one is free: retried until then."""
    deadline = time.time() + timeout
    while True:
        status, s, _, body = follow(srv, pid)
        if status == 200:
            return s
        assert status == 429, body
        assert time.time() < deadline, "still refused after %ss: %s" % (timeout, body)
        time.sleep(0.2)


def sleeping(admin):
    pid = start_process(admin, SLEEPER)
    deadline = time.time() + 30
    while b"waiting" not in admin.get("/api/v1/process/%s/log" % pid).content:
        assert time.time() < deadline, "the process never logged"
        time.sleep(0.05)
    return pid


def ping(srv, source="127.0.0.1"):
    s = socket.create_connection(host_port(srv), timeout=10, source_address=(source, 0))
    try:
        s.sendall(b"GET /api/v1/server/ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return read_head(s)[0]
    finally:
        s.close()


def test_followers_leave_connections_for_other_requests_and_hang_ups_free_them(fresh_server):
    # A long header deadline: its shutdowns of idle connections must not be what frees the
    # followers' connections.
    srv = fresh_server(args=["--shutdown-grace-ms", "500", "--limit-http-header-s", "60",
                             "--limit-http-connections", "24", "--limit-log-followers", "12",
                             "--limit-log-followers-per-user", "100",
                             "--limit-log-followers-per-process", "100"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = sleeping(admin)
    followers, refused = [], []
    try:
        for _ in range(24):
            status, s, _, body = follow(srv, pid)
            if s:
                followers.append(s)
            else:
                refused.append((status, body))
        assert len(followers) == 12
        assert len(refused) == 12
        assert all(st == 429 for st, _ in refused), refused
        assert b'"ok":false' in refused[0][1].replace(b" ", b"")
        assert b"--limit-log-followers" in refused[0][1]
        # The connections the followers may not take still answer everything else.
        assert ping(srv) == 200
        assert admin.get("/api/v2/process/%s" % pid).json()["status"] == "RUNNING"
        # The clients hang up while the process still sleeps: their slots come back.
        for s in followers:
            s.close()
        followers = [follow_until_accepted(srv, pid) for _ in range(12)]
        assert ping(srv) == 200
        assert admin.get("/api/v2/process/%s" % pid).json()["status"] == "RUNNING"
    finally:
        for s in followers:
            s.close()
    # A client hanging up is no news for the operator: no warning per closed follower.
    assert [l for l in srv.read_log().splitlines() if "level=warn" in l] == []


def test_followers_are_capped_per_process_and_per_user(fresh_server):
    srv = fresh_server(args=["--shutdown-grace-ms", "500", "--limit-http-header-s", "60",
                             "--limit-log-followers-per-user", "3",
                             "--limit-log-followers-per-process", "2"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    one, two = sleeping(admin), sleeping(admin)
    kept = []
    try:
        for _ in range(2):
            status, s, _, _ = follow(srv, one)
            assert status == 200
            kept.append(s)
        status, _, head, body = follow(srv, one)
        assert status == 429, body
        assert b"application/json" in head.lower()
        assert b"--limit-log-followers-per-process" in body and b'"ok":false' in body.replace(b" ", b"")
        status, s, _, _ = follow(srv, two)
        assert status == 200
        kept.append(s)
        status, _, _, body = follow(srv, two)
        assert status == 429, body
        assert b"--limit-log-followers-per-user" in body
        # Reading the log without following is never capped.
        r = admin.get("/api/v1/process/%s/log" % two)
        assert r.status_code == 200 and b"waiting" in r.content
        # A follower that hangs up gives its slot back while the process still runs.
        kept.pop(0).close()
        kept.append(follow_until_accepted(srv, one))
    finally:
        for s in kept:
            s.close()


def test_follower_limit_must_leave_room_for_other_requests(fresh_server):
    srv = fresh_server(args=["--limit-http-connections", "10", "--limit-log-followers", "10"])
    try:
        srv.start(timeout=10)
        assert False, "the server started"
    except RuntimeError as e:
        assert "--limit-log-followers" in str(e)
    assert srv.proc.returncode == 2


def test_one_address_cannot_take_every_connection(fresh_server):
    srv = fresh_server(args=["--limit-http-connections-per-address", "4"]).start()
    idle = [socket.create_connection(host_port(srv), timeout=10) for _ in range(4)]
    try:
        # The fifth connection from that address is closed without an answer...
        try:
            status = ping(srv)
        except (ConnectionResetError, BrokenPipeError):
            status = None
        assert status is None
        # ...while another address is served.
        assert ping(srv, source="127.0.0.2") == 200
    finally:
        for s in idle:
            s.close()
    deadline = time.time() + 20
    while True:
        try:
            if ping(srv) == 200:
                break
        except (ConnectionResetError, BrokenPipeError):
            pass
        assert time.time() < deadline, "the address is still refused after its connections closed"
        time.sleep(0.1)


def closed_by_server(s, timeout=10):
    s.settimeout(timeout)
    try:
        return s.recv(1) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_headers_must_arrive_within_the_header_deadline(fresh_server):
    srv = fresh_server(args=["--limit-http-header-s", "1", "--limit-http-request-s", "30"]).start()
    silent = socket.create_connection(host_port(srv), timeout=10)
    partial = socket.create_connection(host_port(srv), timeout=10)
    body = socket.create_connection(host_port(srv), timeout=10)
    try:
        partial.sendall(b"GET /api/v1/server/ping HTTP/1.1\r\nHost: x\r\n")
        # Headers in time, then a body that takes longer than the header deadline: the
        # request deadline (30 s) applies to it, not the header one.
        body.sendall(b"POST /api/v1/org HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\nContent-Length: 16\r\nAuthorization: " + ADMIN_KEY.encode() +
                     b"\r\n\r\n")
        assert closed_by_server(silent)
        assert closed_by_server(partial)
        body.sendall(b'{"name":"slow1"}')
        status, _, _ = read_head(body)
        assert status is not None and status != 408, status
    finally:
        for s in (silent, partial, body):
            s.close()
    assert "headers did not arrive within 1 s" in srv.read_log()
    assert requests.get(srv.url + "/api/v1/server/ping", timeout=10).status_code == 200
