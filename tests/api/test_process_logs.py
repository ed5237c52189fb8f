"""GET /api/v1/process/{id}/log: the whole log, every Range form (RFC 9110 plus the
spec's bare a-b), 416, malformed ranges, follow=true streaming, access."""
import threading
import time
import uuid

import pytest

from conftest import FINAL, start_process, wait_process

FLOW = """
flows:
  default:
    - log: "first line"
    - log: "second line"
"""

SLOW_FLOW = """
flows:
  default:
    - log: "before the nap"
    - task: sleep
      in: {duration: 2}
    - log: "after the nap"
"""


def finished(client, flow, **kw):
    pid = start_process(client, flow, **kw)
    assert wait_process(client, pid)["status"] == "FINISHED"
    return pid


def status(client, pid):
    return client.get("/api/v2/process/%s" % pid).json()["status"]


@pytest.fixture(scope="module")
def done(server):
    from conftest import ADMIN_KEY, Client
    admin = Client(server.url, ADMIN_KEY)
    pid = finished(admin, FLOW)
    r = admin.get("/api/v1/process/%s/log" % pid)
    assert r.status_code == 200
    return pid, r.content


def log(client, pid, rng=None, **params):
    headers = {"Range": rng} if rng is not None else {}
    return client.get("/api/v1/process/%s/log" % pid, headers=headers, params=params)


def test_whole_log(admin, done):
    pid, full = done
    r = log(admin, pid)
    assert r.status_code == 200
    assert r.headers["Content-Type"].startswith("text/plain")
    assert r.headers["Accept-Ranges"] == "bytes"
    assert "Content-Range" not in r.headers
    assert b"first line" in full and b"second line" in full
    assert full.index(b"first line") < full.index(b"second line")
    assert log(admin, pid, "").content == full


@pytest.mark.parametrize("rng,sl", [
    ("bytes=0-9", slice(0, 10)),
    ("bytes=5-5", slice(5, 6)),
    ("bytes=7-", slice(7, None)),
    ("bytes=-6", slice(-6, None)),
    ("3-12", slice(3, 13)),
    ("4-", slice(4, None)),
    ("-3", slice(-3, None)),
    ("BYTES=1-2", slice(1, 3)),
])
def test_range_forms(admin, done, rng, sl):
    pid, full = done
    r = log(admin, pid, rng)
    assert r.status_code == 206, r.text
    want = full[sl]
    first = sl.start if sl.start >= 0 else len(full) + sl.start
    assert r.content == want
    assert r.headers["Content-Range"] == "bytes %d-%d/%d" % (first, first + len(want) - 1, len(full))
    assert int(r.headers["Content-Length"]) == len(want)


def test_range_clamped(admin, done):
    pid, full = done
    r = log(admin, pid, "bytes=2-99999999")
    assert r.status_code == 206
    assert r.content == full[2:]
    assert r.headers["Content-Range"] == "bytes 2-%d/%d" % (len(full) - 1, len(full))
    r = log(admin, pid, "bytes=-99999999")
    assert r.status_code == 206
    assert r.content == full
    r = log(admin, pid, "bytes=%d-%d" % (len(full) - 1, len(full) - 1))
    assert r.content == full[-1:]


@pytest.mark.parametrize("rng", ["bytes=%(n)d-", "bytes=%(n)d-%(m)d", "bytes=-0", "%(n)d-"])
def test_unsatisfiable(admin, done, rng):
    pid, full = done
    r = log(admin, pid, rng % {"n": len(full), "m": len(full) + 10})
    assert r.status_code == 416, r.text
    assert r.headers["Content-Range"] == "bytes */%d" % len(full)
    assert r.json()["ok"] is False
    assert str(len(full)) in r.json()["message"]


@pytest.mark.parametrize("rng", ["bytes=5-2", "bytes=x-3", "bytes=1-y", "bytes=", "lines=0-1", "bytes=0-1,4-5",
                                 "bytes=-", "12", "bytes=99999999999999999999-"])
def test_malformed(admin, done, rng):
    pid, _ = done
    r = log(admin, pid, rng)
    assert r.status_code == 400, r.text
    assert r.headers["Content-Type"] == "application/json"
    assert r.json()["message"].startswith("Invalid range header: %s (" % rng)  # Concord's words first


def test_follow_streams_until_the_end(admin):
    pid = start_process(admin, SLOW_FLOW)
    seen_first = {}
    r = admin.get("/api/v1/process/%s/log" % pid, params={"follow": "true"}, stream=True, timeout=60)
    assert r.status_code == 200
    assert r.headers.get("Transfer-Encoding") == "chunked"
    body = b""
    for piece in r.iter_content(chunk_size=None):
        body += piece
        if b"before the nap" in body and not seen_first:
            # The first line arrives while the process still runs: it is streamed, not
            # sent at the end.
            seen_first["status"] = status(admin, pid)
    assert seen_first["status"] not in FINAL
    assert b"before the nap" in body and b"after the nap" in body
    # The stream ended because the process ended, with every byte of the log.
    assert status(admin, pid) in FINAL
    assert body == log(admin, pid).content


def test_many_followers(admin):
    pid = start_process(admin, SLOW_FLOW)
    bodies = [None] * 8

    def follow(i):
        bodies[i] = admin.get("/api/v1/process/%s/log" % pid, params={"follow": "true"}, timeout=60).content

    threads = [threading.Thread(target=follow, args=(i,)) for i in range(len(bodies))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    full = log(admin, pid).content
    assert b"after the nap" in full
    assert all(b == full for b in bodies)


def test_follow_from_a_range_start(admin, done):
    pid, full = done
    r = log(admin, pid, "bytes=10-", follow="true")
    assert r.status_code == 200
    assert r.content == full[10:]
    r = log(admin, pid, "bytes=-4", follow="TRUE")
    assert r.content == full[-4:]
    r = log(admin, pid, None, follow="false")
    assert r.content == full


def test_follow_of_a_finished_process_ends(admin, done):
    pid, full = done
    # the answer ends by itself (a follow that hung would fail at the client's read timeout)
    r = log(admin, pid, follow="true")
    assert r.status_code == 200
    assert r.content == full


def test_follow_bad_value(admin, done):
    pid, _ = done
    r = log(admin, pid, follow="yes")
    assert r.status_code == 400
    assert "follow" in r.json()["message"]


def test_access(admin, anon, new_user, done):
    pid, _ = done
    assert anon.get("/api/v1/process/%s/log" % pid).status_code == 401
    r = new_user().get("/api/v1/process/%s/log" % pid)
    assert r.status_code == 403, r.text
    r = new_user().get("/api/v1/process/%s/log" % pid, params={"follow": "true"})
    assert r.status_code == 403
    assert new_user(roles=["concordSystemReader"]).get("/api/v1/process/%s/log" % pid).status_code == 200
    assert admin.get("/api/v1/process/%s/log" % uuid.uuid4()).status_code == 404
    assert admin.get("/api/v1/process/not-a-uuid/log").status_code == 404


def test_shutdown_ends_followers(fresh_server):
    """A follower waiting on a long process does not keep the server from stopping."""
    from conftest import ADMIN_KEY, Client
    # a grace of 1 s instead of the default 10 s: the stop then comes long before stop()'s
    # 20 s, as it must, without the test waiting out the default
    srv = fresh_server(args=["--shutdown-grace-ms", "1000"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_process(admin, "flows:\n  default:\n    - log: waiting\n    - task: sleep\n      in: {duration: 60}\n")
    r = admin.get("/api/v1/process/%s/log" % pid, params={"follow": "true"}, stream=True, timeout=60)
    assert r.status_code == 200
    it = r.iter_content(chunk_size=None)
    body = b""
    while b"waiting" not in body:
        body += next(it)
    assert srv.stop() == 0  # not killed after stop()'s 20 s
    try:
        for piece in it:
            body += piece
    except Exception:  # the chunked body is cut short: that is the point
        pass
