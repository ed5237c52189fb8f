"""Git fetches off the request threads (issue 23 item 5): a repository's refreshes and
validates run on a pool of their own, one fetch per repository at a time shared by every
request that asks meanwhile, at most --repo-fetches-per-user per user, and a start uses
the current clone while someone else's fetch runs."""
import os
import shutil
import tempfile
import threading

import pytest

import git_servers as gs
from conftest import ADMIN_KEY, Client, make_user, passable, process_log, start_process, wait_process
from proc_util import make_org, make_project, make_team, wait_for
from repo_util import REPO_API, create_repo, error, flow

FILES = {"concord.yml": flow("from the slow remote")}


@pytest.fixture
def remote():
    root = tempfile.mkdtemp(prefix="accord-slow-git-")
    passable(root)
    with gs.SlowHttpGitServer(root) as srv:
        yield srv
    shutil.rmtree(root, ignore_errors=True)


def serve(fresh_server, *args, threads=2, readers=1):
    """A server (two common workers by default: two hung fetches held them all before
    fetches ran apart), its admin, an org and project, and `readers` users who may read the
    project: (srv, admin, org, project, [users])."""
    srv = fresh_server(args=["--http-threads", str(threads), "--log-level", "debug"] + list(args)).start()
    admin = Client(srv.url, ADMIN_KEY)
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    users = [make_user(admin) for _ in range(readers)]
    make_team(admin, org, [(u, "MEMBER") for u in users], project, "READER")
    return srv, admin, org, project, users


def slow_repo(admin, remote, org, project, name):
    gs.make_repo(os.path.join(remote.root, name), FILES)
    repo, body = create_repo(admin, org, project, remote.url(name), name=name)
    return repo


def one_slow_repo(fresh_server, remote, repo, *args, threads=2):
    """serve() with one reader and one repository `repo` on the slow remote:
    (srv, admin, org, project, reader, its name, the remote's fetches of it so far, its id)."""
    srv, admin, org, project, (reader,) = serve(fresh_server, *args, threads=threads)
    name = slow_repo(admin, remote, org, project, repo)
    repo_id = admin.get(REPO_API % (org, project) + "/" + name).json()["id"]
    return srv, admin, org, project, reader, name, remote.fetches(repo), repo_id


def in_background(fn, *args):
    out = {}
    t = threading.Thread(target=lambda: out.update(r=fn(*args)), daemon=True)
    t.start()
    return t, out


def test_a_start_answers_while_another_users_fetches_hang(fresh_server, remote):
    srv, admin, org, project, (user_a,) = serve(fresh_server, "--repo-fetches-per-user", "0")
    slow = [slow_repo(admin, remote, org, project, n) for n in ("slow1", "slow2")]
    fast = os.path.join(remote.root, "fast")
    gs.make_repo(fast, FILES)
    other_project, _ = make_project(admin, org)
    fast_name, _ = create_repo(admin, org, other_project, "file://" + fast)

    remote.hold()
    hung = []
    for name in slow + slow:
        for action in ("validate", "refresh"):
            url = REPO_API % (org, project) + "/" + name + "/" + action
            hung.append(in_background(lambda u=url: user_a.post(u, timeout=120)))
    wait_for(lambda: remote.fetches("slow1") >= 1 and remote.fetches("slow2") >= 1)

    pid = start_process(admin, parts={"org": org, "project": other_project, "repo": fast_name})
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    assert admin.get("/api/v1/server/ping").status_code == 200
    assert not any("r" in out for _, out in hung), "the slow fetches ended before the start"

    remote.release()
    for t, out in hung:
        t.join(120)
        assert out["r"].status_code == 200, out["r"].text


def test_refreshes_of_one_repository_share_one_fetch(fresh_server, remote):
    n = 6
    # every refresh finds a worker
    srv, admin, org, project, reader, name, before, repo_id = one_slow_repo(fresh_server, remote, "one", threads=n)

    remote.hold()
    url = REPO_API % (org, project) + "/" + name + "/refresh"
    calls = [in_background(lambda: reader.post(url, timeout=120)) for _ in range(n)]
    # one fetch reached the remote; every other refresh joined it instead of fetching
    wait_for(lambda: srv.read_log().count("repository %s: joins the fetch in flight" % repo_id) == n - 1
             and remote.fetches("one") > before)
    assert remote.fetches("one") == before + 1
    remote.release()
    for t, out in calls:
        t.join(120)
        assert out["r"].status_code == 200, out["r"].text
    assert remote.fetches("one") == before + 1


def test_a_users_fetches_in_flight_are_limited(fresh_server, remote):
    srv, admin, org, project, (user_a, user_b) = serve(fresh_server, "--repo-fetches-per-user", "1", readers=2)
    first, second = (slow_repo(admin, remote, org, project, n) for n in ("lim1", "lim2"))

    remote.hold()
    base = REPO_API % (org, project) + "/"
    t, out = in_background(lambda: user_a.post(base + first + "/refresh", timeout=120))
    wait_for(lambda: remote.fetches("lim1") >= 2)  # create's, then the refresh's
    error(user_a.post(base + second + "/validate"), 429, "--repo-fetches-per-user")
    t2, out2 = in_background(lambda: user_b.post(base + second + "/refresh", timeout=120))
    wait_for(lambda: remote.fetches("lim2") >= 2)  # another user is not held back by user_a's
    remote.release()
    t.join(120)
    t2.join(120)
    assert out["r"].status_code == 200 and out2["r"].status_code == 200, (out["r"].text, out2["r"].text)
    assert user_a.post(base + second + "/validate").status_code == 200


def test_a_start_uses_the_clone_while_someone_fetches_its_repository(fresh_server, remote):
    # max age 0: every start would fetch first, and so queue behind the refresh
    srv, admin, org, project, (reader,) = serve(fresh_server, "--repo-fetch-max-age", "0")
    name = slow_repo(admin, remote, org, project, "shared")
    before = remote.fetches("shared")

    remote.hold()
    t, out = in_background(lambda: reader.post(REPO_API % (org, project) + "/" + name + "/refresh", timeout=120))
    wait_for(lambda: remote.fetches("shared") > before)
    pid = start_process(admin, parts={"org": org, "project": project, "repo": name})
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    assert "from the slow remote" in process_log(admin, pid)
    assert "r" not in out, "the refresh ended before the start"
    remote.release()
    t.join(120)
    assert out["r"].status_code == 200, out["r"].text


def requests_in_flight(srv):
    text = Client(srv.url, ADMIN_KEY).get("/metrics").text
    return int(next(l.split()[1] for l in text.splitlines() if l.startswith("accord_http_requests_in_flight ")))


def test_refreshes_queued_behind_the_fetch_workers_share_its_fetch(fresh_server, remote):
    n = 6
    # two fetch workers: four refreshes queue
    srv, admin, org, project, reader, name, before, repo_id = one_slow_repo(fresh_server, remote, "queued")

    remote.hold()
    url = REPO_API % (org, project) + "/" + name + "/refresh"
    calls = [in_background(lambda: reader.post(url, timeout=120)) for _ in range(n)]
    # every refresh has arrived (and the /metrics request asking) while the first one fetches
    wait_for(lambda: remote.fetches("queued") > before and requests_in_flight(srv) == n + 1)
    remote.release()
    for t, out in calls:
        t.join(120)
        assert out["r"].status_code == 200, out["r"].text
    assert remote.fetches("queued") == before + 1
    log = srv.read_log()
    assert log.count("repository %s: joins the fetch in flight" % repo_id) + \
        log.count("repository %s: takes the fetch that ran while it waited" % repo_id) == n - 1


def test_a_starts_fetch_and_a_refresh_are_one_flight(fresh_server, remote):
    # max age 0: the start fetches first
    srv, admin, org, project, reader, name, before, repo_id = one_slow_repo(fresh_server, remote, "startfirst",
                                                                           "--repo-fetch-max-age", "0")

    remote.hold()
    ts, start = in_background(lambda: start_process(admin, parts={"org": org, "project": project, "repo": name}))
    wait_for(lambda: remote.fetches("startfirst") > before)
    t, out = in_background(lambda: reader.post(REPO_API % (org, project) + "/" + name + "/refresh", timeout=120))
    wait_for(lambda: "repository %s: joins the fetch in flight" % repo_id in srv.read_log())
    remote.release()
    t.join(120)
    assert out["r"].status_code == 200, out["r"].text
    ts.join(120)
    pid = start["r"]
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    assert remote.fetches("startfirst") == before + 1
