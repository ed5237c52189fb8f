"""The audit log (issue 12 part 3): every change of users, keys, orgs, teams, projects,
repositories, secrets, access rules, inventories and queries, and every process start,
stop, resume and restore, is recorded with who, when, what and from which address;
GET /api/v1/audit for admins with the filters object, action, username, after, before,
limit, offset; secret values appear nowhere; --retention-audit removes old entries."""
import datetime
import signal
import time

import pytest

import db_util
from conftest import ADMIN_KEY, Client, process_log, start_process, unique, wait_process
from proc_util import HELLO, make_org, make_project
from repo_util import create_repo, git  # noqa: F401 (fixture)
from test_process_children import SLOW_CHILD
from test_process_timeouts import ON_TIMEOUT, only_child, sleeper
from test_triggers import GENERIC_FLOW, MATCHING, Project, repos  # noqa: F401 (fixture)

SECRET_VALUE = "AuditNeverSees-" + "7f3a9c1e5b"
STORE_PASSWORD = "Store-pass-" + "4242aa"
USER_PASSWORD = "User-pass-" + "1717bb"


def audit(client, **params):
    r = client.get("/api/v1/audit", params=dict({"limit": 1000}, **params))
    assert r.status_code == 200, r.text
    return r.json()


def find(entries, obj, action, **details):
    """The entries of obj/action whose details hold every given key: value."""
    return [e for e in entries if e["object"] == obj and e["action"] == action
            and all(e["details"].get(k) == v for k, v in details.items())]


def one(client, obj, action, **details):
    found = find(audit(client, object=obj, action=action), obj, action, **details)
    assert len(found) == 1, (obj, action, details, found)
    return found[0]


def key_id(client):
    """The id of the API key a test client authenticates with (its only key)."""
    keys = client.get("/api/v1/apikey").json()
    assert len(keys) == 1, keys
    return keys[0]["id"]


def test_entry_says_who_what_when_and_where(admin, new_user):
    user = new_user(roles=["concordAdmin"])
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=5)
    name, org_id = make_org(user)
    e = one(admin, "ORGANIZATION", "CREATE", orgName=name)
    assert e["details"]["orgId"] == org_id
    assert e["user"] == {"id": user.user_id, "username": user.username}
    src = e["details"]["actionSource"]
    assert src == {"type": "API_REQUEST", "apiKeyId": key_id(user), "address": "127.0.0.1"}, src
    when = datetime.datetime.fromisoformat(e["entryDate"].replace("Z", "+00:00"))
    assert before <= when <= datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=5)
    assert e["entryDate"].endswith("Z") and len(e["entryDate"]) == len("2026-11-22T10:00:00.123Z")


def test_basic_auth_has_no_key_id(server, admin, new_user):
    user = new_user(roles=["concordAdmin"], password=USER_PASSWORD)
    basic = Client(server.url)
    basic.s.auth = (user.username, USER_PASSWORD)
    name, _ = make_org(basic)
    e = one(admin, "ORGANIZATION", "CREATE", orgName=name)
    assert e["user"]["username"] == user.username
    assert e["details"]["actionSource"] == {"type": "API_REQUEST", "address": "127.0.0.1"}


def test_console_session(server, admin, new_user):
    import requests

    user = new_user(roles=["concordAdmin"])
    s = requests.Session()
    r = s.get(server.url + "/api/service/console/whoami",
              headers={"Authorization": user.key, "X-Concord-EnableSession": "true"}, timeout=30)
    assert r.status_code == 200, r.text
    name = unique("porg")
    r = s.post(server.url + "/api/v1/org", json={"name": name}, headers={"X-Accord-CSRF": r.json()["csrfToken"]},
               timeout=30)
    assert r.status_code == 200, r.text
    e = one(admin, "ORGANIZATION", "CREATE", orgName=name)
    assert e["user"]["username"] == user.username
    assert e["details"]["actionSource"] == {"type": "API_REQUEST", "address": "127.0.0.1"}


def test_users_and_keys(admin):
    username = unique("auser")
    r = admin.post("/api/v1/user", json={"username": username, "type": "LOCAL", "password": USER_PASSWORD})
    assert r.status_code == 200, r.text
    uid = r.json()["id"]
    assert one(admin, "USER", "CREATE", username=username)["details"]["userId"] == uid
    assert admin.post("/api/v1/user", json={"username": username, "displayName": "Changed"}).status_code == 200
    one(admin, "USER", "UPDATE", username=username, userId=uid)
    r = admin.post("/api/v1/apikey", json={"username": username, "name": "key-one"})
    assert r.status_code == 200, r.text
    kid, key = r.json()["id"], r.json()["key"]
    e = one(admin, "API_KEY", "CREATE", apiKeyId=kid)
    assert e["details"]["username"] == username and e["details"]["name"] == "key-one"
    assert admin.delete("/api/v1/apikey/" + kid).status_code == 200
    one(admin, "API_KEY", "DELETE", apiKeyId=kid)
    assert admin.delete("/api/v1/user/" + uid).status_code == 200
    one(admin, "USER", "DELETE", userId=uid)
    text = admin.get("/api/v1/audit", params={"limit": 1000}).text
    assert key not in text and USER_PASSWORD not in text


def test_orgs_teams_projects_and_access(admin, new_user):
    member = new_user()
    org, org_id = make_org(admin)
    assert admin.post("/api/v1/org", json={"name": org, "visibility": "PRIVATE"}).status_code == 200
    one(admin, "ORGANIZATION", "UPDATE", orgName=org, orgId=org_id)
    team = unique("team")
    r = admin.post("/api/v1/org/%s/team" % org, json={"name": team})
    assert r.status_code == 200, r.text
    one(admin, "TEAM", "CREATE", orgName=org, teamName=team, teamId=r.json()["id"])
    r = admin.put("/api/v1/org/%s/team/%s/users" % (org, team), json=[{"username": member.username}])
    assert r.status_code == 200, r.text
    one(admin, "TEAM", "UPDATE", orgName=org, teamName=team, changed="users")
    project, project_id = make_project(admin, org)
    one(admin, "PROJECT", "CREATE", orgName=org, projectName=project, projectId=project_id)
    r = admin.post("/api/v1/org/%s/project/%s/access" % (org, project), json={"teamName": team, "level": "READER"})
    assert r.status_code == 200, r.text
    one(admin, "PROJECT", "UPDATE", orgName=org, projectName=project, changed="access")
    assert admin.delete("/api/v1/org/%s/project/%s" % (org, project)).status_code == 200
    one(admin, "PROJECT", "DELETE", orgName=org, projectName=project)
    assert admin.delete("/api/v1/org/%s/team/%s" % (org, team)).status_code == 200
    one(admin, "TEAM", "DELETE", orgName=org, teamName=team)


def test_repositories(admin, git):  # noqa: F811 (fixture)
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git()
    name, body = create_repo(admin, org, project, repo.url)
    one(admin, "REPOSITORY", "CREATE", orgName=org, projectName=project, repositoryName=name,
        repositoryId=body["id"])
    base = "/api/v1/org/%s/project/%s/repository/%s" % (org, project, name)
    assert admin.post(base + "/refresh").status_code == 200
    one(admin, "REPOSITORY", "UPDATE", repositoryName=name, changed="refresh")
    assert admin.post(base + "/validate").status_code == 200  # changes nothing: not recorded
    assert find(audit(admin, object="REPOSITORY"), "REPOSITORY", "UPDATE", repositoryName=name,
                changed=None) == []
    assert admin.delete(base).status_code == 200
    one(admin, "REPOSITORY", "DELETE", repositoryName=name)


def test_secrets_never_their_values(server, admin):
    org, _ = make_org(admin)
    name = unique("sec")
    r = admin.post("/api/v1/org/%s/secret" % org,
                   files={"name": (None, name), "type": (None, "data"), "data": (None, SECRET_VALUE),
                          "storePassword": (None, STORE_PASSWORD)})
    assert r.status_code == 200, r.text
    one(admin, "SECRET", "CREATE", orgName=org, secretName=name, secretId=r.json()["id"])
    r = admin.post("/api/v1/org/%s/secret/%s/data" % (org, name), files={"storePassword": (None, STORE_PASSWORD)})
    assert r.status_code == 200 and r.content == SECRET_VALUE.encode()
    one(admin, "SECRET", "ACCESS", orgName=org, secretName=name)
    r = admin.post("/api/v2/org/%s/secret/%s" % (org, name),
                   files={"type": (None, "data"), "data": (None, SECRET_VALUE + "-2"),
                          "storePassword": (None, STORE_PASSWORD)})
    assert r.status_code == 200, r.text
    one(admin, "SECRET", "UPDATE", orgName=org, secretName=name)
    team = unique("team")
    assert admin.post("/api/v1/org/%s/team" % org, json={"name": team}).status_code == 200
    r = admin.post("/api/v1/org/%s/secret/%s/access" % (org, name), json={"teamName": team, "level": "READER"})
    assert r.status_code == 200, r.text
    one(admin, "SECRET", "UPDATE", secretName=name, changed="access")
    # while the secret exists its data is stored, encrypted: the plain value is nowhere
    stored = db_util.everything(server.data_dir)
    assert name.encode() in stored
    for plain in (SECRET_VALUE.encode(), STORE_PASSWORD.encode()):
        assert plain not in stored and plain.hex().encode() not in stored
    assert admin.delete("/api/v1/org/%s/secret/%s" % (org, name)).status_code == 200
    one(admin, "SECRET", "DELETE", orgName=org, secretName=name)
    # nowhere: not in the answer, not in any row of the table
    assert SECRET_VALUE not in admin.get("/api/v1/audit", params={"limit": 1000}).text
    rows = db_util.rows(server.data_dir, "SELECT * FROM audit_log")
    assert any(name in repr(row) for row in rows)
    for row in rows:
        text = repr(row)
        assert SECRET_VALUE not in text and STORE_PASSWORD not in text, row


def test_inventories_and_queries(admin):
    org, _ = make_org(admin)
    inv = unique("inv")
    r = admin.post("/api/v1/org/%s/inventory" % org, json={"name": inv})
    assert r.status_code == 200, r.text
    one(admin, "INVENTORY", "CREATE", orgName=org, inventoryName=inv, inventoryId=r.json()["id"])
    base = "/api/v1/org/%s/inventory/%s" % (org, inv)
    assert admin.post(base + "/data/hosts/a", json={"ip": "10.0.0.1"}).status_code == 200
    one(admin, "INVENTORY", "UPDATE", inventoryName=inv, changed="data", path="hosts/a")
    assert admin.delete(base + "/data/hosts/a").status_code == 200
    assert len(find(audit(admin, object="INVENTORY"), "INVENTORY", "UPDATE", inventoryName=inv, changed="data")) == 2
    r = admin.post(base + "/query/query-one", data=b"select item_data from inventory_data",
                   headers={"Content-Type": "text/plain"})
    assert r.status_code == 200, r.text
    one(admin, "INVENTORY_QUERY", "CREATE", inventoryName=inv, queryName="query-one", queryId=r.json()["id"])
    assert admin.post(base + "/query/query-one/exec", json={}).status_code == 200  # a read: not recorded
    assert admin.delete(base + "/query/query-one").status_code == 200
    one(admin, "INVENTORY_QUERY", "DELETE", inventoryName=inv, queryName="query-one")
    team = unique("team")
    assert admin.post("/api/v1/org/%s/team" % org, json={"name": team}).status_code == 200
    assert admin.post(base + "/access", json={"teamName": team, "level": "READER"}).status_code == 200
    one(admin, "INVENTORY", "UPDATE", inventoryName=inv, changed="access")
    assert admin.delete(base).status_code == 200
    one(admin, "INVENTORY", "DELETE", inventoryName=inv)


# A database that refuses the audit entry of a process start (and nothing else).
NO_START_AUDIT_SQLITE = ("CREATE TRIGGER no_start_audit BEFORE INSERT ON audit_log"
                         " WHEN NEW.object = 'PROCESS' AND NEW.action = 'START'"
                         " BEGIN SELECT RAISE(ABORT, 'no start audit'); END")
NO_START_AUDIT_PG = """CREATE FUNCTION no_start_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.object = 'PROCESS' AND NEW.action = 'START' THEN RAISE EXCEPTION 'no start audit'; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER no_start_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION no_start_audit()"""


def test_a_start_and_its_audit_entry_are_one_commit(fresh_server):
    """The entry is stored in the start's own transaction (issue 27 item 2: one commit less
    per process): a start whose entry cannot be stored is not stored either, and an
    acknowledged start has its entry even when the server is killed right after."""
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_process(admin, HELLO)
    srv.stop(signal.SIGKILL)
    assert db_util.scalar(srv.data_dir, "SELECT count(*) FROM audit_log WHERE object = 'PROCESS' AND action = 'START'"
                                        " AND details LIKE '%%%s%%'" % pid) == 1
    db_util.execute(srv.data_dir, NO_START_AUDIT_PG if db_util.PG else NO_START_AUDIT_SQLITE)
    srv = fresh_server(data_dir=srv.data_dir).start()
    admin = Client(srv.url, ADMIN_KEY)
    n = db_util.scalar(srv.data_dir, "SELECT count(*) FROM processes")
    r = start_process(admin, HELLO, expect=500)
    assert r.json()["ok"] is False
    assert db_util.scalar(srv.data_dir, "SELECT count(*) FROM processes") == n
    assert not any(e["details"].get("instanceId") not in (None, pid)
                   for e in audit(admin, object="PROCESS", action="START"))


SUSPEND = """
flows:
  default:
    - checkpoint: "first"
    - suspend: go
    - log: "resumed"
"""


def test_process_start_stop_resume_restore(admin):
    pid = start_process(admin, SUSPEND)
    e = one(admin, "PROCESS", "START", instanceId=pid)
    assert e["user"]["username"] == "admin" and e["details"]["actionSource"]["address"] == "127.0.0.1"
    p = wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(admin, pid)
    assert admin.post("/api/v1/process/%s/resume/go" % pid, json={}).status_code == 200
    one(admin, "PROCESS", "RESUME", instanceId=pid, eventName="go")
    assert wait_process(admin, pid)["status"] == "FINISHED"
    cp = admin.get("/api/v2/process/%s" % pid, params={"include": "checkpoints"}).json()["checkpoints"][0]
    r = admin.post("/api/v1/process/%s/checkpoint/restore" % pid, json={"id": cp["id"]})
    assert r.status_code == 200, r.text
    one(admin, "PROCESS", "RESTORE", instanceId=pid)
    wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert admin.delete("/api/v1/process/%s" % pid).status_code in (200, 204)
    one(admin, "PROCESS", "STOP", instanceId=pid)


SESSION_FLOW = """
flows:
  default:
    - task: http
      in:
        method: POST
        url: "${server}/api/v1/org/${org}/inventory"
        headers:
          X-Concord-SessionToken: "${processInfo.sessionToken}"
        request: json
        body:
          name: "${inv}"
        response: json
      out: made
    - log: "made: ${made.statusCode}"
"""


def test_change_by_a_process_session(server, admin):
    org, _ = make_org(admin)
    inv = unique("inv")
    pid = start_process(admin, SESSION_FLOW, parts={"arguments.server": server.url, "arguments.org": org,
                                                    "arguments.inv": inv})
    p = wait_process(admin, pid, timeout=60)
    assert p["status"] == "FINISHED" and "made: 200" in process_log(admin, pid), process_log(admin, pid)
    e = one(admin, "INVENTORY", "CREATE", inventoryName=inv)
    assert e["user"]["username"] == "admin"
    assert e["details"]["actionSource"] == {"type": "PROCESS", "instanceId": pid, "address": "127.0.0.1"}


CHILDREN_FLOW = """
flows:
  default:
    - task: concord
      in: {action: start, payload: child}
      out: job
    - task: concord
      in: {action: kill, instanceId: "${job.id}", sync: true}
    - log: "started and killed ${job.id}"
"""


def test_children_started_and_stopped_by_a_process(admin, new_user):
    user = new_user()
    pid = start_process(user, CHILDREN_FLOW, files={"child/concord.yml": SLOW_CHILD.encode()})
    p = wait_process(user, pid, timeout=60)
    assert p["status"] == "FINISHED", process_log(user, pid)
    start = one(admin, "PROCESS", "START", parentInstanceId=pid)
    child = start["details"]["instanceId"]
    assert child != pid and "killed " + child in process_log(user, pid)
    stop = one(admin, "PROCESS", "STOP", instanceId=child)
    for e in (start, stop):  # on behalf of the initiator, through the parent's session
        assert e["user"] == {"id": user.user_id, "username": user.username}
        assert e["details"]["actionSource"] == {"type": "PROCESS", "instanceId": pid}


def test_external_event_names_the_processes_it_started(admin, repos):  # noqa: F811 (fixture)
    src = unique("ev")
    Project(admin).add_repo(repos({"concord.yml": GENERIC_FLOW % src}))
    r = admin.post("/api/v1/events/%s" % src, json=dict(MATCHING, id="ev-audit"))
    assert r.status_code == 200, r.text
    started = r.json()["instanceIds"]
    assert len(started) == 1
    e = one(admin, "EXTERNAL_EVENT", "ACCESS", eventSource=src)
    assert e["details"]["instanceIds"] == started and e["user"]["username"] == "admin"
    # and the start itself, made by the server for the trigger (as cron triggers are)
    e = one(admin, "PROCESS", "START", instanceId=started[0])
    assert e["details"]["reason"] == src and e["details"]["actionSource"]["type"] == "SYSTEM"


def test_starts_and_stops_made_by_the_server(admin):
    """A timeout (a stop) and the handler process it starts: the server did both, on behalf
    of the process's initiator."""
    flow = sleeper(30).replace("flows:", 'configuration:\n  processTimeout: "PT1S"\nflows:') + ON_TIMEOUT
    pid = start_process(admin, flow, parts={"handlerProcessTimeout": "PT30S"})
    assert wait_process(admin, pid, timeout=20)["status"] == "TIMED_OUT"
    h = only_child(admin, pid, "TIMEOUT_HANDLER")
    stop = one(admin, "PROCESS", "STOP", instanceId=pid)
    start = one(admin, "PROCESS", "START", instanceId=h["instanceId"])
    assert stop["details"]["reason"] == "processTimeout"
    assert start["details"]["reason"] == "onTimeout" and start["details"]["parentInstanceId"] == pid
    for e in (stop, start):
        assert e["details"]["actionSource"] == {"type": "SYSTEM"}
        assert e["user"]["username"] == "admin"


def test_failed_and_read_requests_are_not_recorded(admin, new_user):
    user = new_user()
    name = unique("porg")
    r = user.post("/api/v1/org", json={"name": name})  # not an admin: 403
    assert r.status_code == 403
    assert find(audit(admin, object="ORGANIZATION"), "ORGANIZATION", "CREATE", orgName=name) == []
    # reads change nothing: a user who only read has no entry
    assert user.get("/api/v1/org").status_code == 200
    assert user.get("/api/v1/apikey").status_code == 200
    assert audit(admin, username=user.username) == []


def test_filters(admin, new_user):
    user = new_user(roles=["concordAdmin"])
    orgs = [make_org(user)[0] for _ in range(3)]
    mine = audit(admin, username=user.username)
    assert [e["details"]["orgName"] for e in mine] == orgs[::-1]  # newest first
    assert all(e["user"]["username"] == user.username for e in mine)
    assert audit(admin, username=user.username, object="PROJECT") == []
    assert len(audit(admin, username=user.username, object="ORGANIZATION", action="CREATE")) == 3
    assert audit(admin, username=user.username, action="DELETE") == []
    page = audit(admin, username=user.username, limit=1, offset=1)
    assert [e["details"]["orgName"] for e in page] == [orgs[1]]
    # after / before: bounds taken from the entries themselves (exclusive)
    newest, oldest = mine[0]["entryDate"], mine[-1]["entryDate"]
    assert len(audit(admin, username=user.username, after=oldest)) == len(
        [e for e in mine if e["entryDate"] > oldest])
    assert [e["entryDate"] for e in audit(admin, username=user.username, before=newest)] == [
        e["entryDate"] for e in mine if e["entryDate"] < newest]
    assert audit(admin, username=user.username, after="2999-01-01T00:00:00.000Z") == []
    assert len(audit(admin, username=user.username, before="2999-01-01T00:00:00Z")) == 3
    assert audit(admin, username=unique("nobody")) == []


@pytest.mark.parametrize("params, fragment", [
    ({"object": "PLANET"}, "object"),
    ({"action": "EXPLODE"}, "action"),
    ({"after": "yesterday"}, "after"),
    ({"before": "2026-01-01T00:00:00"}, "before"),
    ({"limit": "0"}, "limit"),
    ({"offset": "-1"}, "offset"),
])
def test_bad_filters(admin, params, fragment):
    r = admin.get("/api/v1/audit", params=params)
    assert r.status_code == 400, r.text
    assert r.json()["ok"] is False and fragment in r.json()["message"]


def test_admins_only(anon, new_user):
    r = new_user().get("/api/v1/audit")
    assert r.status_code == 403 and r.json()["ok"] is False
    reader = new_user(roles=["concordSystemReader"])
    assert reader.get("/api/v1/audit").status_code == 403
    assert anon.get("/api/v1/audit").status_code == 401


def test_retention(fresh_server):
    srv = fresh_server(args=["--retention-audit", "2s", "--retention-interval", "1s"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    old, _ = make_org(admin)
    assert find(audit(admin), "ORGANIZATION", "CREATE", orgName=old)
    deadline = time.time() + 30
    while find(audit(admin), "ORGANIZATION", "CREATE", orgName=old):
        assert time.time() < deadline, "the audit entry was not removed by --retention-audit 2s"
        time.sleep(0.2)
    # the pass logs what it deleted once it is over (after the entry went)
    while "audit log entries older than 2 s deleted" not in srv.read_log():
        assert time.time() < deadline, "no retention line in the log"
        time.sleep(0.2)
