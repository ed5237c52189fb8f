"""The HTTP layer against hostile clients (issue 15 part 11): a whole-request deadline,
framing that libmicrohttpd would misread, NUL bytes, and JSON error pages."""
import socket
import threading
import time

import requests

from conftest import ADMIN_KEY, Client, backend_neutral, unique

neutral = backend_neutral("the HTTP layer's parsing and deadlines, before any route reaches the store")


def raw(url, data, timeout=10):
    """Sends bytes on a fresh connection and returns everything the server answers."""
    host, port = url.replace("http://", "").split(":")
    s = socket.create_connection((host, int(port)), timeout=timeout)
    try:
        s.sendall(data)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def status_and_body(resp):
    head, _, body = resp.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/") else None
    return status, head, body


@neutral
def test_trickled_requests_are_closed_at_the_deadline(fresh_server):
    srv = fresh_server(args=["--limit-http-request-s", "2", "--limit-http-connections", "300"]).start()
    host, port = srv.url.replace("http://", "").split(":")
    slow = []
    for _ in range(250):
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(b"GET /api/v1/server/ping HTTP/1.1\r\nHost: x\r\n")
        slow.append(s)
    closed = [False] * len(slow)
    stop = threading.Event()

    def trickle():
        # One header byte a second on every connection: each byte would restart an idle timeout.
        while not stop.is_set():
            for i, s in enumerate(slow):
                if closed[i]:
                    continue
                try:
                    s.sendall(b"X")
                except OSError:
                    closed[i] = True
            stop.wait(1.0)

    t = threading.Thread(target=trickle)
    t.start()
    try:
        # Others are still answered while the slow ones hold their connections.
        r = requests.get(srv.url + "/api/v1/server/ping", timeout=5)
        assert r.status_code == 200, r.text
        deadline = time.time() + 8
        while time.time() < deadline and not all(closed):
            for i, s in enumerate(slow):
                if closed[i]:
                    continue
                s.setblocking(False)
                try:
                    if s.recv(1) == b"":
                        closed[i] = True
                except BlockingIOError:
                    pass
                except OSError:
                    closed[i] = True
            time.sleep(0.2)
        assert all(closed), "%d of %d trickling connections still open" % (closed.count(False), len(closed))
        r = requests.get(srv.url + "/api/v1/server/ping", timeout=5)
        assert r.status_code == 200, r.text
    finally:
        stop.set()
        t.join()
        for s in slow:
            s.close()
    assert "did not arrive within 2 s" in srv.read_log()


@neutral
def test_a_slow_body_is_closed_at_the_deadline(fresh_server):
    srv = fresh_server(args=["--limit-http-request-s", "2"]).start()
    host, port = srv.url.replace("http://", "").split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall(b"POST /api/v1/org HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 100\r\nAuthorization: " + ADMIN_KEY.encode() + b"\r\n\r\n{")
    # The server closes it at its deadline even though bytes keep coming; without the
    # deadline the body would trickle in until this loop gives up.
    start = time.time()
    gone = False
    while time.time() - start < 30:
        try:
            s.sendall(b" ")
            s.settimeout(1.0)
            if s.recv(1) == b"":
                gone = True
                break
        except socket.timeout:
            continue
        except OSError:
            gone = True
            break
    s.close()
    assert gone
    # closed by the deadline (its line is logged just after the close)
    deadline = time.time() + 30
    while "did not arrive within 2 s" not in srv.read_log() and time.time() < deadline:
        time.sleep(0.05)
    assert "did not arrive within 2 s" in srv.read_log()


@neutral
def test_a_keep_alive_connection_gets_a_fresh_deadline_per_request(fresh_server):
    srv = fresh_server(args=["--limit-http-request-s", "2"]).start()
    with requests.Session() as s:
        for _ in range(3):
            r = s.get(srv.url + "/api/v1/server/ping", timeout=5)
            assert r.status_code == 200
            time.sleep(1.0)


@neutral
def test_unsupported_transfer_coding_is_refused(server):
    out = raw(server.url, b"POST /api/v1/org HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Transfer-Encoding: gzip\r\n\r\nabc", timeout=5)
    status, head, body = status_and_body(out)
    assert status == 400, out
    assert b'"ok":false' in body.replace(b" ", b"") and b"Transfer-Encoding 'gzip' is not supported" in body


@neutral
def test_two_different_content_lengths_are_refused(server):
    out = raw(server.url, b"POST /api/v1/org HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 2\r\nContent-Length: 10\r\n\r\n{}", timeout=5)
    status, head, body = status_and_body(out)
    assert status == 400, out
    assert b"several different Content-Length" in body


@neutral
def test_content_length_and_transfer_encoding_together_are_refused(server):
    out = raw(server.url, b"POST /api/v1/org HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", timeout=5)
    status, head, body = status_and_body(out)
    assert status == 400, out
    assert b"both Content-Length and Transfer-Encoding" in body


@neutral
def test_huge_content_length_is_refused_in_json(server):
    out = raw(server.url, b"POST /api/v1/org HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: 9223372036854775807\r\n\r\n{}", timeout=5)
    status, head, body = status_and_body(out)
    assert status == 413, out
    assert b'"ok":false' in body.replace(b" ", b""), out


@neutral
def test_long_url_and_headers_are_refused_in_json(server):
    r = requests.get(server.url + "/api/v1/org/" + "a" * 20000, timeout=10)
    assert r.status_code == 414, r.text[:200]
    assert r.json()["ok"] is False and "URL exceeds the limit" in r.json()["message"]
    r = requests.get(server.url + "/api/v1/server/ping", headers={"X-Big": "b" * 40000}, timeout=10)
    assert r.status_code == 431, r.text[:200]
    assert r.json()["ok"] is False and "headers exceed the limit" in r.json()["message"]
    r = requests.get(server.url + "/api/v1/server/ping", params={"q": "c" * 40000}, timeout=10)
    assert r.status_code == 431, r.text[:200]
    assert r.json()["ok"] is False


@neutral
def test_nul_in_path_and_query_is_refused(server):
    admin = Client(server.url, ADMIN_KEY)
    org = unique("org")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    r = admin.get("/api/v1/org/" + org + "%00trailing")
    assert r.status_code == 400, r.text
    assert "NUL" in r.json()["message"]
    r = admin.get("/api/v1/org?name=a%00b")
    assert r.status_code == 400, r.text


@neutral
def test_nul_in_json_strings_is_refused(server):
    admin = Client(server.url, ADMIN_KEY)
    org = unique("org")
    r = admin.post("/api/v1/org", data='{"name": "%s\\u0000x"}' % org, headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert "NUL" in r.json()["message"] or "\\u0000" in r.json()["message"], r.text
    assert admin.get("/api/v1/org/" + org).status_code == 404
    r = admin.post("/api/v1/org", data=b'{"name": "' + org.encode() + b'\x00x"}',
                   headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert admin.get("/api/v1/org/" + org).status_code == 404


@neutral
def test_nul_in_a_multipart_name_is_refused(server):
    admin = Client(server.url, ADMIN_KEY)
    org = unique("org")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nsec\x00ret\r\n"
            b"--XyZ\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nDATA\r\n"
            b"--XyZ\r\nContent-Disposition: form-data; name=\"da\x00ta\"\r\n\r\nvalue\r\n--XyZ--\r\n")
    r = admin.post("/api/v1/org/%s/secret" % org, data=body,
                   headers={"Content-Type": "multipart/form-data; boundary=XyZ"})
    assert r.status_code == 400, r.text
    assert "NUL" in r.json()["message"], r.text


def test_deep_inventory_item_paths(server):
    admin = Client(server.url, ADMIN_KEY)
    inv = unique("inv")
    assert admin.post("/api/v1/org/Default/inventory", json={"name": inv}).status_code == 200
    base = "/api/v1/org/Default/inventory/%s/data/" % inv
    path = "/".join("s%d" % i for i in range(60))
    r = admin.post(base + path, json={"deep": True})
    assert r.status_code == 200, r.text
    r = admin.get(base + path, params={"singleItem": "true"})
    assert r.status_code == 200 and r.json() == {"deep": True}, r.text
    r = admin.get(base + path + "/", params={"singleItem": "true"})
    assert r.status_code == 200 and r.json() == {"deep": True}, r.text
    # deeper than any route still answers 404 for other endpoints
    assert admin.get("/api/v1/org/Default/" + "/".join(["x"] * 40)).status_code == 404
