"""The console's Roles and Policies pages (issue 30), driven as an administrator would: a
role created with permissions, its permissions and LDAP groups changed, a bad group and a
built-in role's delete refused with the server's reasons, the role deleted; a policy
created, a document the server refuses shown with its reason (nothing stored), the rules
changed, linked to an organization, a project and a user and unlinked, deleted.  A user
without the right sees no link in the header and the server's refusal on the page; a
global reader reads a policy without the forms.  Each page has no serious or critical
axe-core violation."""
import json

from selenium.webdriver.support.ui import Select

from conftest import (ADMIN_PASSWORD, axe_serious, console_errors, go, navigate, sign_in, t, texts, unique, visit,
                      wait_ready, wait_until)
from proc_util import make_org, make_project


def said(d, test, fragment):
    wait_until(d, lambda x: fragment in "".join(texts(x, test)), "%r in %s" % (fragment, test))


def set_text(el, text):
    """Replaces the field's text: typed key by key, or a long one pasted (the value put in
    at once) but for its last character, typed (a key costs Chromium ~4.5 ms: pasting the
    long group name took this test's Chromium CPU from 5.9 to 3.4 s, bench/RESULTS.md "The
    browser suite's page loads")."""
    el.clear()
    if len(text) > 100:
        el.parent.execute_script("arguments[0].value = arguments[1]", el, text[:-1])
        text = text[-1]
    el.send_keys(text)


def tick(d, permission, on):
    box = d.find_element("css selector", '[data-test="role-permission"][data-permission="%s"]' % permission)
    if box.is_selected() != on:
        box.click()


def test_roles_created_changed_and_deleted(driver, admin):
    name = unique("deployers")
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/processes", "processes")
    assert driver.find_element("id", "nav-roles").is_displayed()
    driver.find_element("id", "nav-roles").click()
    wait_ready(driver, "roles")
    assert "concordAdmin" in texts(driver, "role-link")
    assert axe_serious(driver) == []

    set_text(t(driver, "role-name"), name)
    tick(driver, "createOrg", True)
    tick(driver, "getProcessQueueAllOrgs", True)
    t(driver, "role-create").click()
    wait_ready(driver, "role")
    r = admin.get("/api/v1/role/%s" % name).json()
    assert sorted(r["permissions"]) == ["createOrg", "getProcessQueueAllOrgs"], r
    assert axe_serious(driver) == []

    # a taken name is not silently updated from the create form
    go(driver, "#/roles", "roles")
    set_text(t(driver, "role-name"), name)
    t(driver, "role-create").click()
    said(driver, "role-create-error", "exists already")
    assert sorted(admin.get("/api/v1/role/%s" % name).json()["permissions"]) == ["createOrg", "getProcessQueueAllOrgs"]

    # permissions changed
    go(driver, "#/role/%s" % name, "role")
    tick(driver, "createOrg", False)
    tick(driver, "updateOrg", True)
    t(driver, "role-save").click()
    said(driver, "role-save-result", "Permissions saved.")
    assert sorted(admin.get("/api/v1/role/%s" % name).json()["permissions"]) == ["getProcessQueueAllOrgs", "updateOrg"]

    # LDAP groups: a bad entry is refused with the server's reason, nothing linked
    set_text(t(driver, "role-groups-text"), "cn=deployers,ou=groups,dc=example,dc=org\n" + "x" * 1100)
    t(driver, "role-groups-save").click()
    wait_until(driver, lambda d: "".join(texts(d, "role-groups-result")), "the refusal")
    console_errors(driver)
    assert admin.get("/api/v1/role/%s/ldapGroups" % name).json() == []
    set_text(t(driver, "role-groups-text"), "cn=deployers,ou=groups,dc=example,dc=org\ncn=ops,ou=groups,dc=example,dc=org")
    t(driver, "role-groups-save").click()
    said(driver, "role-groups-result", "2 group(s) linked.")
    assert admin.get("/api/v1/role/%s/ldapGroups" % name).json() == [
        "cn=deployers,ou=groups,dc=example,dc=org", "cn=ops,ou=groups,dc=example,dc=org"]
    assert "cn=ops,ou=groups,dc=example,dc=org" in t(driver, "role-groups").text
    set_text(t(driver, "role-groups-text"), "cn=ops,ou=groups,dc=example,dc=org")
    t(driver, "role-groups-save").click()
    said(driver, "role-groups-result", "1 group(s) linked.")
    assert admin.get("/api/v1/role/%s/ldapGroups" % name).json() == ["cn=ops,ou=groups,dc=example,dc=org"]

    # a built-in role offers no delete
    go(driver, "#/role/concordAdmin", "role")
    assert not texts(driver, "role-delete")

    # deleted after the question
    go(driver, "#/role/%s" % name, "role")
    t(driver, "role-delete").click()
    t(driver, "confirm-yes").click()
    wait_ready(driver, "roles")
    said(driver, "roles", "concordAdmin")
    assert name not in texts(driver, "role-link")
    assert admin.get("/api/v1/role/%s" % name).status_code == 404


def test_policies_created_validated_linked_and_deleted(driver, admin, new_user):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    user = new_user()
    name = unique("pol")
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/processes", "processes")
    driver.find_element("id", "nav-policies").click()
    wait_ready(driver, "policies")
    assert axe_serious(driver) == []

    # a document the server refuses: its reason, naming where; nothing stored
    set_text(t(driver, "policy-name"), name)
    set_text(t(driver, "policy-rules"), json.dumps({"queue": {"concurrent": {"maxPerOrg": "ten"}}}))
    t(driver, "policy-create").click()
    said(driver, "policy-create-error", "rules.queue.concurrent.maxPerOrg")
    console_errors(driver)
    assert admin.get("/api/v2/policy/%s" % name).status_code == 404
    # text that is not JSON is refused in the page
    set_text(t(driver, "policy-rules"), "{queue:")
    t(driver, "policy-create").click()
    said(driver, "policy-create-error", "not JSON")

    set_text(t(driver, "policy-rules"), json.dumps({"queue": {"forkDepth": {"max": 3}}}))
    t(driver, "policy-create").click()
    wait_ready(driver, "policy")
    assert admin.get("/api/v2/policy/%s" % name).json()["rules"] == {"queue": {"forkDepth": {"max": 3}}}
    assert json.loads(t(driver, "policy-rules").get_attribute("value")) == {"queue": {"forkDepth": {"max": 3}}}
    assert t(driver, "policy-places-empty")
    assert axe_serious(driver) == []

    # the rules changed; a bad change is refused and the stored rules stay
    set_text(t(driver, "policy-rules"), json.dumps({"task": {"deny": [{"taskName": "(unclosed"}]}}))
    t(driver, "policy-save").click()
    said(driver, "policy-save-result", "rules.task.deny[0].taskName")
    console_errors(driver)
    assert admin.get("/api/v2/policy/%s" % name).json()["rules"] == {"queue": {"forkDepth": {"max": 3}}}
    set_text(t(driver, "policy-rules"), json.dumps({"task": {"deny": [{"taskName": "http"}]}}))
    t(driver, "policy-save").click()
    said(driver, "policy-save-result", "Saved.")
    assert admin.get("/api/v2/policy/%s" % name).json()["rules"] == {"task": {"deny": [{"taskName": "http"}]}}

    # linked to an organization, a project, a user; an unknown organization refused
    set_text(t(driver, "link-org"), unique("no-such-org"))
    t(driver, "policy-link-add").click()
    wait_until(driver, lambda d: "".join(texts(d, "policy-links-result")), "the refusal")
    console_errors(driver)
    set_text(t(driver, "link-org"), org)
    t(driver, "policy-link-add").click()
    said(driver, "policy-links-result", "Linked to organization %s" % org)
    set_text(t(driver, "link-org"), org)
    set_text(t(driver, "link-project"), project)
    t(driver, "policy-link-add").click()
    said(driver, "policy-links-result", "Linked to project %s/%s" % (org, project))
    set_text(t(driver, "link-user"), user.username)
    t(driver, "policy-link-add").click()
    said(driver, "policy-links-result", "Linked to user %s" % user.username)
    places = texts(driver, "policy-place")
    assert sorted(places) == sorted(["organization %s" % org, "project %s/%s" % (org, project),
                                     "user %s" % user.username]), places
    links = [p for p in admin.get("/api/v2/policy").json() if p["name"] == name][0]["links"]
    assert len(links) == 3, links

    # the list says where it is linked
    go(driver, "#/policies", "policies")
    row = [r for r in driver.find_elements("css selector", '[data-test="policies"] tbody tr')
           if name in r.text][0]
    assert "project %s/%s" % (org, project) in row.text

    # unlinked from the project
    go(driver, "#/policy/%s" % name, "policy")
    for b in driver.find_elements("css selector", '[data-test="policy-unlink"]'):
        if b.get_attribute("aria-label") == "Unlink from project %s/%s" % (org, project):
            b.click()
            break
    said(driver, "policy-links-result", "Unlinked from project %s/%s" % (org, project))
    assert "project %s/%s" % (org, project) not in texts(driver, "policy-place")
    links = [p for p in admin.get("/api/v2/policy").json() if p["name"] == name][0]["links"]
    assert {l.get("projectName") for l in links} == {None}, links

    # a child with this parent
    child = unique("child")
    go(driver, "#/policies", "policies")
    set_text(t(driver, "policy-name"), child)
    Select(t(driver, "policy-parent")).select_by_visible_text(name)
    t(driver, "policy-create").click()
    wait_ready(driver, "policy")
    parent_id = admin.get("/api/v2/policy/%s" % name).json()["id"]
    assert admin.get("/api/v2/policy/%s" % child).json().get("parentId") == parent_id

    # deleted after the question, its links with it
    go(driver, "#/policy/%s" % name, "policy")
    t(driver, "policy-delete").click()
    t(driver, "confirm-yes").click()
    wait_ready(driver, "policies")
    assert name not in texts(driver, "policy-link")
    assert admin.get("/api/v2/policy/%s" % name).status_code == 404
    admin.delete("/api/v2/policy/%s" % child)


def test_users_without_the_right_are_refused(driver, admin, new_user):
    name = unique("pol")
    r = admin.post("/api/v2/policy", json={"name": name, "rules": {"queue": {"forkDepth": {"max": 2}}}})
    assert r.status_code == 200, r.text
    password = "Plain-user-pw-1"
    plain = new_user(password=password)
    sign_in(driver, plain.username, password)
    visit(driver, "#/processes", "processes")
    assert not driver.find_element("id", "nav-roles").is_displayed()
    assert not driver.find_element("id", "nav-policies").is_displayed()
    for page in ("#/roles", "#/policies", "#/policy/%s" % name):
        navigate(driver, page, "error")
        assert "Only admin" in "".join(texts(driver, "page-error")), page
    console_errors(driver)

    # a global reader reads policies, without the forms
    reader = new_user(roles=["concordSystemReader"], password=password)
    driver.delete_all_cookies()
    sign_in(driver, reader.username, password)
    visit(driver, "#/processes", "processes")
    assert not driver.find_element("id", "nav-roles").is_displayed()
    assert driver.find_element("id", "nav-policies").is_displayed()
    go(driver, "#/policies", "policies")
    assert name in texts(driver, "policy-link")
    assert t(driver, "policy-read-only")
    assert not texts(driver, "policy-create")
    go(driver, "#/policy/%s" % name, "policy")
    assert json.loads(t(driver, "policy-rules-text").text) == {"queue": {"forkDepth": {"max": 2}}}
    assert not texts(driver, "policy-save") and not texts(driver, "policy-delete") and not texts(driver, "policy-link-add")
    assert axe_serious(driver) == []
    admin.delete("/api/v2/policy/%s" % name)
