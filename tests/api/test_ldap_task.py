"""The `ldap` task (docs/flows.md "ldap", Concord's LdapTaskV2) against a real slapd
(scripts/ldap-server): searchByDn, getUser, getGroup, isMemberOf with nested groups, the
`ldapParams` defaults, filter injection in values, a wrong bind password and a directory
that is down — the password in no log or event."""
import json

import pytest

from conftest import backend_neutral, process_log, start_process, wait_process
from test_ldap import BASE, directory, free_port, pytestmark, tls_directory  # noqa: F401

neutral = backend_neutral("the ldap task against a local slapd, in the runner: the database takes no part; "
                          "test_get_user_group_and_search_by_dn runs it on both backends")

READER = "cn=reader,ou=system," + BASE


def run(admin, url, steps, password="reader-pw", events=False):
    flow = """
configuration:
  arguments:
    ldapParams:
      ldapAdServer: "%s"
      bindUserDn: "%s"
      bindPassword: "%s"
      searchBase: "%s"
%s
flows:
  default:
%s
""" % (url, READER, password, BASE,
       "  events: {recordTaskInVars: true, recordTaskOutVars: true}" if events else "",
       "\n".join("    " + line for line in steps.strip().splitlines()))
    pid = start_process(admin, flow)
    return pid, wait_process(admin, pid)["status"], process_log(admin, pid)


def test_get_user_group_and_search_by_dn(admin, directory):  # noqa: F811
    pid, status, log = run(admin, directory, """
- task: ldap
  in: {action: getUser, user: "alice@example.org"}
  out: u
- log: "user ok=${u.ok} success=${u.success} cn=${u.result.attributes.cn} dn=${u.result.dn}"
- task: ldap
  in: {action: getGroup, group: devs, securityEnabled: false}
  out: g
- log: "group success=${g.success} dn=${g.result.dn} member=${g.result.attributes.member}"
- task: ldap
  in: {action: getGroup, group: devs, securityEnabled: true}
  out: sg
- log: "security group success=${sg.success}"
- task: ldap
  in: {action: searchByDn, dn: "cn=bob,ou=people,%s"}
  out: b
- log: "bob sn=${b.result.attributes.sn}"
- task: ldap
  in: {action: getUser, user: "nobody@example.org"}
  out: n
- log: "nobody success=${n.success} null=${n.result == null}"
""" % BASE)
    assert status == "FINISHED", log
    assert "user ok=true success=true cn=alice dn=cn=alice,ou=people,%s" % BASE in log
    assert "group success=true dn=cn=devs,ou=groups,%s member=cn=alice,ou=people,%s" % (BASE, BASE) in log
    assert "security group success=false" in log
    assert "bob sn=Bob" in log
    assert "nobody success=false null=true" in log
    assert "reader-pw" not in log


@neutral
def test_is_member_of_follows_nested_groups(admin, directory):  # noqa: F811
    steps = ""
    for user, group in (("alice@example.org", "devs"), ("alice@example.org", "managers"),
                        ("bob", "managers"), ("alice@example.org", "no-such-group")):
        steps += """
- task: ldap
  in: {action: isMemberOf, user: "%s", group: "%s", securityEnabled: false}
  out: m
- log: "member %s %s: ${m.result} ok=${m.ok}"
""" % (user, group, user, group)
    pid, status, log = run(admin, directory, steps)
    assert status == "FINISHED", log
    assert "member alice@example.org devs: true ok=true" in log
    assert "member alice@example.org managers: true ok=true" in log
    assert "member bob managers: false ok=true" in log
    assert "member alice@example.org no-such-group: false ok=true" in log


@neutral
@pytest.mark.parametrize("value", ["*", "alice@example.org)(mail=*", "*)(|(objectClass=*", "alice@example.org\\2a",
                                   "al*"])
def test_filter_injection_in_values_matches_nothing(admin, directory, value):  # noqa: F811
    pid, status, log = run(admin, directory, """
- task: ldap
  in: {action: getUser, user: %s}
  out: u
- task: ldap
  in: {action: getGroup, group: %s, securityEnabled: false}
  out: g
- log: "user=${u.success} group=${g.success}"
""" % (json.dumps(value), json.dumps(value)))
    assert status == "FINISHED", log
    assert "user=false group=false" in log


@neutral
def test_a_wrong_password_fails_the_step_without_showing_it(admin, directory):  # noqa: F811
    pid, status, log = run(admin, directory, """
- task: ldap
  in: {action: getUser, user: "alice@example.org", bindUserDn: "%s", bindPassword: "Wrong-secret-77"}
""" % READER, events=True)
    assert status == "FAILED", log
    assert "refused the bind as '%s'" % READER in log
    assert "Invalid credentials" in log
    assert "Wrong-secret-77" not in log
    events = admin.get("/api/v1/process/%s/event" % pid, params={"includeAll": "true"}).text
    assert "alice@example.org" in events  # the in variables are recorded...
    assert "Wrong-secret-77" not in events  # ...but not the password


@neutral
def test_a_directory_that_is_down_fails_the_step(admin):
    pid, status, log = run(admin, "ldap://127.0.0.1:%d/" % free_port(), """
- task: ldap
  in: {action: getUser, user: "alice@example.org"}
""")
    assert status == "FAILED", log
    assert "ldap: cannot reach ldap://127.0.0.1:" in log
    assert "reader-pw" not in log


@neutral
@pytest.mark.parametrize("step,expect", [
    ("{action: frobnicate}", "Unknown action: 'frobnicate'"),
    ("{action: getUser}", "'user' is required"),
    ("{action: getGroup, group: devs}", "'securityEnabled' is required"),
    ("{action: getUser, user: a, ldapAdServer: 'http://x'}", "must start with ldap:// or ldaps://"),
    ("{action: getUser, user: a, bindPassword: null}", "'bindPassword' is required with 'bindUserDn'"),
])
def test_bad_parameters_fail_the_step_clearly(admin, directory, step, expect):  # noqa: F811
    pid, status, log = run(admin, directory, "- task: ldap\n  in: %s\n" % step)
    assert status == "FAILED", log
    assert expect in log


@neutral
def test_ldaps_checks_the_directory_certificate(admin, tls_directory):  # noqa: F811
    """The test directory's CA is not one of the system's: the task refuses its certificate
    and sends nothing (no bind, no password) over the connection."""
    _, ldaps, _ = tls_directory
    pid, status, log = run(admin, ldaps, """
- task: ldap
  in: {action: getUser, user: "alice@example.org"}
""")
    assert status == "FAILED", log
    assert "ldap: cannot reach %s" % ldaps in log
