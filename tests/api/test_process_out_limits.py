"""Out variables stay bounded (issue 23 item 6): --limit-out-bytes caps what a process may
leave in out.json (beyond it the process is FAILED, its log naming the limit), and lists
leave meta.out out unless include=out asks for it, within a bounded answer."""
import pytest

from conftest import ADMIN_KEY, Client, process_log, start_process, unique, wait_process

LIMIT = 4096


def flow(doublings):
    """A flow whose out variable s holds 10 * 2**doublings characters."""
    grow = "".join('    - set: {s: "${s.concat(s)}"}\n' for _ in range(doublings))
    return 'flows:\n  default:\n    - set: {s: "0123456789"}\n' + grow


@pytest.fixture(scope="module")
def srv():
    from conftest import Server
    s = Server(args=["--limit-out-bytes", str(LIMIT)]).start()
    yield s
    s.cleanup()


@pytest.fixture(scope="module")
def admin_c(srv):
    return Client(srv.url, ADMIN_KEY)


def test_out_over_the_limit_fails_the_process_naming_the_limit(admin_c):
    pid = start_process(admin_c, flow(9), parts={"out": "s"})  # 5,120 characters
    p = wait_process(admin_c, pid)
    log = process_log(admin_c, pid)
    assert p["status"] == "FAILED", log
    assert "out" not in p.get("meta", {})
    assert "Process failed: its results could not be stored: the out variables take" in log, log
    assert "more than %d (limit-out-bytes)" % LIMIT in log, log


def test_out_within_the_limit_is_in_the_status(admin_c):
    pid = start_process(admin_c, flow(7), parts={"out": "s"})  # 1,280 characters
    p = wait_process(admin_c, pid)
    assert p["status"] == "FINISHED"
    assert len(p["meta"]["out"]["s"]) == 1280
    assert admin_c.get("/api/v1/process/%s" % pid).json()["meta"]["out"]["s"] == p["meta"]["out"]["s"]


def test_lists_leave_out_variables_out_unless_asked(admin_c):
    tag = unique("outs")
    pid = start_process(admin_c, flow(7), parts={"out": "s", "tags": tag})
    assert wait_process(admin_c, pid)["status"] == "FINISHED"

    r = admin_c.get("/api/v2/process", params={"tags": tag})
    assert r.status_code == 200, r.text
    [entry] = r.json()
    assert entry["instanceId"] == pid
    assert entry["meta"]["entryPoint"] == "default"
    assert "out" not in entry["meta"]

    r = admin_c.get("/api/v2/process", params={"tags": tag, "include": "out"})
    assert r.status_code == 200, r.text
    assert len(r.json()[0]["meta"]["out"]["s"]) == 1280


def test_subprocess_lists_leave_out_variables_out(admin_c):
    parent = start_process(admin_c, """
flows:
  default:
    - task: concord
      in: {action: start, payload: child, sync: true, outVars: [s]}
""", files={"child/concord.yml": b'flows:\n  default:\n    - set: {s: "child out"}\n'})
    assert wait_process(admin_c, parent)["status"] == "FINISHED", process_log(admin_c, parent)
    r = admin_c.get("/api/v1/process/%s/subprocess" % parent)
    assert r.status_code == 200, r.text
    [child] = r.json()
    assert "out" not in child.get("meta", {})
    assert wait_process(admin_c, child["instanceId"])["meta"]["out"] == {"s": "child out"}


def test_include_out_answers_stay_bounded(admin_c):
    tag = unique("big-outs")
    for _ in range(7):  # 7 x ~2.6 KB: more than 4 x --limit-out-bytes together
        pid = start_process(admin_c, flow(8), parts={"out": "s", "tags": tag})
        assert wait_process(admin_c, pid)["status"] == "FINISHED"
    r = admin_c.get("/api/v2/process", params={"tags": tag, "include": "out"})
    assert r.status_code == 413, r.text[:300]
    assert r.json()["ok"] is False
    assert "exceed %d bytes" % (4 * LIMIT) in r.json()["message"]
    assert "limit" in r.json()["message"]

    r = admin_c.get("/api/v2/process", params={"tags": tag, "include": "out", "limit": 2})
    assert r.status_code == 200, r.text
    assert [len(p["meta"]["out"]["s"]) for p in r.json()] == [2560, 2560]
    r = admin_c.get("/api/v2/process", params={"tags": tag})
    assert r.status_code == 200 and len(r.json()) == 7


def test_unknown_include_names_out(admin_c):
    r = admin_c.get("/api/v2/process", params={"include": "outs"})
    assert r.status_code == 400
    assert "history or out" in r.json()["message"]
