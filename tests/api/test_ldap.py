"""The LDAP realm (docs/security.md "Realms"), against a real slapd started by
scripts/ldap-server: login with Basic credentials and through the console, the user made on
first login, groups (nested ones too), wrong passwords, unknown and disabled users, filter
injection in usernames, a directory that is down, and bad settings."""
import base64
import os
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import ADMIN_PASSWORD, BIN, ROOT, Client, Server, backend_neutral, unique

neutral = backend_neutral("the directory's settings, TLS and outages against a local slapd, refused before any "
                          "user is stored; the logins that make and link users run on both backends")

SCRIPT = os.path.join(ROOT, "scripts", "ldap-server")
BASE = "dc=example,dc=org"

pytestmark = pytest.mark.skipif(not shutil.which("slapd") and not os.path.exists("/usr/sbin/slapd"),
                                reason="slapd is not installed (scripts/deps)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def ldap_args(url):
    return ["--ldap-url", url, "--ldap-search-base", BASE, "--ldap-system-user", "cn=reader,ou=system," + BASE]


LDAP_ENV = {"ACCORD_LDAP_SYSTEM_PASSWORD": "reader-pw"}


@pytest.fixture(scope="module")
def directory():
    d = tempfile.mkdtemp(prefix="accord-ldap-")
    os.rmdir(d)
    url = subprocess.run([SCRIPT, "start", d, str(free_port())], check=True, capture_output=True,
                         text=True).stdout.strip()
    yield url
    subprocess.run([SCRIPT, "stop", d], check=True)


@pytest.fixture(scope="module")
def srv(directory):
    s = Server(env=LDAP_ENV, args=ldap_args(directory), admin_password=True).start()
    yield s
    s.cleanup()


def as_user(srv, user, password):
    return Client(srv.url, basic(user, password))


def admin_of(srv):
    return Client(srv.url, basic("admin", ADMIN_PASSWORD))


def test_first_login_creates_the_user_with_attributes_and_nested_groups(srv):
    r = as_user(srv, "alice", "alice-pw").get("/api/service/console/whoami")
    assert r.status_code == 200, r.text
    assert r.json()["username"] == "alice"
    assert r.json()["realm"] == "ldap"
    assert r.json()["displayName"] == "Alice Liddell"
    r = admin_of(srv).get("/api/v1/user/alice")
    assert r.status_code == 200, r.text
    u = r.json()
    assert u["type"] == "LDAP"
    assert u["displayName"] == "Alice Liddell"
    assert u["email"] == "alice@example.org"
    assert set(u["ldapGroups"]) == {"cn=devs,ou=groups," + BASE, "cn=engineering,ou=groups," + BASE,
                                    "cn=managers,ou=groups," + BASE}
    # A second login finds the same record.
    r2 = as_user(srv, "alice", "alice-pw").get("/api/v1/user/alice")
    assert r2.status_code in (200, 403)
    assert admin_of(srv).get("/api/v1/user/alice").json()["id"] == u["id"]


def test_console_login_through_the_directory(srv):
    c = as_user(srv, "alice", "alice-pw")
    r = c.get("/api/service/console/whoami", headers={"X-Concord-EnableSession": "true"})
    assert r.status_code == 200, r.text
    assert "accord_session" in r.headers.get("Set-Cookie", "")
    s = Client(srv.url)
    s.s.cookies.set("accord_session", c.s.cookies.get("accord_session"))
    r = s.get("/api/service/console/whoami")
    assert r.status_code == 200, r.text
    assert r.json()["username"] == "alice"


@pytest.mark.parametrize("user,password", [
    ("alice", "wrong"),        # wrong password
    ("nobody-here", "x-pw"),   # unknown user
    ("carol", "carol-pw"),     # disabled (locked) account, right password
])
def test_refused_logins_are_401_and_create_nothing(srv, user, password):
    r = as_user(srv, user, password).get("/api/service/console/whoami")
    assert r.status_code == 401, r.text
    assert r.json()["message"] == "invalid username or password"
    if user != "alice":
        assert admin_of(srv).get("/api/v1/user/" + user).status_code == 404


@pytest.mark.parametrize("user", ["*", "al*", "alice)(cn=*", "*)(|(cn=*", "alice)(|(objectClass=*)",
                                  "alice\\2a", "alice\x00"])
def test_filter_injection_in_usernames_is_refused(srv, user):
    # Unescaped, each would match alice's entry (or several), whose password this is.
    r = as_user(srv, user, "alice-pw").get("/api/service/console/whoami")
    assert r.status_code == 401, r.text
    assert r.json()["message"] == "invalid username or password"


def test_a_local_user_with_a_password_answers_before_the_directory(srv):
    admin = admin_of(srv)
    r = admin.post("/api/v1/user", json={"username": "bob", "type": "LOCAL", "password": "Local-pass-123"})
    assert r.status_code == 200, r.text
    assert as_user(srv, "bob", "bob-pw").get("/api/service/console/whoami").status_code == 401
    r = as_user(srv, "bob", "Local-pass-123").get("/api/service/console/whoami")
    assert r.status_code == 200, r.text
    assert r.json()["realm"] == "local"


def test_display_name_follows_the_directory(srv, directory):
    ldif = "dn: cn=alice,ou=people,%s\nchangetype: modify\nreplace: displayName\ndisplayName: Alice Renamed\n" % BASE
    subprocess.run(["ldapmodify", "-x", "-H", directory, "-D", "cn=admin," + BASE, "-w", "admin-pw"],
                   input=ldif, text=True, check=True, capture_output=True)
    try:
        assert as_user(srv, "alice", "alice-pw").get("/api/service/console/whoami").status_code == 200
        assert admin_of(srv).get("/api/v1/user/alice").json()["displayName"] == "Alice Renamed"
    finally:
        subprocess.run(["ldapmodify", "-x", "-H", directory, "-D", "cn=admin," + BASE, "-w", "admin-pw"],
                       input=ldif.replace("Alice Renamed", "Alice Liddell"), text=True, check=True,
                       capture_output=True)


@neutral
def test_directory_down_is_503_for_ldap_users_and_local_users_still_work(fresh_server):
    s = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args("ldap://127.0.0.1:%d/" % free_port())).start()
    r = as_user(s, "alice", "alice-pw").get("/api/service/console/whoami")
    assert r.status_code == 503, r.text
    assert r.json()["ok"] is False
    assert "LDAP directory unavailable" in r.json()["message"]
    assert "reader-pw" not in s.read_log()
    r = admin_of(s).get("/api/service/console/whoami")
    assert r.status_code == 200, r.text


@neutral
@pytest.mark.parametrize("args,env,expect", [
    ([], {"ACCORD_LDAP_SYSTEM_PASSWORD": "not-the-pw"}, "refused --ldap-system-user"),
    (["--ldap-search-base", "ou=nowhere," + BASE], LDAP_ENV, "--ldap-search-base ou=nowhere"),
])
def test_settings_the_directory_refuses_stop_the_start(directory, args, env, expect):
    d = tempfile.mkdtemp(prefix="accord-ldap-cfg-")
    try:
        e = dict(os.environ)
        e.update(env)
        p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--data", d] + ldap_args(directory) + args,
                           env=e, capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert expect in p.stderr
        assert "not-the-pw" not in p.stderr + p.stdout
    finally:
        shutil.rmtree(d, ignore_errors=True)


@neutral
def test_a_directory_down_at_start_is_a_warning(fresh_server):
    s = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args("ldap://127.0.0.1:%d/" % free_port())).start()
    assert "cannot be reached at start" in s.read_log()


@neutral
@pytest.mark.parametrize("args,env,expect", [
    (["--ldap-url", "ldap://127.0.0.1:1/"], {}, "--ldap-search-base"),
    (["--ldap-url", "http://x/", "--ldap-search-base", BASE], {}, "ldap://"),
    (["--ldap-url", "ldap://127.0.0.1:1/", "--ldap-search-base", BASE, "--ldap-principal-search-filter", "(cn=x)"],
     {}, "{0}"),
    (["--ldap-url", "ldap://127.0.0.1:1/", "--ldap-search-base", BASE, "--ldap-system-user", "cn=r"], {},
     "ACCORD_LDAP_SYSTEM_PASSWORD"),
    (["--ldap-url", "ldap://127.0.0.1:1/", "--ldap-search-base", BASE, "--ldap-ca-file", "/nonexistent.pem"], {},
     "--ldap-ca-file"),
])
def test_bad_settings_are_refused_at_start(args, env, expect):
    d = tempfile.mkdtemp(prefix="accord-ldap-cfg-")
    try:
        e = dict(os.environ)
        e.pop("ACCORD_LDAP_SYSTEM_PASSWORD", None)
        e.update(env)
        p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--data", d] + args, env=e,
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, p.stderr
        assert expect in p.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_teams_linked_to_ldap_groups_grant_their_role(srv):
    admin = admin_of(srv)
    org, team = unique("ldaporg"), unique("team")
    assert admin.post("/api/v1/org", json={"name": org, "visibility": "PRIVATE"}).status_code == 200
    assert admin.post("/api/v1/org/%s/team" % org, json={"name": team}).status_code == 200
    alice = as_user(srv, "alice", "alice-pw")
    names = [o["name"] for o in alice.get("/api/service/console/whoami").json().get("orgs", [])]
    assert org not in names
    assert alice.get("/api/v1/org/%s/team/%s/ldapGroups" % (org, team)).status_code == 404

    # engineering holds alice only through devs (nested); DNs compare without case.
    path = "/api/v1/org/%s/team/%s/ldapGroups" % (org, team)
    r = admin.put(path, json=[{"group": "CN=Engineering,OU=groups," + BASE, "role": "MAINTAINER"}])
    assert r.status_code == 200, r.text
    assert r.json()["result"] == "UPDATED"
    assert admin.get(path).json() == [{"group": "CN=Engineering,OU=groups," + BASE, "role": "MAINTAINER"}]

    names = [o["name"] for o in alice.get("/api/service/console/whoami").json().get("orgs", [])]
    assert org in names
    # As a MAINTAINER of the team, alice may manage its members and see its groups.
    r = alice.put("/api/v1/org/%s/team/%s/users" % (org, team), json=[{"username": "admin", "role": "MEMBER"}])
    assert r.status_code == 200, r.text
    assert alice.get(path).status_code == 200
    # ... but not link a group as OWNER.
    assert alice.put(path, json=[{"group": "cn=devs,ou=groups," + BASE, "role": "OWNER"}]).status_code == 403

    r = admin.put(path + "?replace=true", json=[])
    assert r.status_code == 200, r.text
    assert admin.get(path).json() == []
    names = [o["name"] for o in alice.get("/api/service/console/whoami").json().get("orgs", [])]
    assert org not in names


def test_roles_linked_to_ldap_groups_grant_their_permissions(srv):
    admin = admin_of(srv)
    name = unique("role")
    assert admin.post("/api/v1/role", json={"name": name, "permissions": ["createOrg"]}).status_code == 200
    alice = as_user(srv, "alice", "alice-pw")
    assert alice.post("/api/v1/org", json={"name": unique("ldaporg")}).status_code == 403

    # engineering holds alice only through devs (nested); DNs compare without case.
    path = "/api/v1/role/%s/ldapGroups" % name
    assert admin.put(path, json=["CN=Engineering,OU=groups," + BASE]).status_code == 200
    assert alice.post("/api/v1/org", json={"name": unique("ldaporg")}).status_code == 200
    held = admin.get("/api/v1/user/alice").json()["roles"]
    assert [r["permissions"] for r in held if r["name"] == name] == [["createOrg"]]
    assert admin.put(path + "?replace=true", json=[]).status_code == 200
    assert alice.post("/api/v1/org", json={"name": unique("ldaporg")}).status_code == 403

    # A built-in role too: the members of devs are admins while it is linked.
    admin_groups = "/api/v1/role/concordAdmin/ldapGroups"
    assert alice.get("/api/v1/role").status_code == 403
    try:
        assert admin.put(admin_groups, json=["cn=devs,ou=groups," + BASE]).status_code == 200
        assert alice.get("/api/v1/role").status_code == 200
    finally:
        assert admin.put(admin_groups + "?replace=true", json=[]).status_code == 200
    assert alice.get("/api/v1/role").status_code == 403


def test_a_system_reader_through_a_group_may_read_metrics(fresh_server, directory):
    srv = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args(directory) + ["--metrics", "authenticated"]).start()
    alice = as_user(srv, "alice", "alice-pw")
    assert alice.get("/metrics").status_code == 403
    r = admin_of(srv).put("/api/v1/role/concordSystemReader/ldapGroups", json=["cn=devs,ou=groups," + BASE])
    assert r.status_code == 200, r.text
    assert alice.get("/metrics").status_code == 200


@pytest.mark.parametrize("body", [[{"role": "MEMBER"}], [{"group": "", "role": "MEMBER"}],
                                  [{"group": "cn=x", "role": "BOSS"}], [{"group": "cn=x\n"}], ["cn=x"], {}, []])
def test_bad_ldap_group_lists_are_400_and_store_nothing(srv, body):
    admin = admin_of(srv)
    org, team = unique("ldaporg"), unique("team")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    assert admin.post("/api/v1/org/%s/team" % org, json={"name": team}).status_code == 200
    path = "/api/v1/org/%s/team/%s/ldapGroups" % (org, team)
    r = admin.put(path, json=[{"group": "cn=ok"}] + body if isinstance(body, list) and body else body)
    assert r.status_code == 400, r.text
    assert r.json()["ok"] is False and r.json()["message"]
    assert admin.get(path).json() == []


@pytest.fixture(scope="module")
def tls_directory():
    """(ldap:// URL with StartTLS, ldaps:// URL, the CA's PEM file)."""
    d = tempfile.mkdtemp(prefix="accord-ldaps-")
    os.rmdir(d)
    port, tls_port = free_port(), free_port()
    url = subprocess.run([SCRIPT, "start", d, str(port), str(tls_port)], check=True, capture_output=True,
                         text=True).stdout.strip()
    yield url, "ldaps://127.0.0.1:%d/" % tls_port, os.path.join(d, "ca.pem")
    subprocess.run([SCRIPT, "stop", d], check=True)


@neutral
@pytest.mark.parametrize("mode", ["ldaps", "starttls"])
def test_tls_verifies_the_directory_certificate(fresh_server, tls_directory, mode):
    plain, ldaps, ca = tls_directory
    url, extra = (ldaps, []) if mode == "ldaps" else (plain, ["--ldap-starttls", "true"])
    # The directory's CA is not one of the system's: without --ldap-ca-file the certificate
    # does not verify and nothing is sent.
    s = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args(url) + extra).start()
    r = as_user(s, "alice", "alice-pw").get("/api/service/console/whoami")
    assert r.status_code == 503, r.text
    assert "LDAP directory unavailable" in r.json()["message"]
    s = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args(url) + extra + ["--ldap-ca-file", ca]).start()
    r = as_user(s, "alice", "alice-pw").get("/api/service/console/whoami")
    assert r.status_code == 200, r.text
    assert r.json()["realm"] == "ldap"


def ldap_modify(directory, ldif):
    subprocess.run(["ldapmodify", "-x", "-H", directory, "-D", "cn=admin," + BASE, "-w", "admin-pw"],
                   input=ldif, text=True, check=True, capture_output=True)


def groups_after_login(s):
    assert as_user(s, "alice", "alice-pw").get("/api/service/console/whoami").status_code == 200
    return set(admin_of(s).get("/api/v1/user/alice").json()["ldapGroups"])


def test_groups_are_read_again_once_the_cache_time_has_passed(fresh_server, directory):
    devs = "cn=devs,ou=groups," + BASE
    cached = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args(directory)).start()
    short = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args(directory) + ["--ldap-groups-cache", "1"]).start()
    assert devs in groups_after_login(cached)
    assert devs in groups_after_login(short)
    # groupOfNames needs a member: bob takes alice's place.
    change = "dn: %s\nchangetype: modify\nreplace: member\nmember: cn=%%s,ou=people,%s\n" % (devs, BASE)
    ldap_modify(directory, change % "bob")
    try:
        # Within --ldap-groups-cache (10 minutes by default) a login does not read them again.
        assert devs in groups_after_login(cached)
        deadline = time.time() + 30
        while devs in groups_after_login(short):
            assert time.time() < deadline, "the groups were not read again"
            time.sleep(0.2)
        assert groups_after_login(short) == set()
    finally:
        ldap_modify(directory, change % "alice")


def test_only_ldap_records_answer_to_the_directory(fresh_server, directory):
    # A LOCAL user without a password (like admin started without ACCORD_ADMIN_PASSWORD) is
    # never taken over by a directory entry of the same name.
    s = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args(directory)).start()
    admin = Client(s.url, "Bearer " + s.env["ACCORD_ADMIN_API_KEY"])
    assert admin.post("/api/v1/user", json={"username": "alice", "type": "LOCAL"}).status_code == 200
    r = as_user(s, "alice", "alice-pw").get("/api/service/console/whoami")
    assert r.status_code == 401, r.text
    assert "ldapGroups" not in admin.get("/api/v1/user/alice").json()
    # A record of type LDAP made beforehand (to put the user into teams early) is the one used.
    s = fresh_server(admin_password=True, env=LDAP_ENV, args=ldap_args(directory)).start()
    admin = Client(s.url, "Bearer " + s.env["ACCORD_ADMIN_API_KEY"])
    r = admin.post("/api/v1/user", json={"username": "alice", "type": "LDAP"})
    assert r.status_code == 200, r.text
    made = r.json()["id"]
    r = as_user(s, "alice", "alice-pw").get("/api/service/console/whoami")
    assert r.status_code == 200, r.text
    u = admin.get("/api/v1/user/alice").json()
    assert u["id"] == made
    assert u["displayName"] == "Alice Liddell" and u["ldapGroups"]
