"""Who may see and stop a process (issue 8 item 10), the list's visibility, the process's
own session token, and the runner's confinement on the server."""
import base64
import json
import os
import time
import uuid

import pytest

import db_util
from conftest import Client, start_process, unique, wait_process
from proc_util import HELLO, make_org, make_project, make_team, sleeper, status


class World:
    pass


@pytest.fixture
def w(admin, new_user):
    """A PRIVATE project with a starter (WRITER team), a reader (READER team), another
    writer, an org member without rules and a stranger; one running and one finished
    process of the starter."""
    x = World()
    x.admin = admin
    x.starter, x.reader, x.writer, x.member, x.stranger = (new_user() for _ in range(5))
    x.org, x.org_id = make_org(admin)
    x.proj, x.proj_id = make_project(admin, x.org, visibility="PRIVATE", rawPayloadMode="TEAM_MEMBERS")
    make_team(admin, x.org, [(x.starter, "MEMBER"), (x.writer, "MEMBER")], x.proj, "WRITER")
    make_team(admin, x.org, [(x.reader, "MEMBER")], x.proj, "READER")
    make_team(admin, x.org, [(x.member, "MEMBER")])
    x.done = start_process(x.starter, HELLO, parts={"org": x.org, "project": x.proj})
    assert wait_process(admin, x.done)["status"] == "FINISHED"
    x.running = start_process(x.starter, sleeper(30), parts={"org": x.org, "project": x.proj})
    yield x
    admin.delete("/api/v1/process/%s" % x.running)


def test_who_sees_a_process(w, anon):
    for who in (w.starter, w.reader, w.writer, w.admin):
        for path in ("/api/v2/process/%s", "/api/v1/process/%s"):
            r = who.get(path % w.done)
            assert r.status_code == 200 and r.json()["instanceId"] == w.done, (who.username, r.text)
    for who in (w.member, w.stranger):
        for path in ("/api/v2/process/%s", "/api/v1/process/%s"):
            r = who.get(path % w.done)
            assert r.status_code == 403 and r.json()["ok"] is False, (who.username, r.text)
            assert w.done in r.json()["message"]
    assert anon.get("/api/v2/process/%s" % w.done).status_code == 401
    assert anon.get("/api/v1/process/%s" % w.done).status_code == 401
    assert anon.get("/api/v2/process/%s" % uuid.uuid4()).status_code == 401


def test_global_reader_sees(w, new_user):
    sysreader = new_user(roles=["concordSystemReader"])
    assert sysreader.get("/api/v2/process/%s" % w.done).status_code == 200
    assert sysreader.delete("/api/v1/process/%s" % w.running).status_code == 403


def test_who_may_stop(w, anon):
    for who in (w.reader, w.member, w.stranger):
        r = who.delete("/api/v1/process/%s" % w.running)
        assert r.status_code == 403, (who.username, r.text)
    assert anon.delete("/api/v1/process/%s" % w.running).status_code == 401
    assert status(w.admin, w.running)["status"] in ("ENQUEUED", "STARTING", "RUNNING")
    # a writer of the project who did not start it may stop it
    assert w.writer.delete("/api/v1/process/%s" % w.running).status_code == 204
    assert wait_process(w.admin, w.running, timeout=15)["status"] == "CANCELLED"


def test_initiator_and_admin_may_stop(w):
    other = start_process(w.starter, sleeper(30), parts={"org": w.org, "project": w.proj})
    assert w.starter.delete("/api/v1/process/%s" % other).status_code == 204
    assert wait_process(w.admin, other, timeout=15)["status"] == "CANCELLED"
    assert w.admin.delete("/api/v1/process/%s" % w.running).status_code == 204
    assert wait_process(w.admin, w.running, timeout=15)["status"] == "CANCELLED"


def test_process_without_project_is_private_to_its_initiator(admin, new_user):
    a, b = new_user(), new_user()
    pid = start_process(a, HELLO)
    assert wait_process(a, pid)["status"] == "FINISHED"
    assert b.get("/api/v2/process/%s" % pid).status_code == 403
    assert b.delete("/api/v1/process/%s" % pid).status_code == 403
    assert admin.get("/api/v2/process/%s" % pid).status_code == 200


def test_start_needs_project_rights(w):
    before = w.admin.get("/api/v2/process/count", params={"projectId": w.proj_id}).json()
    for who in (w.stranger, w.member):
        r = start_process(who, HELLO, parts={"org": w.org, "project": w.proj}, expect=403)
        assert r.json()["ok"] is False
    # a reader of a TEAM_MEMBERS project may not send a raw payload there
    start_process(w.reader, HELLO, parts={"org": w.org, "project": w.proj}, expect=403)
    assert w.admin.get("/api/v2/process/count", params={"projectId": w.proj_id}).json() == before


def test_list_shows_only_readable(w, new_user):
    mine = start_process(w.stranger, HELLO)
    wait_process(w.stranger, mine)

    def listed(who, **params):
        r = who.get("/api/v2/process", params=dict(limit=1000, **params))
        assert r.status_code == 200, r.text
        return {p["instanceId"] for p in r.json()}

    assert mine in listed(w.stranger) and w.done not in listed(w.stranger)
    assert listed(w.stranger, projectId=w.proj_id) == set()
    assert w.stranger.get("/api/v2/process/count", params={"projectId": w.proj_id}).json() == 0
    for who in (w.reader, w.writer, w.starter):
        seen = listed(who, projectId=w.proj_id)
        assert {w.done, w.running} <= seen, who.username
        assert w.done in listed(who) and mine not in listed(who)
        assert who.get("/api/v2/process/count", params={"projectId": w.proj_id}).json() == 2
    assert listed(w.member, orgName=w.org) == set()
    everything = listed(w.admin)
    assert mine in everything or len(everything) == 1000
    # a count without a project (an Accord addition, for the console's total) counts what
    # the same list shows the caller
    for who in (w.stranger, w.reader, w.member):
        r = who.get("/api/v2/process/count")
        assert r.status_code == 200, r.text
        assert r.json() == len(listed(who)), who.username
    assert w.reader.get("/api/v2/process/count", params={"orgName": w.org}).json() == len(listed(w.reader, orgName=w.org))


SESSION_FLOW = """
flows:
  default:
    - task: http
      in:
        url: "${server}/api/v2/process/${txId}"
        headers:
          X-Concord-SessionToken: "${processInfo.sessionToken}"
        response: json
        ignoreErrors: true
      out: own
    - task: http
      in:
        url: "${server}/api/v2/process/${other}"
        headers:
          X-Concord-SessionToken: "${processInfo.sessionToken}"
        response: json
        ignoreErrors: true
      out: foreign
    - set:
        ownCode: "${own.statusCode}"
        ownStatus: "${own.content.status}"
        ownInitiator: "${own.content.initiator}"
        foreignCode: "${foreign.statusCode}"
        tok: "${processInfo.sessionToken}"
"""


def test_session_token(server, admin, new_user):
    user, other_user = new_user(), new_user()
    other = start_process(other_user, HELLO)
    wait_process(other_user, other)
    pid = start_process(user, SESSION_FLOW, parts={"arguments.server": server.url, "arguments.other": other,
                                                   "out": "ownCode,ownStatus,ownInitiator,foreignCode,tok"})
    p = wait_process(user, pid, timeout=60)
    assert p["status"] == "FINISHED", p
    out = p["meta"]["out"]
    assert out["ownCode"] == 200 and out["ownStatus"] == "RUNNING" and out["ownInitiator"] == user.username, out
    # the token stands for the initiator: another user's process stays closed
    assert out["foreignCode"] == 403, out
    tok = out["tok"]
    assert len(tok) >= 32
    bare = Client(server.url)
    r = bare.get("/api/v2/process/%s" % pid, headers={"X-Concord-SessionToken": tok})
    assert r.status_code == 401 and r.json()["ok"] is False
    r = bare.get("/api/v2/process/%s" % pid, headers={"X-Concord-SessionToken": "x" * len(tok)})
    assert r.status_code == 401


def database_file(data_dir):
    """A file that holds the server's database: the SQLite file, or on PostgreSQL the file of
    the table users in the cluster's data folder (after a checkpoint, so that it has rows)."""
    if not db_util.PG:
        return os.path.join(data_dir, "accord.db")
    db_util.psql(data_dir, "-c", "CHECKPOINT")
    return os.path.join(db_util.scalar(data_dir, "SELECT current_setting('data_directory')"),
                        db_util.scalar(data_dir, "SELECT pg_relation_filepath('users')"))


@pytest.mark.parametrize("target", ["master.key", "database"])
def test_flow_cannot_read_server_files(server, admin, target):
    path = os.path.join(server.data_dir, target) if target == "master.key" else database_file(server.data_dir)
    assert os.path.getsize(path) > 0
    # the path from the process's working directory, <data>/work/<instanceId>
    climb = os.path.relpath(path, os.path.join(server.data_dir, "work", "x"))
    flow = """
flows:
  default:
    - set:
        stolen: "${resource.asString(workDir.concat('/%s'))}"
    - log: "${stolen}"
""" % climb
    p = wait_process(admin, start_process(admin, flow, parts={"out": "stolen"}))
    assert p["status"] == "FAILED", p
    assert "stolen" not in p["meta"]["out"]
    secret = open(path, "rb").read()[:32]
    text = json.dumps(p)
    for shown in (secret.decode("latin-1"), secret.hex(), base64.b64encode(secret).decode()[:40]):
        assert shown not in text
    r = admin.get("/api/v1/process/%s/log" % p["instanceId"])
    assert r.status_code in (200, 206) and b"is outside the working directory" in r.content, r.text
    assert secret not in r.content
