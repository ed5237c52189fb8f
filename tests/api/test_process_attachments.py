"""GET /api/v1/process/{id}/attachment[/{name}]: what a flow leaves in _attachments/."""
import uuid

import pytest

from conftest import start_process, wait_process

FLOW = """
flows:
  default:
    - expr: "${resource.writeAsString('hello attachment', '_attachments/a.txt')}"
    - expr: "${resource.writeAsString('nested', '_attachments/reports/b.txt')}"
"""


@pytest.fixture(scope="module")
def pid(server):
    from conftest import ADMIN_KEY, Client
    admin = Client(server.url, ADMIN_KEY)
    # The uploaded seed files make the folders the flow writes into.
    pid = start_process(admin, FLOW, files={"_attachments/seed.bin": b"\x00\x01\xff",
                                            "_attachments/reports/seed.txt": b"seed"})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    return pid


def test_list(admin, pid):
    r = admin.get("/api/v1/process/%s/attachment" % pid)
    assert r.status_code == 200, r.text
    names = r.json()
    for n in ("a.txt", "reports/b.txt", "seed.bin", "reports/seed.txt"):
        assert n in names
    assert names == sorted(names)


def test_download(admin, pid):
    r = admin.get("/api/v1/process/%s/attachment/a.txt" % pid)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "application/octet-stream"
    assert r.content == b"hello attachment"
    r = admin.get("/api/v1/process/%s/attachment/reports/b.txt" % pid)
    assert r.content == b"nested"
    assert admin.get("/api/v1/process/%s/attachment/seed.bin" % pid).content == b"\x00\x01\xff"


def test_missing(admin, pid):
    r = admin.get("/api/v1/process/%s/attachment/nope.txt" % pid)
    assert r.status_code == 404
    assert r.json()["ok"] is False
    assert "nope.txt" in r.json()["message"]


@pytest.mark.parametrize("name", ["reports/%2E%2E/a.txt", "%2E%2E/x", "a//b", "reports/", "%2E/a.txt", "reports/b.txt/"])
def test_bad_names(admin, pid, name):
    r = admin.get("/api/v1/process/%s/attachment/%s" % (pid, name))
    assert r.status_code == 400, r.text
    assert r.json()["message"].startswith("Invalid attachment name: ")


def test_access(admin, anon, new_user, pid):
    assert anon.get("/api/v1/process/%s/attachment" % pid).status_code == 401
    other = new_user()
    assert other.get("/api/v1/process/%s/attachment" % pid).status_code == 403
    assert other.get("/api/v1/process/%s/attachment/a.txt" % pid).status_code == 403
    assert admin.get("/api/v1/process/%s/attachment" % uuid.uuid4()).status_code == 404


def test_attachments_over_the_limit_fail_the_process_saying_which_limit(fresh_server):
    """Attachments past --limit-archive-bytes fail the process, and its log says why (it
    said only "its results could not be stored")."""
    from conftest import ADMIN_KEY, Client, process_log
    srv = fresh_server(args=["--limit-archive-bytes", "4096"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    grow = "".join('    - set: {s: "${s.concat(s)}"}\n' for _ in range(10))  # 10 KiB, not in the upload
    pid = start_process(admin, '''
flows:
  default:
    - set: {s: "0123456789"}
%s    - expr: "${resource.writeAsString(s, '_attachments/big.txt')}"
''' % grow, files={"_attachments/seed.txt": b"seed"})  # makes the folder
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FAILED", log
    assert ("its results could not be stored: attachment 'big.txt' exceeds 4096 bytes (limit-archive-bytes)"
            in log), log
