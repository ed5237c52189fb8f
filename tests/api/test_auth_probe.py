"""Authentication and user names against an outside probe (issue 15 part 11)."""
import requests

from conftest import unique


def basic(url, user, password):
    return requests.get(url + "/api/v1/apikey", auth=(user, password), timeout=30)


def test_disabled_user_gets_the_generic_401_after_the_password_check(server, admin):
    name, pw = unique("dis"), "Right-pass-123"
    assert admin.post("/api/v1/user", json={"username": name, "password": pw}).status_code == 200
    assert basic(server.url, name, pw).status_code == 200
    assert admin.post("/api/v1/user", json={"username": name, "disabled": True}).status_code == 200
    right = basic(server.url, name, pw)
    wrong = basic(server.url, name, "Wrong-pass-123")
    missing = basic(server.url, unique("nobody"), pw)
    assert right.status_code == wrong.status_code == missing.status_code == 401
    assert right.json() == wrong.json() == missing.json() == {"ok": False, "message": "invalid username or password"}
    assert "disabled" not in right.text
    assert admin.post("/api/v1/user", json={"username": name, "disabled": False}).status_code == 200
    assert basic(server.url, name, pw).status_code == 200


def test_disabled_users_api_key_gets_the_generic_401(admin, new_user):
    user = new_user()
    assert admin.post("/api/v1/user", json={"username": user.username, "disabled": True}).status_code == 200
    r = user.get("/api/v1/apikey")
    assert r.status_code == 401 and r.json()["message"] == "invalid or expired API key"


def create_user(admin, name, **kw):
    return admin.post("/api/v1/user", json=dict({"username": name}, **kw))


def test_usernames_are_one_user_in_any_case_unicode_too(server, admin):
    tag = unique("")[1:]
    for lower, upper in [("ålice" + tag, "ÅLICE" + tag), ("алиса" + tag, "АЛИСА" + tag),
                         ("élodie" + tag, "ÉLODIE" + tag), ("bob" + tag, "BOB" + tag)]:
        r = create_user(admin, lower, password="Pass-word-123")
        assert r.status_code == 200 and r.json()["result"] == "CREATED", r.text
        uid = r.json()["id"]
        r = create_user(admin, upper, displayName="changed")
        assert r.status_code == 200 and r.json()["result"] == "UPDATED" and r.json()["id"] == uid, r.text
        r = admin.get("/api/v1/user/" + upper)
        assert r.status_code == 200 and r.json()["id"] == uid, r.text
        r = requests.get(server.url + "/api/v1/apikey", auth=(upper.encode(), b"Pass-word-123"), timeout=30)
        assert r.status_code == 200, r.text


def test_non_nfc_usernames_are_refused(admin):
    tag = unique("")[1:]
    for name in ["A\u030alice" + tag, "\u212blice" + tag, "e\u0301lodie" + tag]:
        r = create_user(admin, name)
        assert r.status_code == 400, r.text
        assert "NFC" in r.json()["message"], r.text
    # the composed spelling is fine
    assert create_user(admin, "\u00c5lice-nfc" + tag).status_code == 200
