"""The OpenID Connect realm (docs/security.md "Realms"), against a provider started by the test
(tests/api/oidc_provider.py) that signs real RS256 tokens: the console's SSO login (code flow
with PKCE, state, nonce), the user made on first login, groups → teams and roles, the checks
of the ID token (nonce, expiry, audience, signature, key rotation), bearer tokens on the API,
a provider that is down, and bad settings."""
import base64
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse

import pytest
import requests

from conftest import ADMIN_PASSWORD, BIN, Client, Server, backend_neutral, unique

neutral = backend_neutral("the ID token's and the provider's checks (signature, keys, state, outages, settings)"
                          " against a local provider, refused before any user is stored or with users the other"
                          " tests make; the logins that make and link users and sessions run on both backends")

pytest.importorskip("cryptography", reason="python3-cryptography is not installed (scripts/deps)")
from oidc_provider import Provider  # noqa: E402

SECRET = "s3cret-client"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def oidc_args(provider_url, port, extra=()):
    return ["--listen", "127.0.0.1:%d" % port, "--oidc-discovery-url", provider_url, "--oidc-client-id", "accord",
            "--oidc-redirect-url", "http://127.0.0.1:%d/api/service/oidc/callback" % port] + list(extra)


def start(make, provider_url, extra=()):
    port = free_port()
    return make(env={"ACCORD_OIDC_CLIENT_SECRET": SECRET}, args=oidc_args(provider_url, port, extra),
                admin_password=True).start()


@pytest.fixture(scope="module")
def provider():
    p = Provider(client_secret=SECRET).start()
    yield p
    p.stop()


@pytest.fixture(scope="module")
def srv(provider):
    s = start(lambda **kw: Server(**kw), provider.url,
              ["--oidc-jwks-refetch", "0", "--oidc-bearer", "true",
               "--oidc-role-mapping", "concordSystemReader=auditors"])
    yield s
    s.cleanup()


def admin_of(srv):
    return Client(srv.url, "Basic " + base64.b64encode(("admin:" + ADMIN_PASSWORD).encode()).decode())


def sso_login(srv):
    """The whole login as a browser makes it: every redirect followed.  The session and the
    last answer."""
    s = requests.Session()
    r = s.get(srv.url + "/api/service/oidc/auth", timeout=30)
    return s, r


def begin(srv):
    """A login up to the provider's redirect back: the browser's session and the callback URL."""
    s = requests.Session()
    r = s.get(srv.url + "/api/service/oidc/auth", allow_redirects=False, timeout=30)
    assert r.status_code == 302, r.text
    r = s.get(r.headers["Location"], allow_redirects=False, timeout=30)
    assert r.status_code == 302, r.text
    return s, r.headers["Location"]


def set_user(provider, email, groups=(), name=None):
    provider.user = {"email": email, "name": name or email.split("@")[0].title(), "groups": list(groups)}


def test_sso_login_creates_the_user_and_opens_a_console_session(srv, provider):
    email = unique("alice") + "@example.org"
    set_user(provider, email.upper(), name="Alice Liddell")
    s, r = sso_login(srv)
    assert r.status_code == 200, r.text
    assert r.url == srv.url + "/"
    who = s.get(srv.url + "/api/service/console/whoami", timeout=30)
    assert who.status_code == 200, who.text
    assert who.json()["username"] == email  # the email, lower-cased, as Concord's plugin names users
    assert who.json()["displayName"] == "Alice Liddell"
    assert who.json()["csrfToken"]
    u = admin_of(srv).get("/api/v1/user/" + email).json()
    assert u["type"] == "LOCAL" and u["email"] == email.upper()
    # PKCE S256: the token request carried the verifier of the challenge (the provider checked it).
    assert provider.token_requests[-1]["code_verifier"]
    # Neither the code, the verifier nor the client secret reach the server's log.
    log = srv.read_log()
    for value in (provider.token_requests[-1]["code"], provider.token_requests[-1]["code_verifier"], SECRET):
        assert value not in log
    # The state cookie is single-use: cleared by the callback.
    assert "accord_oidc" not in s.cookies.get_dict()
    # A second login finds the same user.
    s2, r2 = sso_login(srv)
    assert r2.status_code == 200
    assert admin_of(srv).get("/api/v1/user/" + email).json()["id"] == u["id"]


def test_logout_ends_the_session_and_goes_through_the_provider(srv, provider):
    set_user(provider, unique("bob") + "@example.org")
    s, r = sso_login(srv)
    assert s.get(srv.url + "/api/service/console/whoami", timeout=30).status_code == 200
    r = s.get(srv.url + "/api/service/oidc/logout", allow_redirects=False, timeout=30)
    assert r.status_code == 302
    assert r.headers["Location"].startswith(provider.url + "/logout?")
    assert s.get(srv.url + "/api/service/console/whoami", timeout=30).status_code == 401


def test_groups_claim_links_teams_and_roles_at_each_login(srv, provider):
    admin = admin_of(srv)
    org, team = unique("oidcorg"), unique("team")
    assert admin.post("/api/v1/org", json={"name": org, "visibility": "PRIVATE"}).status_code == 200
    assert admin.post("/api/v1/org/%s/team" % org, json={"name": team}).status_code == 200
    r = admin.put("/api/v1/org/%s/team/%s/ldapGroups" % (org, team), json=[{"group": "Devs", "role": "MAINTAINER"}])
    assert r.status_code == 200, r.text
    email = unique("carol") + "@example.org"

    set_user(provider, email, groups=["devs", "auditors"])
    s, _ = sso_login(srv)
    who = s.get(srv.url + "/api/service/console/whoami", timeout=30).json()
    assert org in [o["name"] for o in who["orgs"]]
    assert "concordSystemReader" in who["roles"]
    assert set(admin.get("/api/v1/user/" + email).json()["ldapGroups"]) == {"devs", "auditors"}

    # The next login without the groups takes both away.
    set_user(provider, email, groups=["others"])
    s, _ = sso_login(srv)
    who = s.get(srv.url + "/api/service/console/whoami", timeout=30).json()
    assert org not in [o["name"] for o in who["orgs"]]
    assert "concordSystemReader" not in who.get("roles", [])


@neutral
def test_state_must_be_this_browsers(srv, provider):
    set_user(provider, unique("dave") + "@example.org")
    s, cb = begin(srv)
    u = urllib.parse.urlparse(cb)
    q = dict(urllib.parse.parse_qsl(u.query))
    # Another state than the browser's cookie.
    bad = cb.replace("state=" + urllib.parse.quote(q["state"]), "state=" + q["state"][::-1])
    r = s.get(bad, allow_redirects=False, timeout=30)
    assert r.status_code == 400, r.text
    assert "state" in r.json()["message"]
    # The right state from a browser that did not begin the login (no cookie): login CSRF.
    r = requests.get(cb, allow_redirects=False, timeout=30)
    assert r.status_code == 400, r.text
    assert "cookie" in r.json()["message"]
    # A state this server did not make, even if the cookie agrees.
    forged = base64.urlsafe_b64encode(os.urandom(40)).rstrip(b"=").decode()
    r = requests.get(srv.url + "/api/service/oidc/callback?code=x&state=" + forged,
                     cookies={"accord_oidc": forged}, allow_redirects=False, timeout=30)
    assert r.status_code == 400, r.text
    assert "accord_session" not in r.headers.get("Set-Cookie", "")


@neutral
@pytest.mark.parametrize("change,words", [
    ({"claims": {"nonce": "not-the-logins"}}, "nonce"),
    ({"claims": {"exp": int(time.time()) - 3600, "iat": int(time.time()) - 7200}}, "expired"),
    ({"claims": {"aud": "someone-else"}}, "audience"),
    ({"claims": {"iss": "http://127.0.0.1:1/other"}}, "issuer"),
    ({"tamper": True}, "signature"),
])
def test_a_bad_id_token_logs_nobody_in(srv, provider, change, words):
    email = unique("eve") + "@example.org"
    set_user(provider, email)
    s, cb = begin(srv)
    provider.next_token = change
    r = s.get(cb, allow_redirects=False, timeout=30)
    assert r.status_code == 401, r.text
    assert words in r.json()["message"]
    assert "accord_session" not in r.headers.get("Set-Cookie", "")
    assert admin_of(srv).get("/api/v1/user/" + email).status_code == 404


@neutral
def test_a_rotated_key_is_fetched_again(srv, provider):
    set_user(provider, unique("frank") + "@example.org")
    assert sso_login(srv)[1].status_code == 200
    before = provider.jwks_requests
    provider.rotate(keep_old=False)
    s, r = sso_login(srv)
    assert r.status_code == 200, r.text
    assert provider.jwks_requests == before + 1
    assert s.get(srv.url + "/api/service/console/whoami", timeout=30).status_code == 200


@neutral
def test_an_unknown_key_id_refetches_at_most_once_per_interval(fresh_server, provider):
    s = start(fresh_server, provider.url, ["--oidc-bearer", "true", "--oidc-jwks-refetch", "1h"])
    set_user(provider, unique("gina") + "@example.org")
    ok = Client(s.url, "Bearer " + provider.token())
    assert ok.get("/api/service/console/whoami").status_code == 200
    fetched = provider.jwks_requests
    from cryptography.hazmat.primitives.asymmetric import rsa
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    for _ in range(3):
        bad = provider.sign(provider.claims(), kid="never-published", key=stranger)
        r = Client(s.url, "Bearer " + bad).get("/api/service/console/whoami")
        assert r.status_code == 401
    assert provider.jwks_requests == fetched  # refetched within the hour: never


def test_bearer_tokens_on_the_api(srv, provider):
    email = unique("hank") + "@example.org"
    set_user(provider, email)
    r = Client(srv.url, "Bearer " + provider.token()).get("/api/service/console/whoami")
    assert r.status_code == 200, r.text
    assert r.json()["username"] == email and r.json()["realm"] == "oidc"
    expired = provider.token(exp=int(time.time()) - 3600, iat=int(time.time()) - 7200)
    assert Client(srv.url, "Bearer " + expired).get("/api/service/console/whoami").status_code == 401
    other = provider.token(aud="another-client")
    assert Client(srv.url, "Bearer " + other).get("/api/service/console/whoami").status_code == 401
    # API keys keep working beside it.
    key = admin_of(srv).post("/api/v1/apikey", json={"username": "admin"}).json()["key"]
    assert Client(srv.url, key).get("/api/service/console/whoami").json()["username"] == "admin"


@neutral
def test_bearer_tokens_are_refused_unless_enabled(fresh_server, provider):
    s = start(fresh_server, provider.url)
    set_user(provider, unique("ivy") + "@example.org")
    assert Client(s.url, "Bearer " + provider.token()).get("/api/service/console/whoami").status_code == 401


def test_users_of_other_realms_cannot_log_in_through_the_provider(srv, provider):
    set_user(provider, "admin")  # a local user with a password
    s, cb = begin(srv)
    r = s.get(cb, allow_redirects=False, timeout=30)
    assert r.status_code == 401, r.text
    assert "another realm" in r.json()["message"]


@neutral
def test_an_unverified_email_is_refused(srv, provider):
    email = unique("jack") + "@example.org"
    provider.user = {"email": email, "email_verified": False, "name": "Jack"}
    s, cb = begin(srv)
    r = s.get(cb, allow_redirects=False, timeout=30)
    assert r.status_code == 401, r.text
    assert admin_of(srv).get("/api/v1/user/" + email).status_code == 404


@neutral
def test_provider_down_is_503_and_local_users_still_log_in(fresh_server):
    s = start(fresh_server, "http://127.0.0.1:%d" % free_port(), ["--oidc-bearer", "true"])
    r = requests.get(s.url + "/api/service/oidc/auth", allow_redirects=False, timeout=30)
    assert r.status_code == 503, r.text
    assert "OIDC provider unavailable" in r.json()["message"]
    assert admin_of(s).get("/api/service/console/whoami").status_code == 200
    assert SECRET not in s.read_log()


@neutral
def test_without_oidc_the_routes_are_404(server):
    r = requests.get(server.url + "/api/service/oidc/auth", allow_redirects=False, timeout=30)
    assert r.status_code == 404
    assert "not configured" in r.json()["message"]


@neutral
@pytest.mark.parametrize("drop,extra,env,expect", [
    ("--oidc-client-id", [], None, "--oidc-client-id"),
    (None, [], {}, "ACCORD_OIDC_CLIENT_SECRET"),
    ("--oidc-redirect-url", [], None, "--oidc-redirect-url"),
    (None, ["--oidc-scopes", "profile email"], None, "--oidc-scopes"),
    (None, ["--oidc-role-mapping", "=admins"], None, "--oidc-role-mapping"),
    (None, ["--oidc-discovery-url", "ftp://x"], None, "--oidc-discovery-url"),
])
def test_bad_settings_are_refused_at_start(drop, extra, env, expect):
    args = oidc_args("http://127.0.0.1:1", free_port())
    if drop:
        i = args.index(drop)
        del args[i:i + 2]
    e = dict(os.environ, ACCORD_OIDC_CLIENT_SECRET=SECRET)
    if env is not None:
        e.pop("ACCORD_OIDC_CLIENT_SECRET")
    d = tempfile.mkdtemp()
    try:
        p = subprocess.run([BIN, "serve", "--data", d] + args + extra, env=e, capture_output=True, text=True,
                           timeout=60)
        assert p.returncode == 2, p.stderr
        assert expect in p.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)


@neutral
def test_oidc_loads_libcurl_only_when_first_needed(fresh_server, provider):
    # (libcrypto comes with libssh, which the server loads at start for key pairs.)
    s = start(fresh_server, provider.url, ["--oidc-bearer", "true"])

    def mapped():
        with open("/proc/%d/maps" % s.proc.pid) as f:
            return f.read()

    assert admin_of(s).get("/api/service/console/whoami").status_code == 200
    assert "libcurl" not in mapped()
    set_user(provider, unique("kim") + "@example.org")
    assert Client(s.url, "Bearer " + provider.token()).get("/api/service/console/whoami").status_code == 200
    assert "libcurl" in mapped()


@neutral
def test_a_provider_that_comes_back_is_used_again(fresh_server):
    p = Provider(client_secret=SECRET).start()
    try:
        p.down = True
        s = start(fresh_server, p.url)
        r = requests.get(s.url + "/api/service/oidc/auth", allow_redirects=False, timeout=30)
        assert r.status_code == 503, r.text
        p.down = False
        deadline = time.time() + 30
        while r.status_code == 503 and time.time() < deadline:
            time.sleep(0.2)
            r = requests.get(s.url + "/api/service/oidc/auth", allow_redirects=False, timeout=30)
        assert r.status_code == 302, r.text
        set_user(p, unique("lee") + "@example.org")
        assert sso_login(s)[1].status_code == 200
    finally:
        p.stop()


def test_a_user_made_beforehand_without_password_is_the_one_sso_logs_in(srv, provider):
    email = unique("mia") + "@example.org"
    r = admin_of(srv).post("/api/v1/user", json={"username": email, "type": "LOCAL"})
    assert r.status_code == 200, r.text
    made = admin_of(srv).get("/api/v1/user/" + email).json()["id"]
    set_user(provider, email, name="Mia")
    s, r = sso_login(srv)
    assert r.status_code == 200, r.text
    assert s.get(srv.url + "/api/service/console/whoami", timeout=30).json()["username"] == email
    assert admin_of(srv).get("/api/v1/user/" + email).json()["id"] == made
