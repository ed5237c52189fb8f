"""Secrets (issue 4): every endpoint of /api/v1/org/{org}/secret, its rules and bad inputs.
Organizations, teams and projects are made through the org API (World below)."""
import base64
import struct
import uuid

import pytest

from conftest import unique

API = "/api/v1/org/%s/secret"


# ---- world building ------------------------------------------------------------------

class World:
    """Orgs, teams, memberships and projects for one test server, made by the admin."""

    def __init__(self, server, admin):
        self.server = server
        self.admin = admin

    def org(self, name=None):
        name = name or unique("org")
        r = self.admin.post("/api/v1/org", json={"name": name})
        assert r.status_code == 200, r.text
        return {"id": r.json()["id"], "name": name}

    def team(self, org, name=None):
        name = name or unique("team")
        r = self.admin.post("/api/v1/org/%s/team" % org["name"], json={"name": name})
        assert r.status_code == 200, r.text
        return {"id": r.json()["id"], "name": name, "org": org}

    def add(self, team, user, role="MEMBER"):
        r = self.admin.put("/api/v1/org/%s/team/%s/users" % (team["org"]["name"], team["name"]),
                           json=[{"username": user.username, "role": role}])
        assert r.status_code == 200, r.text

    def project(self, org, name=None, visibility="PUBLIC"):
        name = name or unique("proj")
        r = self.admin.post("/api/v1/org/%s/project" % org["name"], json={"name": name, "visibility": visibility})
        assert r.status_code == 200, r.text
        return {"id": r.json()["id"], "name": name}


@pytest.fixture
def world(server, admin):
    return World(server, admin)


@pytest.fixture
def member(world, new_user):
    """An org with one member (team role MEMBER): (org, team, client)."""
    org = world.org()
    team = world.team(org)
    user = new_user()
    world.add(team, user)
    return org, team, user


def create(client, org, **parts):
    """POST a multipart create; parts are strings or (filename, bytes) tuples."""
    files = {}
    for k, v in parts.items():
        files[k] = v if isinstance(v, tuple) else (None, v)
    return client.post(API % org, files=files)


def create_ok(client, org, **parts):
    r = create(client, org, **parts)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is True and body["result"] == "CREATED" and len(body["id"]) == 36
    return body


def export(client, org, name, password=None):
    files = {"storePassword": (None, password)} if password is not None else None
    return client.post(API % org + "/" + name + "/data", files=files)


def decode_key_pair(b):
    n = struct.unpack(">i", b[:4])[0]
    pub = b[4:4 + n]
    m = struct.unpack(">i", b[4 + n:8 + n])[0]
    priv = b[8 + n:8 + n + m]
    assert len(b) == 8 + n + m
    return pub, priv


def decode_userpass(b):
    n = struct.unpack(">H", b[:2])[0]
    user = b[2:2 + n].decode("utf-8")
    m = struct.unpack(">i", b[2 + n:6 + n])[0]
    assert len(b) == 6 + n + m
    return user, b[6 + n:6 + n + m].decode("utf-8")


def error(r, status, fragment):
    assert r.status_code == status, (r.status_code, r.text)
    assert r.headers["Content-Type"].startswith("application/json")
    body = r.json()
    assert body["ok"] is False
    assert fragment.lower() in body["message"].lower(), body["message"]
    return body["message"]


# ---- create and read back ----------------------------------------------------------------

def test_data_secret_round_trip_binary_exact(admin):
    name = unique("bin")
    blob = bytes(range(256)) * 3 + b"\r\n--boundary-lookalike\r\n"
    body = create_ok(admin, "Default", type="data", name=name, data=("blob.bin", blob))
    assert "password" not in body and "publicKey" not in body
    r = export(admin, "Default", name)
    assert r.status_code == 200
    assert r.headers["Content-Type"] == "application/octet-stream"
    assert r.headers["X-Concord-SecretType"] == "DATA"
    assert r.content == blob


def test_data_secret_as_string_and_metadata(admin):
    name = unique("str")
    body = create_ok(admin, "Default", type="DaTa", name=name, data="my value")
    meta = admin.get(API % "Default" + "/" + name).json()
    assert meta["id"] == body["id"] and meta["name"] == name
    assert meta["orgName"] == "Default" and meta["orgId"] == "0fac1b18-d179-11e7-b3e7-d7df4543ed4f"
    assert meta["type"] == "DATA" and meta["storeType"] == "concord" and meta["visibility"] == "PUBLIC"
    assert meta["encryptedBy"] == "SERVER_KEY" and meta["owner"]["username"] == "admin"
    assert "projectId" not in meta and meta["projects"] == []
    assert "my value" not in str(meta)
    assert admin.get("/api/v2/org/Default/secret/" + name).json() == meta
    assert export(admin, "Default", name).content == b"my value"


def test_username_password_layout(admin):
    name = unique("up")
    create_ok(admin, "Default", type="username_password", name=name, username=" bob\u00e9 ", password="p@ss w0rd")
    r = export(admin, "Default", name)
    assert r.headers["X-Concord-SecretType"] == "USERNAME_PASSWORD"
    # text parts are trimmed (Concord's getString)
    assert decode_userpass(r.content) == ("bob\u00e9", "p@ss w0rd")
    assert admin.get(API % "Default" + "/" + name).json()["type"] == "USERNAME_PASSWORD"


def test_generated_rsa_key_pair(admin):
    name = unique("rsa")
    body = create_ok(admin, "Default", type="key_pair", name=name)
    pub = body["publicKey"]
    assert pub.startswith("ssh-rsa AAAA") and pub.endswith(" concord-server\n")
    r = admin.get(API % "Default" + "/" + name + "/public")
    assert r.status_code == 200
    assert r.json() == {"id": body["id"], "name": name, "publicKey": pub, "ok": True}
    r = export(admin, "Default", name)
    assert r.headers["X-Concord-SecretType"] == "KEY_PAIR"
    p, k = decode_key_pair(r.content)
    assert p.decode() == pub
    assert b"-----BEGIN" in k and b"PRIVATE KEY-----" in k
    assert admin.get(API % "Default" + "/" + name).json()["type"] == "KEY_PAIR"


def test_generated_ed25519_key_pair(admin):
    name = unique("ed")
    body = create_ok(admin, "Default", type="key_pair", name=name, keyType="ed25519")
    assert body["publicKey"].startswith("ssh-ed25519 AAAA")
    p, k = decode_key_pair(export(admin, "Default", name).content)
    assert p.decode() == body["publicKey"] and b"OPENSSH PRIVATE KEY" in k
    error(create(admin, "Default", type="key_pair", name=unique("ed"), keyType="dsa"), 400, "keyType")


def test_uploaded_key_pair_stored_verbatim(admin):
    name = unique("up-kp")
    pub, priv = b"ssh-rsa AAAAtest me@host\n", b"-----BEGIN RSA PRIVATE KEY-----\nxyz\n-----END RSA PRIVATE KEY-----\n"
    body = create_ok(admin, "Default", type="key_pair", name=name, public=("id.pub", pub), private=("id", priv))
    assert body["publicKey"] == pub.decode()
    assert decode_key_pair(export(admin, "Default", name).content) == (pub, priv)
    assert admin.get(API % "Default" + "/" + name + "/public").json()["publicKey"] == pub.decode()


def test_store_password(admin):
    name = unique("pw")
    body = create_ok(admin, "Default", type="data", name=name, data="guarded", storePassword="Str0ngPass")
    assert "password" not in body  # a password the user chose is not echoed
    assert admin.get(API % "Default" + "/" + name).json()["encryptedBy"] == "PASSWORD"
    error(export(admin, "Default", name), 400, "requires a password")
    msg = error(export(admin, "Default", name, "Wr0ngPass!"), 400, "Error decrypting")
    assert "Wr0ngPass" not in msg and "guarded" not in msg
    assert export(admin, "Default", name, "Str0ngPass").content == b"guarded"
    # a server-key secret refuses a password
    other = unique("nopw")
    create_ok(admin, "Default", type="data", name=other, data="x")
    error(export(admin, "Default", other, "Str0ngPass"), 400, "Not a password-protected")


def test_generate_password(admin):
    name = unique("gen")
    body = create_ok(admin, "Default", type="username_password", name=name, username="u", password="p",
                     generatePassword="TRUE")
    pw = body["password"]
    assert len(pw) == 12
    assert any(c.isupper() for c in pw) and any(c.islower() for c in pw) and any(c.isdigit() for c in pw)
    error(export(admin, "Default", name), 400, "requires a password")
    assert decode_userpass(export(admin, "Default", name, pw).content) == ("u", "p")
    # generatePassword other than "true" is false
    body = create_ok(admin, "Default", type="data", name=unique("gen"), data="x", generatePassword="yes")
    assert "password" not in body


@pytest.mark.parametrize("password,rule", [
    ("Ab1", "seven"),
    ("abcdefg1", "upper"),
    ("ABCDEFG1", "lower"),
    ("Abcdefgh", "digit"),
])
def test_store_password_policy(admin, password, rule):
    name = unique("weak")
    msg = error(create(admin, "Default", type="data", name=name, data="x", storePassword=password), 400, rule)
    assert msg.startswith("Invalid password: ") and password not in msg
    assert admin.get(API % "Default" + "/" + name).status_code == 404


def test_store_password_must_not_contain_username(new_user, member):
    org, team, user = member
    msg = error(create(user, org["name"], type="data", name=unique("u"), data="x",
                       storePassword="X1" + user.username[:5] + "z"), 400, "username")
    assert user.username[:5] not in msg


def test_project_restriction(world, admin):
    org = world.org()
    proj = world.project(org)
    name = unique("scoped")
    create_ok(admin, org["name"], type="data", name=name, data="x", project=proj["name"])
    meta = admin.get(API % org["name"] + "/" + name).json()
    assert meta["projectId"] == proj["id"] and meta["projectName"] == proj["name"]
    assert meta["projects"] == [{"id": proj["id"], "name": proj["name"]}]
    name2 = unique("scoped")
    create_ok(admin, org["name"], type="data", name=name2, data="x", projectId=proj["id"])
    assert admin.get(API % org["name"] + "/" + name2).json()["projectName"] == proj["name"]
    name3 = unique("scoped")  # the part Concord's newer clients send
    create_ok(admin, org["name"], type="data", name=name3, data="x", projectNames=proj["name"])
    assert admin.get(API % org["name"] + "/" + name3).json()["projectId"] == proj["id"]


def test_project_scoped_export_needs_a_process(world, admin, new_user):
    org = world.org()
    team = world.team(org)
    proj = world.project(org)
    user = new_user()
    world.add(team, user)
    name = unique("scoped")
    create_ok(user, org["name"], type="data", name=name, data="x", project=proj["name"])
    error(export(user, org["name"], name), 403, "Project-scoped secrets")
    assert export(admin, org["name"], name).content == b"x"


# ---- bad input: a clear 4xx and nothing stored ------------------------------------------

BAD_CREATES = [
    ({"type": "certificate", "data": "x"}, 400, "Unsupported secret type: certificate"),
    ({"data": "x"}, 400, "'type'"),
    ({"type": "data", "data": "x", "name": None}, 400, "'name'"),
    ({"type": "data", "data": "x", "name": "a"}, 400, "Invalid secret name"),
    ({"type": "data", "data": "x", "name": "bad name!"}, 400, "Invalid secret name"),
    ({"type": "data", "data": "x", "name": "has#hash"}, 400, "Invalid secret name"),
    ({"type": "data"}, 400, "'data'"),
    ({"type": "username_password", "username": "u"}, 400, "'password'"),
    ({"type": "username_password", "password": "p"}, 400, "'username'"),
    ({"type": "key_pair", "public": ("k.pub", b"ssh-rsa AAA")}, 400, "'private'"),
    ({"type": "key_pair", "private": ("k", b"PRIVATE")}, 400, "'public'"),
    ({"type": "key_pair", "public": ("k.pub", b"p" * 9000), "private": ("k", b"x")}, 400, "public key"),
    ({"type": "data", "data": "x", "visibility": "public"}, 400, "Invalid visibility value: public"),
    ({"type": "data", "data": "x", "visibility": "SECRET"}, 400, "visibility"),
    ({"type": "data", "data": "x", "project": "no-such-project"}, 400, "Project not found: no-such-project"),
    ({"type": "data", "data": "x", "projectId": str(uuid.uuid4())}, 400, "Project not found"),
    ({"type": "data", "data": "x", "storeType": "vault"}, 400, "vault"),
    # a misspelt restriction must not create an unrestricted secret
    ({"type": "data", "data": "x", "projectNamez": "p"}, 400, "Unknown form field 'projectNamez'"),
    ({"type": "data", "data": "x", "orgId": "x"}, 400, "Unknown form field 'orgId'"),
]


@pytest.mark.parametrize("parts,status,fragment", BAD_CREATES)
def test_bad_create(admin, parts, status, fragment):
    name = unique("bad")
    parts = dict(parts)
    if "name" not in parts:
        parts["name"] = name
    elif parts["name"] is None:
        del parts["name"]
    before = len(admin.get(API % "Default", params={"limit": 1000}).json())
    error(create(admin, "Default", **parts), status, fragment)
    assert admin.get(API % "Default" + "/" + name).status_code == 404
    assert len(admin.get(API % "Default", params={"limit": 1000}).json()) == before


def test_duplicate_name_is_409(admin):
    name = unique("dup")
    create_ok(admin, "Default", type="data", name=name, data="first")
    error(create(admin, "Default", type="data", name=name, data="second"), 409, "already exists")
    assert export(admin, "Default", name).content == b"first"


def test_non_multipart_body_is_415(admin):
    name = unique("json")
    r = admin.post(API % "Default", json={"type": "data", "name": name, "data": "x"})
    error(r, 415, "multipart/form-data")
    assert admin.get(API % "Default" + "/" + name).status_code == 404


def test_malformed_multipart_is_400(admin):
    r = admin.post(API % "Default", data=b"--XyZ\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\ndata",
                   headers={"Content-Type": "multipart/form-data; boundary=XyZ"})
    error(r, 400, "multipart")
    r = admin.post(API % "Default", data=b"--XyZ--", headers={"Content-Type": "multipart/form-data"})
    error(r, 400, "boundary")


def test_data_over_limit_is_413(admin):
    name = unique("big")
    error(create(admin, "Default", type="data", name=name, data=("big", b"x" * (1024 * 1024 + 1))), 413, "limit")
    assert admin.get(API % "Default" + "/" + name).status_code == 404
    name = unique("max")
    create_ok(admin, "Default", type="data", name=name, data=("big", b"y" * (1024 * 1024)))
    assert len(export(admin, "Default", name).content) == 1024 * 1024


def test_unknown_org_and_secret(admin):
    error(create(admin, "no-such-org", type="data", name=unique("x"), data="x"), 404, "no-such-org")
    error(admin.get(API % "Default" + "/no-such-secret"), 404, "Secret not found: no-such-secret")
    error(export(admin, "Default", "no-such-secret"), 404, "not found")
    error(admin.delete(API % "Default" + "/no-such-secret"), 404, "not found")


def test_public_key_errors(admin):
    name = unique("d")
    create_ok(admin, "Default", type="data", name=name, data="x")
    error(admin.get(API % "Default" + "/" + name + "/public"), 400, "expected KEY_PAIR")
    name = unique("kp")
    create_ok(admin, "Default", type="key_pair", name=name, public=("p", b"ssh-ed25519 AAAA x"), private=("k", b"k"),
              storePassword="Str0ngPass")
    error(admin.get(API % "Default" + "/" + name + "/public"), 400, "requires a password")
    name = unique("kp")
    body = create_ok(admin, "Default", type="key_pair", name=name, public=("p", b"\xff\xfe"), private=("k", b"k"))
    assert "publicKey" not in body
    error(admin.get(API % "Default" + "/" + name + "/public"), 400, "not text")


# ---- list --------------------------------------------------------------------------------

def test_list_sorted_filtered_paged(world, admin):
    org = world.org()
    for n in ["Zulu-one", "alpha-two", "Mike-three", "mike-four"]:
        create_ok(admin, org["name"], type="data", name=n, data="x")
    rows = admin.get(API % org["name"]).json()
    names = [r["name"] for r in rows]
    assert names == sorted(names) and len(names) == 4
    assert {"name", "type", "id", "orgName", "visibility"} <= set(rows[0])
    assert all(r["type"] == "DATA" for r in rows)
    assert [r["name"] for r in admin.get(API % org["name"], params={"filter": "MIKE"}).json()] == \
        ["Mike-three", "mike-four"]
    assert [r["name"] for r in admin.get(API % org["name"], params={"limit": 2, "offset": 1}).json()] == names[1:3]
    assert admin.get(API % org["name"], params={"filter": "%"}).json() == []
    assert admin.get("/api/v2/org/%s/secret" % org["name"]).json() == rows
    error(admin.get(API % org["name"], params={"limit": "abc"}), 400, "limit")
    error(admin.get(API % org["name"], params={"limit": 100000}), 400, "limit")


# ---- delete --------------------------------------------------------------------------------

def test_delete(world, admin):
    org = world.org()
    team = world.team(org)
    name = unique("del")
    create_ok(admin, org["name"], type="data", name=name, data="x")
    assert admin.post(API % org["name"] + "/" + name + "/access",
                      json={"teamId": team["id"], "level": "READER"}).status_code == 200
    r = admin.delete(API % org["name"] + "/" + name)
    assert r.status_code == 200 and r.json()["ok"] is True
    assert admin.get(API % org["name"] + "/" + name).status_code == 404
    # the name is free again, without the old rules
    create_ok(admin, org["name"], type="data", name=name, data="y")
    assert admin.get(API % org["name"] + "/" + name + "/access").json() == []
    assert export(admin, org["name"], name).content == b"y"


# ---- update and move ----------------------------------------------------------------------

def update(client, org, secret, **body):
    return client.post(API % org + "/" + secret, json=body)


def test_update_rename_visibility_and_data(world, admin):
    org = world.org()
    name, new = unique("old"), unique("new")
    create_ok(admin, org["name"], type="data", name=name, data="v1")
    r = update(admin, org["name"], name, name=new, visibility="PRIVATE")
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}
    assert admin.get(API % org["name"] + "/" + name).status_code == 404
    meta = admin.get(API % org["name"] + "/" + new).json()
    assert meta["visibility"] == "PRIVATE" and "lastUpdatedAt" not in meta
    assert export(admin, org["name"], new).content == b"v1"  # re-sealed under the new name
    r = update(admin, org["name"], new, data=base64.b64encode(b"v2\x00").decode())
    assert r.status_code == 200
    assert export(admin, org["name"], new).content == b"v2\x00"
    meta = admin.get(API % org["name"] + "/" + new).json()
    assert "lastUpdatedAt" in meta and meta["visibility"] == "PRIVATE"  # omitted: unchanged
    error(update(admin, org["name"], new, visibility="hidden"), 400, "visibility")
    error(update(admin, org["name"], new, name="x"), 400, "Invalid secret name")
    error(update(admin, org["name"], new, data="***"), 400, "Base64")


def test_update_rename_onto_existing_is_409(world, admin):
    org = world.org()
    a, b = unique("a"), unique("b")
    create_ok(admin, org["name"], type="data", name=a, data="A")
    create_ok(admin, org["name"], type="data", name=b, data="B")
    error(update(admin, org["name"], a, name=b), 409, "already exists")
    assert export(admin, org["name"], a).content == b"A" and export(admin, org["name"], b).content == b"B"


def test_move_to_another_org(world, admin):
    src, dst = world.org(), world.org()
    proj = world.project(src)
    team = world.team(src)
    name = unique("mv")
    create_ok(admin, src["name"], type="username_password", name=name, username="u", password="p",
              project=proj["name"])
    assert admin.post(API % src["name"] + "/" + name + "/access",
                      json={"teamId": team["id"], "level": "READER"}).status_code == 200
    assert update(admin, src["name"], name, orgName=dst["name"]).status_code == 200
    assert admin.get(API % src["name"] + "/" + name).status_code == 404
    meta = admin.get(API % dst["name"] + "/" + name).json()
    assert meta["orgId"] == dst["id"] and "projectId" not in meta  # project link cleared
    assert admin.get(API % dst["name"] + "/" + name + "/access").json() == []
    assert decode_userpass(export(admin, dst["name"], name).content) == ("u", "p")
    # move back by id, onto a taken name: 409
    create_ok(admin, src["name"], type="data", name=name, data="taken")
    error(update(admin, dst["name"], name, orgId=src["id"]), 409, "already exists")
    error(update(admin, dst["name"], name, orgName="no-such-org"), 400, "Organization not found")


def test_update_project_link(world, admin):
    org = world.org()
    proj = world.project(org)
    name = unique("pl")
    create_ok(admin, org["name"], type="data", name=name, data="x")
    assert update(admin, org["name"], name, projectName=proj["name"]).status_code == 200
    assert admin.get(API % org["name"] + "/" + name).json()["projectName"] == proj["name"]
    assert update(admin, org["name"], name, projectName="").status_code == 200
    assert "projectId" not in admin.get(API % org["name"] + "/" + name).json()
    assert update(admin, org["name"], name, projectId=proj["id"]).status_code == 200
    assert admin.get(API % org["name"] + "/" + name).json()["projectId"] == proj["id"]
    error(update(admin, org["name"], name, projectName="nope"), 400, "Project not found")


def test_update_password_protected(world, admin):
    org = world.org()
    name, new = unique("pp"), unique("pp")
    create_ok(admin, org["name"], type="data", name=name, data="secret", storePassword="Str0ngPass")
    error(update(admin, org["name"], name, data=base64.b64encode(b"x").decode()), 400, "original 'storePassword'")
    error(update(admin, org["name"], name, name=new), 400, "storePassword")
    error(update(admin, org["name"], name, name=new, storePassword="Wr0ngPass"), 400, "Error decrypting")
    assert update(admin, org["name"], name, name=new, storePassword="Str0ngPass").status_code == 200
    assert export(admin, org["name"], new, "Str0ngPass").content == b"secret"
    error(update(admin, org["name"], new, storePassword="Str0ngPass", newStorePassword="weak"), 400, "Invalid password")
    assert update(admin, org["name"], new, storePassword="Str0ngPass", newStorePassword="N3wPassword").status_code == 200
    error(export(admin, org["name"], new, "Str0ngPass"), 400, "Error decrypting")
    assert export(admin, org["name"], new, "N3wPassword").content == b"secret"
    # visibility alone needs no password
    assert update(admin, org["name"], new, visibility="PRIVATE").status_code == 200
    # a server-key secret cannot get a password
    plain = unique("sk")
    create_ok(admin, org["name"], type="data", name=plain, data="x")
    error(update(admin, org["name"], plain, newStorePassword="N3wPassword"), 400, "server's key")


def test_update_owner(world, admin, new_user):
    org = world.org()
    team = world.team(org)
    alice = new_user()
    world.add(team, alice)
    name = unique("own")
    create_ok(admin, org["name"], type="data", name=name, data="x", visibility="PRIVATE")
    error(export(alice, org["name"], name), 403, "READER")
    assert update(admin, org["name"], name, owner={"id": alice.user_id}).status_code == 200
    meta = admin.get(API % org["name"] + "/" + name).json()
    assert meta["owner"]["id"] == alice.user_id
    assert export(alice, org["name"], name).content == b"x"
    error(update(admin, org["name"], name, owner={"id": str(uuid.uuid4())}), 400, "User not found")


def test_update_v2_multipart(world, admin):
    org = world.org()
    name = unique("v2")
    create_ok(admin, org["name"], type="data", name=name, data="one", visibility="PRIVATE")
    files = {"type": (None, "username_password"), "username": (None, "me"), "password": (None, "pw")}
    r = admin.post("/api/v2/org/%s/secret/%s" % (org["name"], name), files=files)
    assert r.status_code == 200 and r.json()["result"] == "UPDATED", r.text
    meta = admin.get(API % org["name"] + "/" + name).json()
    assert meta["type"] == "USERNAME_PASSWORD"
    assert meta["visibility"] == "PRIVATE"  # an omitted visibility is not changed
    assert decode_userpass(export(admin, org["name"], name).content) == ("me", "pw")
    r = admin.post("/api/v2/org/%s/secret/%s" % (org["name"], name), files={"data": (None, "x")})
    assert r.status_code == 200  # no type: the data parts are ignored
    r = admin.post("/api/v2/org/%s/secret/%s" % (org["name"], name), files={"type": (None, "data")})
    error(r, 400, "'data'")
    r = admin.post("/api/v2/org/%s/secret/%s" % (org["name"], name), json={"name": "x"})
    error(r, 415, "multipart")
    r = admin.post("/api/v2/org/%s/secret/%s" % (org["name"], name), files={"visibilty": (None, "PUBLIC")})
    error(r, 400, "Unknown form field 'visibilty'")
    assert admin.get(API % org["name"] + "/" + name).json()["visibility"] == "PRIVATE"


# ---- access rules ---------------------------------------------------------------------------

def test_access_rules(world, admin):
    org = world.org()
    t1, t2 = world.team(org), world.team(org)
    name = unique("acl")
    create_ok(admin, org["name"], type="data", name=name, data="x")
    base = API % org["name"] + "/" + name + "/access"
    assert admin.get(base).json() == []
    r = admin.post(base, json={"teamId": t1["id"], "level": "READER"})
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}
    r = admin.post(base, json={"orgName": org["name"], "teamName": t2["name"], "level": "WRITER"})
    assert r.status_code == 200
    r = admin.post(base, json={"teamName": t1["name"], "level": "OWNER"})  # upsert, org defaults to the secret's
    assert r.status_code == 200
    rules = {x["teamId"]: x for x in admin.get(base).json()}
    assert rules[t1["id"]]["level"] == "OWNER" and rules[t2["id"]]["level"] == "WRITER"
    assert rules[t2["id"]]["teamName"] == t2["name"] and rules[t2["id"]]["orgName"] == org["name"]
    r = admin.post(base + "/bulk", json=[{"teamId": t2["id"], "level": "READER"}])
    assert r.status_code == 200 and r.json() == {"ok": True, "result": "UPDATED"}
    assert [(x["teamId"], x["level"]) for x in admin.get(base).json()] == [(t2["id"], "READER")]
    assert admin.post(base + "/bulk", json=[]).status_code == 200
    assert admin.get(base).json() == []


def test_access_rule_errors(world, admin):
    org, other = world.org(), world.org()
    t = world.team(org)
    foreign = world.team(other)
    name = unique("acl")
    create_ok(admin, org["name"], type="data", name=name, data="x")
    base = API % org["name"] + "/" + name + "/access"
    error(admin.post(base, json={"teamId": t["id"], "level": "reader"}), 400, "level")
    error(admin.post(base, json={"teamId": t["id"]}), 400, "level")
    error(admin.post(base, json={"teamId": str(uuid.uuid4()), "level": "READER"}), 400, "Team not found")
    error(admin.post(base, json={"teamName": "nope", "level": "READER"}), 400, "Team not found")
    error(admin.post(base, json={"level": "READER"}), 400, "teamId")
    error(admin.post(base, json={"teamId": foreign["id"], "level": "READER"}), 400, "another organization")
    error(admin.post(base + "/bulk", data="null", headers={"Content-Type": "application/json"}), 400, "null")
    error(admin.post(base + "/bulk", json={"teamId": t["id"]}), 400, "array")
    # one bad entry: nothing changes
    assert admin.post(base, json={"teamId": t["id"], "level": "READER"}).status_code == 200
    error(admin.post(base + "/bulk", json=[{"teamId": t["id"], "level": "OWNER"},
                                           {"teamId": str(uuid.uuid4()), "level": "READER"}]), 400, "Team not found")
    assert [x["level"] for x in admin.get(base).json()] == ["READER"]
    error(admin.post(API % org["name"] + "/nope/access", json={"teamId": t["id"], "level": "READER"}), 404,
          "not found")


# ---- the database's own limit (issue 15 part 5) --------------------------------------------

def test_secret_over_the_store_value_limit_is_413_and_nothing_is_stored(fresh_server):
    """A value the database refuses (SQLITE_TOOBIG) is 413 naming the limit, not 500 and
    not a NULL stored in its place."""
    from conftest import ADMIN_KEY, Client
    srv = fresh_server(args=["--limit-store-value-bytes", "65536"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    org = unique("org")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    msg = error(create(admin, org, type="data", name="big", data=("d", b"x" * 200000)), 413, "too large")
    assert "65536" in msg
    assert admin.get(API % org + "/big").status_code == 404
    create_ok(admin, org, type="data", name="small", data=("d", b"x" * 1000))
    assert export(admin, org, "small").content == b"x" * 1000


def test_public_key_of_a_public_secret_for_everyone(world, admin, new_user):
    """Concord's SecretIT.testOwnerChange and getPublicKey (READER, orgMembersOnly=false):
    the public key of a PUBLIC secret, project-restricted or not, is readable outside the
    organization; a PRIVATE one's is not, nor anything in a PRIVATE organization."""
    org = world.org()
    proj = world.project(org)
    outsider = new_user()
    name = unique("pub")
    body = create_ok(admin, org["name"], type="key_pair", name=name, public=("p", b"ssh-ed25519 AAAAx k"),
                     private=("k", b"priv"), project=proj["name"])
    r = outsider.get(API % org["name"] + "/" + name + "/public")
    assert r.status_code == 200, r.text
    assert r.json() == {"id": body["id"], "name": name, "publicKey": "ssh-ed25519 AAAAx k", "ok": True}
    error(outsider.get(API % org["name"] + "/" + name), 403, "")  # the metadata stays for members
    error(export(outsider, org["name"], name), 403, "")
    hidden = unique("priv")
    create_ok(admin, org["name"], type="key_pair", name=hidden, public=("p", b"ssh-ed25519 AAAAy k"),
              private=("k", b"priv"), visibility="PRIVATE")
    error(outsider.get(API % org["name"] + "/" + hidden + "/public"), 403, "READER")
    closed = world.org()
    r = admin.post("/api/v1/org", json={"name": closed["name"], "visibility": "PRIVATE"})
    assert r.status_code == 200, r.text
    create_ok(admin, closed["name"], type="key_pair", name=name, public=("p", b"ssh-ed25519 AAAAz k"),
              private=("k", b"priv"))
    error(outsider.get(API % closed["name"] + "/" + name + "/public"), 404, "Organization not found")
