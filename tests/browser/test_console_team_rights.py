"""A team's page offers only what the user may do (the team's `yourRole`): a member reads
(roles as text, no add, remove or delete), a maintainer manages members but not owners and
cannot make one, an owner of the team (or of the organization, or an admin) everything."""
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import ADMIN_PASSWORD, sign_in, t, texts, visit
from proc_util import make_org, make_team


def controls(d):
    q = lambda css: len(d.find_elements(By.CSS_SELECTOR, css))
    return {"role-selects": q("[data-test=member-role]"), "removes": q("[data-test=member-remove]"),
            "add": q("[data-test=member-add-form]"), "delete": q("[data-test=team-delete]"),
            "read-only": q("[data-test=team-read-only]")}


def test_the_team_page_offers_what_the_role_allows(driver, admin, new_user):
    org, _ = make_org(admin)
    owner = new_user(password="Team-owner-1")
    maint = new_user(password="Team-maint-1")
    member = new_user(password="Team-member-1")
    team = make_team(admin, org, [(owner, "OWNER"), (maint, "MAINTAINER"), (member, "MEMBER")])
    page = "#/org/%s/team/%s" % (org, team)
    roles = [u["role"] for u in admin.get("/api/v1/org/%s/team/%s/users" % (org, team)).json()]
    n, owners = len(roles), roles.count("OWNER")
    assert n >= 3 and owners == 1, roles

    sign_in(driver, member.username, "Team-member-1")
    visit(driver, page, "team")
    assert controls(driver) == {"role-selects": 0, "removes": 0, "add": 0, "delete": 0, "read-only": 1}
    assert sorted(texts(driver, "member-role-text")) == sorted(r.capitalize() for r in roles)
    assert "Member" in t(driver, "team-details").text

    driver.delete_all_cookies()
    sign_in(driver, maint.username, "Team-maint-1")
    visit(driver, page, "team")
    assert controls(driver) == {"role-selects": n - 1, "removes": n - 1, "add": 1, "delete": 0, "read-only": 0}
    assert texts(driver, "member-role-text") == ["Owner"]  # the owner's row is not theirs to change
    for sel in driver.find_elements(By.CSS_SELECTOR, "[data-test=member-role], [data-test=member-add-role]"):
        assert [o.get_attribute("value") for o in Select(sel).options] == ["MEMBER", "MAINTAINER"]

    for user, password in ((owner, "Team-owner-1"), (None, ADMIN_PASSWORD)):
        driver.delete_all_cookies()
        sign_in(driver, user.username if user else "admin", password)
        visit(driver, page, "team")
        assert controls(driver) == {"role-selects": n, "removes": n, "add": 1, "delete": 1, "read-only": 0}
        assert "OWNER" in [o.get_attribute("value") for o in Select(t(driver, "member-add-role")).options]
