"""GET /api/service/console/session and DELETE …/session/{id}: a user sees their own
console sessions (the current one marked, ids that open nothing) and ends one, after which
that browser is logged out; nobody else's sessions are seen or ended; a scoped key sees none."""
import requests

from conftest import ADMIN_KEY, Client, unique
from test_console_session import WHOAMI, basic, browser, login, user_with_password

SESSIONS = "/api/service/console/session"


def csrf_client(url, token, csrf):
    c = browser(url, token)
    c.s.headers["X-Accord-CSRF"] = csrf
    return c


def test_list_and_end_own_sessions(server, admin):
    name, _, password = user_with_password(admin)
    t1, csrf1, _ = login(server.url, basic(name, password))
    t2, _, _ = login(server.url, basic(name, password))
    first = csrf_client(server.url, t1, csrf1)
    r = first.get(SESSIONS)
    assert r.status_code == 200, r.text
    listed = r.json()
    assert len(listed) == 2, listed
    assert [s["current"] for s in listed].count(True) == 1
    mine = [s for s in listed if s["current"]][0]
    other = [s for s in listed if not s["current"]][0]
    assert len(other["id"]) == 32 and set(other["id"]) <= set("0123456789abcdef")
    assert t1 not in r.text and t2 not in r.text
    assert other["createdAt"] and other["lastSeenAt"]

    # the admin's list holds none of them, and the admin cannot end them
    assert all(s["id"] not in (mine["id"], other["id"]) for s in admin.get(SESSIONS).json())
    r = admin.delete(SESSIONS + "/" + other["id"])
    assert r.status_code == 404 and r.json()["ok"] is False, r.text

    # ending the other one logs that browser out; this one goes on
    r = first.delete(SESSIONS + "/" + other["id"])
    assert r.status_code == 200 and r.json()["result"] == "DELETED", r.text
    assert browser(server.url, t2).get(WHOAMI).status_code == 401
    assert [s["id"] for s in first.get(SESSIONS).json()] == [mine["id"]]
    r = first.delete(SESSIONS + "/" + other["id"])
    assert r.status_code == 404, r.text

    # a change needs the CSRF token, as every change by a session
    r = browser(server.url, t1).delete(SESSIONS + "/" + mine["id"])
    assert r.status_code == 403, r.text
    r = first.delete(SESSIONS + "/" + mine["id"])
    assert r.status_code == 200, r.text
    assert browser(server.url, t1).get(WHOAMI).status_code == 401


def test_a_key_sees_sessions_but_none_current_and_a_scoped_key_none(server, admin):
    name, _, password = user_with_password(admin)
    login(server.url, basic(name, password))
    r = requests.get(server.url + SESSIONS, headers={"Authorization": basic(name, password)}, timeout=30)
    assert r.status_code == 200 and len(r.json()) == 1 and r.json()[0]["current"] is False, r.text
    r = admin.post("/api/v1/apikey", json={"username": "admin", "name": unique("scoped"), "scopes": ["process:read"]})
    assert r.status_code == 200, r.text
    r = Client(server.url, r.json()["key"]).get(SESSIONS)
    assert r.status_code == 403, r.text
    assert Client(server.url, ADMIN_KEY).get(SESSIONS).status_code == 200
    assert requests.get(server.url + SESSIONS, timeout=30).status_code == 401
