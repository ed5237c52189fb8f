"""GET /api/v1/process/{id}/event: shape, order and every filter; includeAll access."""
import re
import uuid

import pytest

from conftest import start_process, wait_process

FLOW = """
configuration:
  events:
    recordTaskInVars: true
    recordTaskOutVars: true
flows:
  default:
    - task: log
      in: {msg: "hello events"}
    - task: log
      in: {msg: "again"}
"""

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


@pytest.fixture(scope="module")
def pid(server):
    from conftest import ADMIN_KEY, Client
    admin = Client(server.url, ADMIN_KEY)
    pid = start_process(admin, FLOW)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    return pid


def events(client, pid, status=200, **params):
    r = client.get("/api/v1/process/%s/event" % pid, params=params)
    assert r.status_code == status, r.text
    return r.json()


def test_shape_and_order(admin, pid):
    evs = events(admin, pid)
    assert len(evs) >= 4
    for e in evs:
        assert set(e) == {"id", "seqId", "eventType", "data", "eventDate"}
        assert ISO.match(e["eventDate"]), e["eventDate"]
        assert None not in e["data"].values()
    seqs = [e["seqId"] for e in evs]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    types = {e["eventType"] for e in evs}
    assert "PROCESS_STATUS" in types and "ELEMENT" in types


def test_in_out_only_with_include_all(admin, pid):
    el = [e for e in events(admin, pid, type="ELEMENT")]
    assert el and all("in" not in e["data"] and "out" not in e["data"] for e in el)
    el = events(admin, pid, type="ELEMENT", includeAll="true")
    assert any(e["data"].get("in", {}).get("msg") == "hello events" for e in el)


def test_type(admin, pid):
    st = events(admin, pid, type="PROCESS_STATUS")
    assert st and all(e["eventType"] == "PROCESS_STATUS" for e in st)
    assert [e["data"]["status"] for e in st][-1] == "FINISHED"
    assert events(admin, pid, type="NOPE") == []


def test_phase(admin, pid):
    pre = events(admin, pid, eventPhase="pre")
    assert pre and all(e["data"]["phase"] == "pre" for e in pre)
    assert events(admin, pid, eventPhase="PRE") == pre
    post = events(admin, pid, eventPhase="Post")
    assert post and all(e["data"]["phase"] == "post" for e in post)
    assert events(admin, pid, 400, eventPhase="during")["ok"] is False


def test_correlation_id(admin, pid):
    pre = events(admin, pid, eventPhase="pre")[0]
    corr = pre["data"]["correlationId"]
    both = events(admin, pid, eventCorrelationId=corr)
    assert [e["data"]["phase"] for e in both] == ["pre", "post"]
    assert events(admin, pid, eventCorrelationId=str(uuid.uuid4())) == []


def test_from_id_and_limit(admin, pid):
    evs = events(admin, pid)
    rest = events(admin, pid, fromId=evs[0]["seqId"])
    assert rest == evs[1:]
    assert events(admin, pid, limit=2) == evs[:2]
    assert events(admin, pid, limit=-1) == evs
    for bad in ("abc", "0", "-2", "1.5"):
        assert events(admin, pid, 400, limit=bad)["ok"] is False
    assert events(admin, pid, 400, fromId="x")["ok"] is False


def test_after(admin, pid):
    evs = events(admin, pid)
    last = evs[-1]
    got = events(admin, pid, after=last["eventDate"])
    assert got and got[-1] == last and all(e["eventDate"] >= last["eventDate"] for e in got)
    assert events(admin, pid, after="2999-01-01T00:00:00.000+02:00") == []
    assert events(admin, pid, after="2000-01-01T00:00:00Z") == evs
    for bad in ("yesterday", "2024-01-01T00:00:00", "2024-13-01T00:00:00Z"):
        assert events(admin, pid, 400, after=bad)["ok"] is False


def test_include_all_access(admin, new_user, anon, pid):
    reader = new_user(roles=["concordSystemReader"])
    assert events(reader, pid)
    r = reader.get("/api/v1/process/%s/event" % pid, params={"includeAll": "true"})
    assert r.status_code == 403, r.text
    assert events(reader, pid, includeAll="false")
    assert events(admin, pid, 400, includeAll="maybe")["ok"] is False
    assert new_user().get("/api/v1/process/%s/event" % pid).status_code == 403
    assert anon.get("/api/v1/process/%s/event" % pid).status_code == 401
    assert admin.get("/api/v1/process/%s/event" % uuid.uuid4()).status_code == 404
