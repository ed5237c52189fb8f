"""Opaque bearer tokens of the OIDC provider (--oidc-bearer): an access token that is no JWT is
checked at the provider's userinfo endpoint (tests/api/oidc_provider.py), as Concord's oidc
plugin checks every token, and the answer (or the refusal) is kept --oidc-userinfo-cache."""
import pytest

from conftest import Client, backend_neutral, unique

neutral = backend_neutral("opaque tokens refused by a setting or a provider that is down, before any user is "
                          "looked up")

pytest.importorskip("cryptography", reason="python3-cryptography is not installed (scripts/deps)")
from oidc_provider import Provider  # noqa: E402
from test_oidc import SECRET, admin_of, set_user, sso_login, start  # noqa: E402


@pytest.fixture
def provider():
    p = Provider(client_secret=SECRET).start()
    yield p
    p.stop()


def whoami(srv, token):
    return Client(srv.url, "Bearer " + token).get("/api/service/console/whoami")


def test_an_opaque_token_is_checked_at_the_userinfo_endpoint_and_kept(fresh_server, provider):
    s = start(fresh_server, provider.url, ["--oidc-bearer", "true"])
    email = unique("olga") + "@example.org"
    set_user(provider, email, groups=["devs"])
    token = provider.opaque()
    r = whoami(s, token)
    assert r.status_code == 200, r.text
    assert r.json()["username"] == email and r.json()["realm"] == "oidc"
    assert set(admin_of(s).get("/api/v1/user/" + email).json()["ldapGroups"]) == {"devs"}
    asked = provider.userinfo_requests
    assert asked == 1
    for _ in range(3):
        assert whoami(s, token).status_code == 200
    assert provider.userinfo_requests == asked  # kept: the provider is not asked again
    # A token the provider refuses is 401, and asking again does not ask the provider again.
    for _ in range(3):
        r = whoami(s, "not-a-token-of-anyone")
        assert r.status_code == 401, r.text
    assert provider.userinfo_requests == asked + 1
    assert token not in s.read_log()
    # API keys keep working, with or without "Bearer ".
    key = admin_of(s).post("/api/v1/apikey", json={"username": "admin"}).json()["key"]
    assert whoami(s, key).json()["username"] == "admin"
    assert Client(s.url, key).get("/api/service/console/whoami").json()["username"] == "admin"


def test_without_the_cache_a_revoked_token_ends_at_once(fresh_server, provider):
    s = start(fresh_server, provider.url, ["--oidc-bearer", "true", "--oidc-userinfo-cache", "0"])
    set_user(provider, unique("pia") + "@example.org")
    token = provider.opaque()
    assert whoami(s, token).status_code == 200
    provider.revoke(token)
    assert whoami(s, token).status_code == 401


@neutral
def test_opaque_tokens_are_refused_unless_bearer_tokens_are_on(fresh_server, provider):
    s = start(fresh_server, provider.url)
    set_user(provider, unique("quin") + "@example.org")
    assert whoami(s, provider.opaque()).status_code == 401
    assert provider.userinfo_requests == 0


@neutral
def test_a_provider_that_is_down_is_503_for_an_opaque_token(fresh_server, provider):
    s = start(fresh_server, provider.url, ["--oidc-bearer", "true"])
    set_user(provider, unique("rex") + "@example.org")
    assert whoami(s, provider.opaque()).status_code == 200  # the discovery document is kept
    provider.down = True
    r = whoami(s, provider.opaque())
    assert r.status_code == 503, r.text
    assert "OIDC provider unavailable" in r.json()["message"]
    assert admin_of(s).get("/api/service/console/whoami").status_code == 200


def test_the_sso_login_s_access_token_works_as_a_bearer_token(fresh_server, provider):
    s = start(fresh_server, provider.url, ["--oidc-bearer", "true"])
    email = unique("sam") + "@example.org"
    set_user(provider, email)
    assert sso_login(s)[1].status_code == 200
    issued = list(provider.access_tokens)[-1]  # what the token endpoint handed out with the ID token
    assert whoami(s, issued).json()["username"] == email
