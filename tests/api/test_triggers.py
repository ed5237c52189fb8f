"""Triggers of repositories (issue 13): cron triggers on a test clock, generic events,
the trigger list, refresh with a changed or a broken `triggers:` section, disabled
repositories, access, and a failing trigger that does not stop the others.

The repositories are local git folders made with the git CLI; the server reads them over
file:// URLs.  Cron tests run a private server with --test-cron-minute-seconds 2 (one
scheduler minute lasts two real seconds; the production code path otherwise)."""
import datetime
import re
import shutil
import tempfile
import time

import pytest

from conftest import ADMIN_KEY, Client, unique, wait_process
from proc_util import make_org, make_project, make_team, wait_for
from repo_util import GitRepo

MINUTE_S = 2
CRON_ARGS = ["--test-cron-minute-seconds", str(MINUTE_S), "--repo-fetch-max-age", "0"]


# ---- git repositories (repo_util.GitRepo: local folders made with the git CLI) ----------------

@pytest.fixture
def repos():
    made = []

    def make(files):
        r = GitRepo(files)
        made.append(r)
        return r

    yield make
    for r in made:
        r.cleanup()


class Project:
    """An org and a project of admin's, with repositories made through the API."""

    def __init__(self, admin):
        self.admin = admin
        self.org, self.org_id = make_org(admin)
        self.name, self.id = make_project(admin, self.org)

    def path(self, rest=""):
        return "/api/v1/org/%s/project/%s/repository%s" % (self.org, self.name, rest)

    def add_repo(self, repo, name=None, **fields):
        body = {"name": name or unique("repo"), "url": repo.url, "branch": "main"}
        body.update(fields)
        r = self.admin.post(self.path(), json=body)
        assert r.status_code == 200, r.text
        return body["name"]

    def update_repo(self, name, **fields):
        cur = self.admin.get(self.path("/" + name))
        assert cur.status_code == 200, cur.text
        body = {k: v for k, v in cur.json().items() if k in ("id", "name", "url", "branch", "disabled", "triggersDisabled")}
        body.update(fields)
        r = self.admin.post(self.path(), json=body)
        assert r.status_code == 200, r.text

    def refresh(self, name, expect=200):
        r = self.admin.post(self.path("/%s/refresh" % name))
        assert r.status_code == expect, r.text
        return r

    def triggers(self, name, client=None):
        r = (client or self.admin).get(self.path("/%s/trigger" % name))
        assert r.status_code == 200, r.text
        return r.json()

    def processes(self):
        r = self.admin.get("/api/v2/process", params={"projectId": self.id, "limit": 1000})
        assert r.status_code == 200, r.text
        return r.json()


def log_of(client, pid):
    r = client.get("/api/v1/process/%s/log" % pid)
    assert r.status_code in (200, 206), r.text
    return r.text


def fire_times(admin, procs):
    """fireAt of each finished cron process (from its log line)."""
    out = []
    for p in procs:
        wait_process(admin, p["instanceId"])
        m = re.search(r"TICK fireAt=(\S+) spec=(.+?) color=(\w+)", log_of(admin, p["instanceId"]))
        assert m, log_of(admin, p["instanceId"])
        out.append(m.groups())
    return out


CRON_FLOW = """
flows:
  tick:
    - log: "TICK fireAt=${event.fireAt} spec=${event.spec} color=${color}"
  other:
    - log: "OTHER"
triggers:
  - cron:
      spec: "%s"
      entryPoint: tick
      arguments:
        color: red
"""


@pytest.fixture
def cron_server(fresh_server):
    data = tempfile.mkdtemp(prefix="accord-trig-data-")
    srv = fresh_server(data_dir=data, args=CRON_ARGS).start()
    yield srv
    srv.stop()
    shutil.rmtree(data, ignore_errors=True)


def admin_of(srv):
    return Client(srv.url, ADMIN_KEY, "admin", None, ADMIN_KEY)


# ---- cron ------------------------------------------------------------------------------------

def test_cron_fires_each_minute_never_twice_across_a_restart(cron_server, fresh_server, repos):
    admin = admin_of(cron_server)
    p = Project(admin)
    repo = repos({"concord.yml": CRON_FLOW % "* * * * *"})
    name = p.add_repo(repo)
    procs = wait_for(lambda: (lambda l: l if len(l) >= 3 else None)(p.processes()), timeout=40)
    first = procs[0]
    assert first["initiator"] == "cron", first
    times = fire_times(admin, procs)
    for fire_at, spec, color in times:
        assert spec == "* * * * *" and color == "red"
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$", fire_at), fire_at
    assert len({t[0] for t in times}) == len(times), times
    # about one process per test minute (2 s), not a burst
    assert len(p.processes()) <= 3 + 4

    cron_server.stop()
    before = {t[0] for t in times}
    srv2 = fresh_server(data_dir=cron_server.data_dir, args=CRON_ARGS).start()
    admin2 = admin_of(srv2)
    p.admin = admin2
    n_before = len(p.processes())
    wait_for(lambda: len(p.processes()) >= n_before + 2, timeout=60)
    all_times = [t[0] for t in fire_times(admin2, p.processes())]
    assert len(set(all_times)) == len(all_times), all_times
    assert before <= set(all_times)
    assert "cron trigger" in srv2.read_log()
    srv2.stop()


def test_cron_refresh_with_a_new_spec_and_disabling(cron_server, repos):
    """Three repositories that fire every minute, each stopped its own way — a refreshed spec
    that fires once a year, triggersDisabled, disabled — start nothing for three minutes,
    and fire again when set back.  The three are independent, so they share one quiet
    wait (three in a row took ~34 s of a worker's wall, bench/RESULTS.md)."""
    admin = admin_of(cron_server)
    ways = {}
    for way in ("spec", "triggersDisabled", "disabled"):
        p = Project(admin)
        repo = repos({"concord.yml": CRON_FLOW % "* * * * *"})
        ways[way] = (p, repo, p.add_repo(repo))
    for p, _, _ in ways.values():
        wait_for(lambda p=p: len(p.processes()) >= 1, timeout=30)
    # a spec that fires once a year: no more processes after the refresh
    p, repo, name = ways["spec"]
    repo.commit({"concord.yml": CRON_FLOW % "0 0 1 1 *"}, "yearly")
    # A refresh shares a fetch of the repository already in flight (a cron start's, begun
    # before the commit: docs/api.md, the refresh), whose result may predate the commit; the
    # next refresh fetches again, as a user would refresh again.
    def refreshed(p, name, spec):
        p.refresh(name)
        [t] = p.triggers(name)
        return t["cfg"]["spec"] == spec and t["conditions"]["spec"] == spec
    wait_for(lambda: refreshed(p, name, "0 0 1 1 *"), timeout=30)
    for flag in ("triggersDisabled", "disabled"):
        p, _, name = ways[flag]
        p.update_repo(name, **{flag: True})
    time.sleep(MINUTE_S)  # a start in flight may still land
    counts = {way: len(p.processes()) for way, (p, _, _) in ways.items()}
    time.sleep(3 * MINUTE_S)
    assert {way: len(p.processes()) for way, (p, _, _) in ways.items()} == counts

    # set back: every minute again, the flags off; each fires again
    p, repo, name = ways["spec"]
    repo.commit({"concord.yml": CRON_FLOW % "* * * * *"}, "again")
    wait_for(lambda: refreshed(p, name, "* * * * *"), timeout=30)
    for flag in ("triggersDisabled", "disabled"):
        p, _, name = ways[flag]
        p.update_repo(name, **{flag: False})
        p.refresh(name)
    for way, (p, _, _) in ways.items():
        wait_for(lambda p=p, n=counts[way]: len(p.processes()) >= n + 1, timeout=30)


def test_cron_with_a_time_zone(cron_server, repos):
    admin = admin_of(cron_server)
    p = Project(admin)
    flow = CRON_FLOW.replace('spec: "%s"', 'spec: "%s"\n      timezone: Asia/Kathmandu') % "* * * * *"
    repo = repos({"concord.yml": flow})
    name = p.add_repo(repo)
    [t] = p.triggers(name)
    assert t["cfg"]["timezone"] == "Asia/Kathmandu" and t["conditions"]["timezone"] == "Asia/Kathmandu"
    procs = wait_for(lambda: (lambda l: l if len(l) >= 1 else None)(p.processes()), timeout=30)
    [(fire_at, spec, color)] = fire_times(admin, procs[:1])
    # fireAt is UTC, on a whole minute
    assert fire_at.endswith(":00.000Z")


def test_a_failing_trigger_does_not_stop_the_others(cron_server, repos):
    admin = admin_of(cron_server)
    p = Project(admin)
    flow = CRON_FLOW % "* * * * *" + """
  - cron:
      spec: "* * * * *"
      entryPoint: other
"""
    repo = repos({"concord.yml": flow})
    name = p.add_repo(repo)
    assert len(p.triggers(name)) == 2
    # the flow `other` goes away in a commit that is not refreshed: that trigger's starts fail
    # (every start fetches: --repo-fetch-max-age 0)
    repo.commit({"concord.yml": flow.replace('  other:\n    - log: "OTHER"\n', "")}, "no other")
    # only the starts after the commit: a cron minute that ticked between the repository's
    # registration and the commit started `other` from the first commit (a clean-clone run)
    since = time.time() + 1

    def after_commit():
        l = [x for x in p.processes()
             if datetime.datetime.fromisoformat(x["createdAt"]).timestamp() >= since]
        return l if len(l) >= 3 else None

    procs = wait_for(after_commit, timeout=40)
    assert all(x["initiator"] == "cron" for x in procs)
    for x in procs:
        assert wait_process(admin, x["instanceId"])["status"] == "FINISHED"
        assert "TICK" in log_of(admin, x["instanceId"])
    assert re.search(r"cron trigger \S+ \(repository \S+, entry point other\) did not start a process",
                     cron_server.read_log())


# ---- refresh errors and the trigger list ----------------------------------------------------

GENERIC_FLOW = """
flows:
  onEvent:
    - log: "EVENT branch=${event.branch} id=${event.id} who=${initiator.username} color=${color}"
triggers:
  - %s:
      version: 2
      entryPoint: onEvent
      arguments:
        color: blue
      conditions:
        branch: "release-[0-9]+"
        repo:
          owner: acme
        count: 5
"""


def test_bad_triggers_keep_the_previous_ones(admin, repos):
    p = Project(admin)
    src = unique("ev")
    repo = repos({"concord.yml": GENERIC_FLOW % src})
    name = p.add_repo(repo)
    before = p.triggers(name)
    assert [t["eventSource"] for t in before] == [src]
    bad = GENERIC_FLOW % src + """
  - cron:
      spec: "61 * * * *"
      entryPoint: onEvent
"""
    repo.commit({"concord.yml": bad}, "bad spec")
    r = p.refresh(name, expect=400)
    assert re.search(r"triggers: concord\.yml:\d+:\d+: .*minute", r.json()["message"]), r.text
    line = bad.splitlines().index('      spec: "61 * * * *"') + 1
    assert "concord.yml:%d:13:" % line in r.json()["message"], r.text
    assert p.triggers(name) == before
    repo.commit({"concord.yml": GENERIC_FLOW % src + "  - nope:\n      entryPoint: missing\n"}, "bad entry")
    r = p.refresh(name, expect=400)
    assert "entryPoint 'missing' is not a flow" in r.json()["message"]
    repo.commit({"concord.yml": GENERIC_FLOW % src + '  - cron:\n      spec: "* * * * *"\n'
                                '      timezone: "Europe/Berlin\\0 trailing"\n      entryPoint: onEvent\n'}, "NUL")
    r = p.refresh(name, expect=400)
    assert "'timezone' must not contain a NUL character" in r.json()["message"], r.text
    repo.commit({"concord.yml": GENERIC_FLOW.replace("version: 2", "version: 1") % src}, "v1")
    r = p.refresh(name, expect=400)
    assert "version '1' is not supported" in r.json()["message"]
    assert p.triggers(name) == before


def test_trigger_list(admin, new_user, repos):
    p = Project(admin)
    src = unique("ev")
    flow = GENERIC_FLOW % src + """
  - manual:
      name: Run it
      entryPoint: onEvent
      activeProfiles: [p1]
  - cron:
      spec: "0 3 * * *"
      timezone: Europe/Berlin
      entryPoint: onEvent
"""
    repo = repos({"concord.yml": flow})
    name = p.add_repo(repo)
    ts = p.triggers(name)
    assert [t["eventSource"] for t in ts] == [src, "manual", "cron"]
    g, m, c = ts
    for t in ts:
        assert t["orgName"] == p.org and t["projectName"] == p.name and t["repositoryName"] == name
        assert re.match(r"^[0-9a-f-]{36}$", t["id"])
    assert g["conditions"] == {"branch": "release-[0-9]+", "repo": {"owner": "acme"}, "count": 5}
    assert g["arguments"] == {"color": "blue"} and g["cfg"]["entryPoint"] == "onEvent"
    assert m["cfg"]["name"] == "Run it" and m["activeProfiles"] == ["p1"]
    assert c["conditions"] == {"spec": "0 3 * * *", "timezone": "Europe/Berlin"}
    # readers of the project see them, outsiders do not
    stranger, reader = new_user(), new_user()
    make_team(admin, p.org, [(reader, "MEMBER")], p.name, "READER")
    assert len(p.triggers(name, reader)) == 3
    r = stranger.get(p.path("/%s/trigger" % name))
    assert r.status_code == 403, r.text
    priv_org, _ = make_org(admin, visibility="PRIVATE")
    pp = Project.__new__(Project)
    pp.admin, pp.org = admin, priv_org
    pp.name, pp.id = make_project(admin, priv_org, visibility="PRIVATE")
    name2 = pp.add_repo(repo)
    assert len(pp.triggers(name2)) == 3
    r = stranger.get(pp.path("/%s/trigger" % name2))
    assert r.status_code in (403, 404), r.text
    r = admin.get(p.path("/nope/trigger"))
    assert r.status_code == 404 and "nope" in r.text
    # Concord's TriggerResource path (its client's): /repo/ instead of /repository/
    r = reader.get("/api/v1/org/%s/project/%s/repo/%s/trigger" % (p.org, p.name, name))
    assert r.status_code == 200 and r.json() == ts, r.text


# ---- generic events --------------------------------------------------------------------------

MATCHING = {"branch": "release-42", "repo": {"owner": "acme", "name": "x"}, "count": 5}


def post_event(client, src, body, expect=200):
    r = client.post("/api/v1/events/%s" % src, json=body)
    assert r.status_code == expect, r.text
    return r.json()


def test_generic_events_match_and_not(admin, repos):
    p = Project(admin)
    src = unique("ev")
    repo = repos({"concord.yml": GENERIC_FLOW % src})
    p.add_repo(repo)
    res = post_event(admin, src, dict(MATCHING, id="ev-1"))
    assert res["ok"] is True and len(res["instanceIds"]) == 1, res
    pid = res["instanceIds"][0]
    proc = wait_process(admin, pid)
    assert proc["status"] == "FINISHED" and proc["initiator"] == "admin", proc
    assert "EVENT branch=release-42 id=ev-1 who=admin color=blue" in log_of(admin, pid)
    for other in (
        dict(MATCHING, branch="release-x"),  # regex on the whole value
        dict(MATCHING, branch="my-release-1"),
        dict(MATCHING, count=6),  # numbers: equality
        dict(MATCHING, count="5"),
        dict(MATCHING, repo={"owner": "someone"}),  # nested
        {k: v for k, v in MATCHING.items() if k != "repo"},
    ):
        assert post_event(admin, src, other)["instanceIds"] == [], other
    # an event without an id gets one
    res = post_event(admin, src, MATCHING)
    log = log_of(admin, wait_process(admin, res["instanceIds"][0])["instanceId"])
    assert re.search(r"id=[0-9a-f-]{36} ", log), log
    # another source, cron, and bodies that are not objects
    assert post_event(admin, unique("ev"), MATCHING)["instanceIds"] == []
    assert post_event(admin, "cron", MATCHING)["instanceIds"] == []
    r = admin.post("/api/v1/events/%s" % src, data="[1]", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    r = admin.post("/api/v1/events/%s" % src, data="{bad", headers={"Content-Type": "application/json"})
    assert r.status_code == 400


def test_generic_events_respect_project_access(admin, new_user, repos):
    org, _ = make_org(admin)
    proj, proj_id = make_project(admin, org, visibility="PRIVATE")
    p = Project.__new__(Project)
    p.admin, p.org, p.name, p.id = admin, org, proj, proj_id
    src = unique("ev")
    repo = repos({"concord.yml": GENERIC_FLOW % src})
    p.add_repo(repo)
    member, stranger = new_user(), new_user()
    make_team(admin, org, [(member, "MEMBER")], proj, "READER")
    assert post_event(stranger, src, MATCHING)["instanceIds"] == []
    res = post_event(member, src, MATCHING)
    assert len(res["instanceIds"]) == 1
    proc = wait_process(admin, res["instanceIds"][0])
    assert proc["initiator"] == member.username
    assert "who=%s" % member.username in log_of(admin, proc["instanceId"])
    r = Client(admin.url).post("/api/v1/events/%s" % src, json=MATCHING)
    assert r.status_code == 401


def test_generic_event_with_a_failing_trigger(admin, repos, server):
    p = Project(admin)
    src = unique("ev")
    flow = GENERIC_FLOW % src + "  - %s:\n      entryPoint: gone\n" % src
    flow = flow.replace("flows:\n", "flows:\n  gone:\n    - log: GONE\n", 1)
    repo = repos({"concord.yml": flow})
    name = p.add_repo(repo)
    assert len(p.triggers(name)) == 2
    # `gone` leaves the repository without a refresh: that trigger's start fails when the
    # clone is fetched again; the other one still starts
    repo.commit({"concord.yml": flow.replace("  gone:\n    - log: GONE\n", "")}, "gone")
    r = admin.post(p.path("/%s/refresh" % name))  # refresh refuses the now-unknown entry point
    assert r.status_code == 400 and "gone" in r.text
    assert len(p.triggers(name)) == 2
    res = post_event(admin, src, MATCHING)
    [pid] = res["instanceIds"]
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "EVENT branch=release-42" in log_of(admin, pid)
    assert re.search(r"%s trigger \S+ \(repository \S+, entry point gone\) did not start a process" % src,
                     server.read_log())


def test_triggers_are_read_again_at_server_start(cron_server, fresh_server, repos):
    # a trigger edited in git while the server is down is in effect after its start
    admin = admin_of(cron_server)
    p = Project(admin)
    old, new = unique("ev"), unique("ev")
    repo = repos({"concord.yml": GENERIC_FLOW % old})
    name = p.add_repo(repo)
    assert [t["eventSource"] for t in p.triggers(name)] == [old]
    cron_server.stop()
    repo.commit({"concord.yml": GENERIC_FLOW % new}, "another source")
    srv = fresh_server(data_dir=cron_server.data_dir, args=CRON_ARGS).start()
    admin = admin_of(srv)
    p.admin = admin
    wait_for(lambda: [t["eventSource"] for t in p.triggers(name)] == [new])
    assert post_event(admin, old, MATCHING)["instanceIds"] == []
    res = post_event(admin, new, MATCHING)
    assert len(res["instanceIds"]) == 1 and wait_process(admin, res["instanceIds"][0])["status"] == "FINISHED"
    # a repository that cannot be read keeps its triggers, and says why in the log
    srv.stop()
    repo.commit({"concord.yml": "flows: [broken"}, "broken")
    srv = fresh_server(data_dir=cron_server.data_dir, args=CRON_ARGS).start()
    p.admin = admin_of(srv)
    wait_for(lambda: "not read again at start, the stored ones stay" in srv.read_log())
    assert [t["eventSource"] for t in p.triggers(name)] == [new]
