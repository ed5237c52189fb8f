"""Forms restricted to LDAP groups (`runAs: {ldap: {group: …}}`, docs/api.md "Forms"), against
a real slapd (scripts/ldap-server): a member of a named group (directly or through nested
groups) may read and submit, a directory user outside them and a local user get Concord's
403, admins may always; the API and the custom form pages alike."""
import pytest

from conftest import ADMIN_PASSWORD, Server, process_log, start_process, wait_process, unique
from test_ldap import BASE, LDAP_ENV, as_user, basic, directory, ldap_args, pytestmark  # noqa: F401

@pytest.fixture(scope="module")
def srv(directory):  # noqa: F811
    s = Server(env=LDAP_ENV, args=ldap_args(directory), admin_password=True).start()
    yield s
    s.cleanup()


def admin_of(srv):
    return as_user(srv, "admin", ADMIN_PASSWORD)


def form_flow(run_as):
    return """
flows:
  default:
    - form: approval
      runAs:
%s
      fields:
        - approved: {type: boolean}
    - log: "approved=${approval.approved}"
""" % "\n".join("        " + line for line in run_as.strip().splitlines())


def suspended(srv, run_as):
    admin = admin_of(srv)
    pid = start_process(admin, form_flow(run_as), files={"forms/approval/index.html": b"<html>approve</html>"})
    p = wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(admin, pid)
    return pid


def url(pid):
    return "/api/v1/process/%s/form/approval" % pid


def submitted(srv, pid):
    wait_process(admin_of(srv), pid)
    assert "approved=true" in process_log(admin_of(srv), pid)


@pytest.mark.parametrize("run_as", [
    "ldap:\n  group: \"CN=managers,.*\"",                              # a DN pattern, nested two levels
    "ldap:\n  - group: \"nobody\"\n  - group: \"devs\"",              # names, any one of them
    "ldap:\n  group: [\"cn=nope,ou=groups\", \"CN=Engineering,OU=groups,DC=example,DC=org\"]",
])
def test_a_member_may_read_and_submit(srv, run_as):
    pid = suspended(srv, run_as)
    alice = as_user(srv, "alice", "alice-pw")
    r = alice.get(url(pid))
    assert r.status_code == 200, r.text
    assert "ldap" in r.json()["runAs"]
    r = alice.post(url(pid), json={"approved": True})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    submitted(srv, pid)


def test_a_non_member_and_a_local_user_get_403_and_admin_may(srv):
    pid = suspended(srv, "ldap:\n  - group: \"CN=managers,.*\"\n  - group: \"admins\"")
    admin = admin_of(srv)
    local = unique("local")
    r = admin.post("/api/v1/user", json={"username": local, "type": "LOCAL", "password": "Local-pass-123"})
    assert r.status_code == 200, r.text
    for who, password in (("bob", "bob-pw"), (local, "Local-pass-123")):
        c = as_user(srv, who, password)
        expect = ("The current user (%s) doesn't have the necessary permissions to resume process. "
                  "Expected LDAP group(s) '[CN=managers,.*, admins]'" % who)
        for r in (c.get(url(pid)), c.post(url(pid), json={"approved": True})):
            assert r.status_code == 403, r.text
            assert r.json() == {"ok": False, "message": expect}
        assert c.get("/forms/%s/approval/form/" % pid).status_code == 403
    r = admin.get("/api/v1/process/%s" % pid)
    assert r.json()["status"] == "SUSPENDED"
    r = admin.post(url(pid), json={"approved": True})
    assert r.status_code == 200, r.text
    submitted(srv, pid)


def test_users_and_groups_together_must_both_match(srv):
    pid = suspended(srv, "username: bob\nldap:\n  group: devs")
    r = as_user(srv, "alice", "alice-pw").post(url(pid), json={"approved": True})
    assert r.status_code == 403, r.text
    assert r.json()["message"] == ("The current user (alice) doesn't have the necessary permissions to "
                                   "access the form.")
    r = as_user(srv, "bob", "bob-pw").post(url(pid), json={"approved": True})
    assert r.status_code == 403 and "Expected LDAP group(s) '[devs]'" in r.json()["message"], r.text


def test_the_custom_form_page_follows_the_groups(srv):
    pid = suspended(srv, "ldap:\n  group: devs")
    assert as_user(srv, "bob", "bob-pw").get("/forms/%s/approval/form/" % pid).status_code == 403
    r = as_user(srv, "alice", "alice-pw").get("/forms/%s/approval/form/" % pid)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("keep", [True, False])
def test_keep_continues_as_the_submitter(srv, keep):
    """runAs.keep: after the form the process runs on behalf of who submitted it — its
    currentUser and the identity of its own API calls (its session token) — while
    initiator stays; without keep nothing changes."""
    flow = """
flows:
  default:
    - log: "before=${currentUser.username}"
    - form: approval
      runAs:
        ldap: {group: devs}
        keep: %s
      fields:
        - approved: {type: boolean}
    - log: "after=${currentUser.username} initiator=${initiator.username}"
    - task: http
      in:
        url: "%s/api/service/console/whoami"
        headers: {X-Concord-SessionToken: "${processInfo.sessionToken}"}
        response: json
      out: w
    - log: "calls as ${w.content.username}"
    - task: concord
      in: {action: start, payload: child, sync: true}
      out: job
    - log: "child=${job.id}"
""" % ("true" if keep else "false", srv.url)
    admin = admin_of(srv)
    pid = start_process(admin, flow, files={"child/concord.yml": b"flows:\n  default:\n    - log: child\n"})
    assert wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))["status"] == "SUSPENDED"
    r = as_user(srv, "alice", "alice-pw").post(url(pid), json={"approved": True})
    assert r.status_code == 200, r.text
    assert wait_process(admin, pid)["status"] == "FINISHED", process_log(admin, pid)
    log = process_log(admin, pid)
    who = "alice" if keep else "admin"
    assert "before=admin" in log
    assert "after=%s initiator=admin" % who in log
    assert "calls as %s" % who in log
    assert admin.get("/api/v1/process/%s" % pid).json()["initiator"] == "admin"
    child = log.split("child=")[1].split()[0]
    assert admin.get("/api/v1/process/%s" % child).json()["initiator"] == who
