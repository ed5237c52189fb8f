"""Console sessions and the start link (issue 10): GET /api/service/console/whoami with
X-Concord-EnableSession, the session cookie and its CSRF rule, idle expiry, logout, and
GET /api/v1/org/{org}/project/{project}/repo/{repo}/start/{entryPoint}
(docs/api.md "Console sessions", "Start by link"; docs/security.md)."""
import base64
import hashlib
import html
import time
import urllib.parse

import pytest
import requests

import db_util
from conftest import ADMIN_KEY, ADMIN_PASSWORD, Client, process_log, start_process, unique, wait_process
from proc_util import make_org, make_project, make_team
from repo_util import create_repo, git  # noqa: F401 (fixture)

WHOAMI = "/api/service/console/whoami"
LOGOUT = "/api/service/console/logout"
LOGIN = {"X-Concord-EnableSession": "true"}


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def login(url, authorization, headers=None):
    """whoami with the session header: (token, csrfToken, response)."""
    h = dict(LOGIN, Authorization=authorization)
    h.update(headers or {})
    r = requests.get(url + WHOAMI, headers=h, timeout=30)
    assert r.status_code == 200, r.text
    assert r.json()["csrfToken"], r.json()
    return r.cookies.get("accord_session"), r.json()["csrfToken"], r


def browser(url, token):
    """A client that has nothing but the session cookie (as the console's pages)."""
    c = Client(url)
    c.s.cookies.set("accord_session", token)
    return c


def cookie_attrs(r):
    value = r.headers["Set-Cookie"]
    parts = [p.strip() for p in value.split(";")]
    return parts[0], set(parts[1:])


def user_with_password(admin, password="Pass-word-123"):
    name = unique("cuser")
    r = admin.post("/api/v1/user", json={"username": name, "type": "LOCAL", "password": password})
    assert r.status_code == 200, r.text
    return name, r.json()["id"], password


# ---- login, cookie, whoami --------------------------------------------------------------------

def test_login_with_basic_sets_the_cookie(server):
    token, csrf, r = login(server.url, basic("admin", ADMIN_PASSWORD))
    first, attrs = cookie_attrs(r)
    assert first == "accord_session=" + token and len(token) == 43
    assert attrs == {"Path=/", "HttpOnly", "SameSite=Lax"}  # plain HTTP: no Secure
    body = r.json()
    assert body["realm"] == "local" and body["username"] == "admin"
    assert "Default" in [o["name"] for o in body["orgs"]]
    assert all("id" in o for o in body["orgs"])
    assert len(csrf) >= 32 and csrf != token


def test_login_with_an_api_key_and_secure_behind_tls(server, new_user):
    user = new_user()
    token, _, r = login(server.url, user.key, {"X-Forwarded-Proto": "https"})
    _, attrs = cookie_attrs(r)
    assert attrs == {"Path=/", "HttpOnly", "SameSite=Lax", "Secure"}
    assert r.json()["realm"] == "apikey" and r.json()["username"] == user.username
    # the orgs the user is in: Default only (every new user is a member, as in Concord)
    assert [o["name"] for o in r.json()["orgs"]] == ["Default"]
    assert browser(server.url, token).get(WHOAMI).json()["username"] == user.username
    _, _, r = login(server.url, user.key, {"Forwarded": "for=10.0.0.1;proto=https;host=example"})
    assert "Secure" in cookie_attrs(r)[1]
    _, _, r = login(server.url, user.key, {"X-Forwarded-Proto": "http"})
    assert "Secure" not in cookie_attrs(r)[1]


def test_whoami_without_the_session_header_makes_no_session(admin):
    r = admin.get(WHOAMI)
    assert r.status_code == 200
    assert "Set-Cookie" not in r.headers and "csrfToken" not in r.json()
    assert r.json()["realm"] == "apikey"


def test_whoami_names_the_global_roles(admin, new_user):
    # the console offers admin pages (the audit log) from what the server says
    assert admin.get(WHOAMI).json()["roles"] == ["concordAdmin"]
    assert new_user().get(WHOAMI).json()["roles"] == []
    assert new_user(roles=["concordSystemReader"]).get(WHOAMI).json()["roles"] == ["concordSystemReader"]


def test_no_password_dialog_for_the_console(anon):
    r = anon.get(WHOAMI)
    assert r.status_code == 401 and "WWW-Authenticate" not in r.headers
    assert r.json()["ok"] is False
    r = anon.get("/api/v1/org", headers={"X-Concord-UI-Request": "true"})
    assert r.status_code == 401 and "WWW-Authenticate" not in r.headers
    r = anon.get("/api/v1/org")
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith("Basic")
    r = anon.get(WHOAMI, headers={"Authorization": basic("admin", "wrong-password")})
    assert r.status_code == 401 and "WWW-Authenticate" not in r.headers


def test_cookie_authenticates_reads_and_whoami(server):
    token, csrf, _ = login(server.url, basic("admin", ADMIN_PASSWORD))
    b = browser(server.url, token)
    r = b.get("/api/v1/org")
    assert r.status_code == 200 and "Default" in [o["name"] for o in r.json()]
    r = b.get(WHOAMI)
    assert r.status_code == 200, r.text
    assert r.json()["realm"] == "session" and r.json()["csrfToken"] == csrf
    assert "Set-Cookie" not in r.headers
    # a cookie that is no session
    r = browser(server.url, "A" * 43).get("/api/v1/org")
    assert r.status_code == 401
    r = browser(server.url, "not-a-token").get("/api/v1/org")
    assert r.status_code == 401


def test_header_credentials_win_over_the_cookie(server, new_user):
    user = new_user()
    token, _, _ = login(server.url, basic("admin", ADMIN_PASSWORD))
    c = browser(server.url, token)
    r = c.get(WHOAMI, headers={"Authorization": user.key})
    assert r.json()["username"] == user.username


def test_token_is_stored_as_a_hash_only(server):
    token, csrf, _ = login(server.url, basic("admin", ADMIN_PASSWORD))
    rows = db_util.rows(server.data_dir, "SELECT token_hash, csrf_token FROM console_sessions")
    assert csrf in [r[1] for r in rows]
    for h, _ in rows:
        h = db_util.blob(h)
        assert token.encode() not in h and len(h) == 32
    assert hashlib.sha256(token.encode()).digest() in [db_util.blob(r[0]) for r in rows]
    stored = db_util.everything(server.data_dir)
    assert csrf.encode() in stored
    assert token.encode() not in stored and token.encode().hex().encode() not in stored


# ---- CSRF ---------------------------------------------------------------------------------------

def test_cookie_changes_need_the_csrf_header_or_our_origin(server, admin):
    token, csrf, _ = login(server.url, basic("admin", ADMIN_PASSWORD))
    b = browser(server.url, token)

    name = unique("corg")
    r = b.post("/api/v1/org", json={"name": name})
    assert r.status_code == 403 and "CSRF" in r.json()["message"]
    assert admin.get("/api/v1/org/" + name).status_code == 404
    r = b.post("/api/v1/org", json={"name": name}, headers={"X-Accord-CSRF": csrf[:-1] + ("A" if csrf[-1] != "A" else "B")})
    assert r.status_code == 403
    r = b.post("/api/v1/org", json={"name": name}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    assert admin.get("/api/v1/org/" + name).status_code == 404

    r = b.post("/api/v1/org", json={"name": name}, headers={"X-Accord-CSRF": csrf})
    assert r.status_code == 200, r.text
    name2 = unique("corg")
    r = b.post("/api/v1/org", json={"name": name2}, headers={"Origin": server.url})
    assert r.status_code == 200, r.text
    # behind a TLS proxy the own origin is https://<Host>
    host = server.url.split("//")[1]
    r = b.post("/api/v1/org", json={"name": unique("corg")},
               headers={"Origin": "https://" + host, "X-Forwarded-Proto": "https"})
    assert r.status_code == 200, r.text
    r = b.post("/api/v1/org", json={"name": unique("corg")}, headers={"Origin": "https://" + host})
    assert r.status_code == 403
    r = b.post("/api/v1/org", json={"name": unique("corg")}, headers={"Origin": "null"})
    assert r.status_code == 403

    # DELETE the same way
    r = b.delete("/api/v1/org/" + name, params={"confirmation": "yes"})
    assert r.status_code == 403
    assert admin.get("/api/v1/org/" + name).status_code == 200
    r = b.delete("/api/v1/org/" + name, params={"confirmation": "yes"}, headers={"X-Accord-CSRF": csrf})
    assert r.status_code == 200, r.text
    assert admin.get("/api/v1/org/" + name).status_code == 404


def test_header_credentials_need_no_csrf(admin):
    r = admin.post("/api/v1/org", json={"name": unique("corg")})
    assert r.status_code == 200, r.text


# ---- expiry, logout, users ----------------------------------------------------------------------

def test_idle_session_expires(fresh_server):
    srv = fresh_server(args=["--session-idle", "2s"]).start()
    token, _, _ = login(srv.url, ADMIN_KEY)
    b = browser(srv.url, token)
    assert b.get("/api/v1/org").status_code == 200
    time.sleep(3.5)
    r = b.get("/api/v1/org")
    assert r.status_code == 401, r.text
    assert "expired" in r.json()["message"]
    # a new login purges the expired row
    login(srv.url, ADMIN_KEY)
    assert db_util.scalar(srv.data_dir, "SELECT count(*) FROM console_sessions") == 1


def test_use_keeps_a_session_alive(fresh_server):
    srv = fresh_server(args=["--session-idle", "6s"]).start()
    token, _, _ = login(srv.url, ADMIN_KEY)
    b = browser(srv.url, token)
    end = time.time() + 9
    while time.time() < end:
        assert b.get("/api/v1/org").status_code == 200
        time.sleep(0.5)


def test_session_idle_setting_is_checked(fresh_server):
    srv = fresh_server(args=["--session-idle", "soon"])
    with pytest.raises(RuntimeError) as e:
        srv.start()
    assert "--session-idle" in str(e.value)


def test_logout_ends_the_session_on_the_server(server):
    token, csrf, _ = login(server.url, basic("admin", ADMIN_PASSWORD))
    b = browser(server.url, token)
    assert b.get("/api/v1/org").status_code == 200
    r = b.post(LOGOUT)
    assert r.status_code == 204
    first, attrs = cookie_attrs(r)
    assert first == "accord_session=" and "Max-Age=0" in attrs and "HttpOnly" in attrs
    # the old cookie value replayed
    r = browser(server.url, token).get("/api/v1/org")
    assert r.status_code == 401
    r = browser(server.url, token).post("/api/v1/org", json={"name": unique("corg")}, headers={"X-Accord-CSRF": csrf})
    assert r.status_code == 401
    # logout without a session is fine too
    assert requests.post(server.url + LOGOUT, timeout=30).status_code == 204


def test_a_new_login_replaces_the_browsers_old_session(server):
    old, _, _ = login(server.url, basic("admin", ADMIN_PASSWORD))
    new, _, _ = login(server.url, ADMIN_KEY, {"Cookie": "accord_session=" + old})
    assert new != old
    assert browser(server.url, old).get("/api/v1/org").status_code == 401
    assert browser(server.url, new).get("/api/v1/org").status_code == 200


def test_deleted_and_disabled_users_sessions_stop(server, admin):
    name, uid, password = user_with_password(admin)
    token, _, _ = login(server.url, basic(name, password))
    b = browser(server.url, token)
    assert b.get(WHOAMI).json()["username"] == name
    assert admin.post("/api/v1/user", json={"username": name, "disabled": True}).status_code == 200
    assert b.get("/api/v1/org").status_code == 401
    assert admin.post("/api/v1/user", json={"username": name, "disabled": False}).status_code == 200

    name2, uid2, password2 = user_with_password(admin)
    token2, _, _ = login(server.url, basic(name2, password2))
    b2 = browser(server.url, token2)
    assert b2.get("/api/v1/org").status_code == 200
    assert admin.delete("/api/v1/user/" + uid2).status_code == 200
    assert b2.get("/api/v1/org").status_code == 401


# ---- start by link ------------------------------------------------------------------------------

LINK_FLOW = """
configuration:
  arguments:
    greeting: "hello"
    who: "nobody"
flows:
  default:
    - log: "default flow"
  other:
    - log: "other flow: ${greeting} ${who} ${a.b}-${a.c}"
profiles:
  loud:
    configuration:
      arguments:
        greeting: "HELLO"
"""


@pytest.fixture
def linked(admin, git):
    """(org, project, repo name) with a repository holding LINK_FLOW."""
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": LINK_FLOW})
    name, _ = create_repo(admin, org, project, repo.url)
    return org, project, name


def link(org, project, repo, entry="other"):
    return "/api/v1/org/%s/project/%s/repo/%s/start/%s" % (org, project, repo, entry)


def processes_of(admin, org, project):
    r = admin.get("/api/v2/process", params={"orgName": org, "projectName": project})
    assert r.status_code == 200, r.text
    return r.json()


def wizard_id(r):
    assert r.status_code == 303, (r.status_code, r.text)
    loc = r.headers["Location"]
    assert loc.startswith("/#/process/") and loc.endswith("/wizard"), loc
    return loc[len("/#/process/"):-len("/wizard")]


def test_link_without_a_session_goes_to_the_login(server, admin, linked):
    org, project, repo = linked
    query = "activeProfiles=loud&arguments.who=J%C3%BCrg%20%26%20co"
    r = requests.get(server.url + link(org, project, repo) + "?" + query, allow_redirects=False, timeout=30)
    assert r.status_code == 303
    loc = r.headers["Location"]
    assert loc.startswith("/#/login?from=")
    back = urllib.parse.unquote(loc[len("/#/login?from="):])
    path, _, q = back.partition("?")
    assert path == link(org, project, repo)
    assert urllib.parse.parse_qs(q) == {"activeProfiles": ["loud"], "arguments.who": ["Jürg & co"]}
    # an expired or logged-out cookie goes there too
    r = requests.get(server.url + link(org, project, repo), cookies={"accord_session": "B" * 43},
                     allow_redirects=False, timeout=30)
    assert r.status_code == 303 and r.headers["Location"].startswith("/#/login?from=")
    assert processes_of(admin, org, project) == []


def test_link_with_a_session_starts_and_goes_to_the_wizard(server, admin, new_user, linked):
    org, project, repo = linked
    user = new_user()
    make_team(admin, org, [(user, "MEMBER")], project=project, level="WRITER")
    token, _, _ = login(server.url, user.key)
    b = browser(server.url, token)
    r = b.get(link(org, project, repo), allow_redirects=False,
              params={"activeProfiles": "loud", "arguments.who": "<Jürg>", "arguments.a.b": "1",
                      "arguments.a.c": "2", "utm_source": "mail"})
    pid = wizard_id(r)
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert p["initiator"] == user.username and p["repoName"] == repo
    log = admin.get("/api/v1/process/%s/log" % pid).content.decode()
    assert "other flow: HELLO <Jürg> 1-2" in log
    assert [x["instanceId"] for x in processes_of(admin, org, project)] == [pid]


def test_link_with_basic_or_a_key(server, admin, linked):
    org, project, repo = linked
    r = requests.get(server.url + link(org, project, repo, "default"), auth=("admin", ADMIN_PASSWORD),
                     allow_redirects=False, timeout=30)
    pid = wizard_id(r)
    assert wait_process(admin, pid)["initiator"] == "admin"
    assert "default flow" in process_log(admin, pid)
    r = admin.get(link(org, project, repo), params={"arguments.a.b": "x", "arguments.a.c": "y"}, allow_redirects=False)
    pid2 = wizard_id(r)
    assert wait_process(admin, pid2)["status"] == "FINISHED"
    assert "other flow: hello nobody x-y" in process_log(admin, pid2)


def error_page(r, status, fragment):
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["Content-Security-Policy"]
    assert 'href="/"' in r.text
    assert fragment in html.unescape(r.text), r.text
    return r.text


def test_bad_links_give_an_html_page_and_start_nothing(server, admin, new_user, linked):
    org, project, repo = linked
    get = lambda path, **kw: admin.get(path, allow_redirects=False, **kw)  # noqa: E731
    error_page(get(link("no-such-org", project, repo)), 400, "Organization not found: no-such-org")
    error_page(get(link(org, "no-such-project", repo)), 400, "Project not found: no-such-project")
    error_page(get(link(org, project, "no-such-repo")), 400, "Repository not found: no-such-repo")
    text = error_page(get(link(org, project, repo, "<b>nope<i>")), 400, "<b>nope<i>")
    assert "<b>" not in text and "&lt;b&gt;nope&lt;i&gt;" in text
    error_page(get(link(org, project, repo), params={"arguments.": "x"}), 400, "arguments.")
    # someone without the right to start there
    outsider = new_user()
    token, _, _ = login(server.url, outsider.key)
    r = browser(server.url, token).get(link(org, project, repo), allow_redirects=False)
    assert r.status_code in (403, 404) and r.headers["Content-Type"].startswith("text/html"), r.text
    # HEAD (link checkers) starts nothing
    r = requests.head(server.url + link(org, project, repo), headers={"Authorization": ADMIN_KEY}, timeout=30)
    assert r.status_code == 405
    assert processes_of(admin, org, project) == []


CHECKPOINT_FLOW = """
flows:
  default:
    - checkpoint: "first"
    - log: "after first"
"""


def test_a_get_that_changes_state_needs_the_csrf_header_with_the_cookie(server, admin):
    """GET /api/v2/process/{id}/checkpoint?name=…&action=restore changes state (Concord's
    API has it as a GET): a cross-site navigation carries the SameSite=Lax cookie, so the
    cookie alone must not restore; the CSRF header (or our Origin) does, credentials in a
    header need neither."""
    pid = start_process(admin, CHECKPOINT_FLOW)
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    token, csrf, _ = login(server.url, basic("admin", ADMIN_PASSWORD))
    b = browser(server.url, token)
    path = "/api/v2/process/%s/checkpoint" % pid
    params = {"name": "first", "action": "restore"}
    r = b.get(path, params=params)
    assert r.status_code == 403 and "CSRF" in r.json()["message"], r.text
    assert process_log(admin, pid).count("after first") == 1  # nothing restored
    r = b.get(path, params=params, headers={"X-Accord-CSRF": csrf})
    assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert process_log(admin, pid).count("after first") == 2
    # reads with the cookie alone stay as they were
    assert b.get("/api/v1/process/%s/checkpoint" % pid).status_code == 200
