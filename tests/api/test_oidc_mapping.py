"""The OIDC realm's team and role mappings (--oidc-team-mapping, --oidc-role-mapping; Concord's
oidc.teamMapping and oidc.roleMapping): regular expressions on the claims of the provider's
tokens (tests/api/oidc_provider.py) give teams and global roles, built-in and custom ones,
at each login and take them away at the next one that no longer matches."""
import json
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import BIN, Client, backend_neutral, unique

neutral = backend_neutral("mappings refused at start: no server runs")

pytest.importorskip("cryptography", reason="python3-cryptography is not installed (scripts/deps)")
from oidc_provider import Provider  # noqa: E402
from test_oidc import SECRET, admin_of, free_port, oidc_args, set_user, sso_login  # noqa: E402


@pytest.fixture(scope="module")
def provider():
    p = Provider(client_secret=SECRET).start()
    yield p
    p.stop()


def team_id(admin, org, team):
    assert admin.post("/api/v1/org/%s/team" % org, json={"name": team}).status_code == 200
    r = admin.get("/api/v1/org/%s/team/%s" % (org, team))
    assert r.status_code == 200, r.text
    return r.json()["id"]


def members(admin, org, team):
    r = admin.get("/api/v1/org/%s/team/%s/users" % (org, team))
    assert r.status_code == 200, r.text
    return {m["username"]: m["role"] for m in r.json() if m["username"] != "admin"}  # admin made the teams


def role_names(admin, username):
    r = admin.get("/api/v1/user/" + username)
    assert r.status_code == 200, r.text
    return {x["name"] for x in r.json()["roles"]}


def test_teams_and_roles_follow_the_claims_at_each_login(fresh_server, provider):
    port = free_port()
    s = fresh_server(env={"ACCORD_OIDC_CLIENT_SECRET": SECRET}, admin_password=True,
                     args=oidc_args(provider.url, port, ["--oidc-bearer", "true"])).start()
    admin = admin_of(s)
    org, custom = unique("maporg"), unique("deployer")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    devs, ops, hand = team_id(admin, org, "devs"), team_id(admin, org, "ops"), team_id(admin, org, "hand")
    assert admin.post("/api/v1/role", json={"name": custom, "permissions": ["createOrg"]}).status_code == 200
    s.stop()
    teams = {devs: {"source": ["groups.dev-.*"], "role": "maintainer"},
             ops: {"source": ["groups.ops", "email..*@ops\\.example\\.org"]},
             "0b6c7a52-5d0e-4b7a-9a43-000000000000": {"source": ["groups..*"]}}  # no such team: skipped
    roles = {"concordSystemReader": {"source": ["groups.(audit|secur)ors"]},
             custom: {"source": ["groups.DEPLOYERS"]}}
    s.args += ["--oidc-team-mapping", json.dumps(teams), "--oidc-role-mapping", json.dumps(roles)]
    s.start()

    email = unique("nora") + "@example.org"
    set_user(provider, email, groups=["dev-backend", "deployers"])
    sso, r = sso_login(s)
    assert r.status_code == 200, r.text
    assert members(admin, org, "devs") == {email: "MAINTAINER"}
    assert email not in members(admin, org, "ops")
    held = role_names(admin, email)
    assert custom in held and "concordSystemReader" not in held
    who = sso.get(s.url + "/api/service/console/whoami", timeout=30).json()
    assert org in [o["name"] for o in who["orgs"]]
    # A membership an admin made by hand, in a team no mapping names, outlives any login.
    user_id = admin.get("/api/v1/user/" + email).json()["id"]
    r = admin.put("/api/v1/org/%s/team/hand/users" % org, json=[{"userId": user_id, "role": "MEMBER"}])
    assert r.status_code == 200, r.text

    # The next login with other groups: devs and the custom role go, the reader role comes.
    set_user(provider, email, groups=["Auditors"])
    assert sso_login(s)[1].status_code == 200
    assert email not in members(admin, org, "devs")
    held = role_names(admin, email)
    assert "concordSystemReader" in held and custom not in held
    assert members(admin, org, "hand") == {email: "MEMBER"}
    assert "does not exist: skipped" in s.read_log()

    # Any claim may be a source, and a bearer token's login maps the same way.
    other = unique("otto") + "@ops.example.org"
    set_user(provider, other, groups=[])
    r = Client(s.url, "Bearer " + provider.token()).get("/api/service/console/whoami")
    assert r.status_code == 200, r.text
    assert members(admin, org, "ops") == {other: "MEMBER"}


def test_the_short_role_form_takes_patterns_on_the_groups_claim(fresh_server, provider):
    port = free_port()
    s = fresh_server(env={"ACCORD_OIDC_CLIENT_SECRET": SECRET}, admin_password=True,
                     args=oidc_args(provider.url, port, ["--oidc-role-mapping", "concordSystemWriter=ci-.*"])).start()
    email = unique("wes") + "@example.org"
    set_user(provider, email, groups=["CI-Runners"])
    assert sso_login(s)[1].status_code == 200
    assert "concordSystemWriter" in role_names(admin_of(s), email)


@neutral
@pytest.mark.parametrize("flag,value,says", [
    ("--oidc-team-mapping", "devs=groups.dev", "not a JSON object"),
    ("--oidc-team-mapping", '{"devs": {"source": ["groups.dev"]}}', "not a team id"),
    ("--oidc-team-mapping", '{"0b6c7a52-5d0e-4b7a-9a43-0000000000aa": {"source": ["groups.dev"], "role": "BOSS"}}',
     "OWNER, MAINTAINER or MEMBER"),
    ("--oidc-team-mapping", '{"0b6c7a52-5d0e-4b7a-9a43-0000000000aa": {"source": "groups.dev"}}', "list"),
    ("--oidc-team-mapping", '{"0b6c7a52-5d0e-4b7a-9a43-0000000000aa": {"source": ["groups"]}}', "CLAIM.PATTERN"),
    ("--oidc-role-mapping", '{"concordAdmin": {"source": ["groups.(admins"]}}', "not a valid regular expression"),
    ("--oidc-role-mapping", "concordAdmin=(admins", "not a valid regular expression"),
    ("--oidc-role-mapping", "=admins", "ROLE=PATTERN"),
])
def test_bad_mappings_are_refused_at_start(flag, value, says):
    args = oidc_args("http://127.0.0.1:1", free_port()) + [flag, value]
    d = tempfile.mkdtemp()
    try:
        p = subprocess.run([BIN, "serve", "--data", d] + args, env=dict(os.environ, ACCORD_OIDC_CLIENT_SECRET=SECRET),
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert flag in p.stderr and says in p.stderr, p.stderr
    finally:
        shutil.rmtree(d, ignore_errors=True)
