"""The console's management pages of issue 28 item 10, driven as a user would: a project
created, its settings and team access saved; a team's members added, re-roled and removed;
a repository validated (file:line:col of a broken definition) and edited; the audit log
filtered (offered to admins only, from what whoami says); the user's profile with their
teams and keys; a secret renamed, given another owner and moved to another organization."""
from selenium.webdriver.support.ui import Select

from conftest import (ADMIN_PASSWORD, console_errors, go, sign_in, start_process, t, texts, visit, wait_css, wait_ready,
                      wait_until)
from proc_util import make_org, make_project, make_team
from repo_util import create_repo, git  # noqa: F401  (git is a fixture)


def said(d, test, fragment):
    wait_until(d, lambda x: fragment in "".join(texts(x, test)), "%r in %s" % (fragment, test))


def test_create_a_project_then_change_its_settings_and_access(driver, admin, new_user):
    org, _ = make_org(admin)
    bob = new_user()
    team = make_team(admin, org, [(bob, "MEMBER")])
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s" % org, "org")
    t(driver, "org-new-project").click()
    wait_ready(driver, "project-new")
    t(driver, "project-name").send_keys("x")  # too short: the server's reason is shown
    t(driver, "project-create").click()
    wait_until(driver, lambda d: texts(d, "project-new-error") != [""], "the refusal")
    assert admin.get("/api/v1/org/%s/project/x" % org).status_code == 404
    console_errors(driver)  # the 400 of that refusal
    t(driver, "project-name").clear()
    t(driver, "project-name").send_keys("made-in-console")
    t(driver, "project-description").send_keys("from the new-project page")
    Select(t(driver, "project-visibility")).select_by_value("PRIVATE")
    Select(t(driver, "project-raw-payload")).select_by_value("ORG_MEMBERS")
    t(driver, "project-create").click()
    wait_ready(driver, "project")
    p = admin.get("/api/v1/org/%s/project/made-in-console" % org).json()
    assert (p["description"], p["visibility"], p["rawPayloadMode"]) == ("from the new-project page", "PRIVATE", "ORG_MEMBERS")

    # settings: the form shows what is stored and saves only what it shows
    assert Select(t(driver, "project-raw-payload")).first_selected_option.get_attribute("value") == "ORG_MEMBERS"
    box = t(driver, "project-description")
    box.clear()
    box.send_keys("changed")
    Select(t(driver, "project-visibility")).select_by_value("PUBLIC")
    t(driver, "project-settings-save").click()
    said(driver, "project-settings-result", "Saved.")
    wait_until(driver, lambda d: "changed" in t(d, "project-details").text, "the details redrawn")
    p = admin.get("/api/v1/org/%s/project/made-in-console" % org).json()
    assert (p["description"], p["visibility"], p["rawPayloadMode"]) == ("changed", "PUBLIC", "ORG_MEMBERS")

    # access: the team gets WRITER
    t(driver, "rule-add").click()
    Select(t(driver, "rule-team")).select_by_visible_text(team)
    Select(t(driver, "rule-level")).select_by_value("WRITER")
    t(driver, "rules-save").click()
    said(driver, "rules-result", "Saved 1 rule.")
    rules = admin.get("/api/v1/org/%s/project/made-in-console/access" % org).json()
    assert [(r["teamName"], r["level"]) for r in rules] == [(team, "WRITER")]
    assert console_errors(driver) == []


def test_a_team_is_created_and_its_members_managed(driver, admin, new_user):
    org, _ = make_org(admin)
    bob, carol = new_user(), new_user()
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s" % org, "org")
    t(driver, "org-teams").click()
    wait_ready(driver, "teams")
    t(driver, "team-create-panel").click()
    t(driver, "team-name").send_keys("ops")
    t(driver, "team-description").send_keys("the operators")
    t(driver, "team-create").click()
    wait_ready(driver, "team")
    assert "the operators" in t(driver, "team-details").text

    t(driver, "member-add-names").send_keys("%s, nobody-such-user" % bob.username)
    t(driver, "member-add").click()
    wait_until(driver, lambda d: "nobody-such-user" in "".join(texts(d, "member-add-error")), "the unknown user named")
    assert bob.username not in texts(driver, "member-name")  # all or nothing
    console_errors(driver)  # the 400 of that refusal
    t(driver, "member-add-names").clear()
    t(driver, "member-add-names").send_keys("%s %s" % (bob.username, carol.username))
    t(driver, "member-add").click()
    wait_until(driver, lambda d: {bob.username, carol.username} <= set(texts(d, "member-name")), "both listed")

    users = lambda: {u["username"]: u["role"] for u in admin.get("/api/v1/org/%s/team/ops/users" % org).json()}
    assert users()[bob.username] == "MEMBER"
    row = lambda name: texts(driver, "member-name").index(name)
    Select(driver.find_elements("css selector", '[data-test="member-role"]')[row(bob.username)]).select_by_value("MAINTAINER")
    said(driver, "members-result", "is now maintainer")
    assert users()[bob.username] == "MAINTAINER"
    driver.find_elements("css selector", '[data-test="member-remove"]')[row(carol.username)].click()
    wait_until(driver, lambda d: carol.username not in texts(d, "member-name"), "carol removed")
    assert carol.username not in users()
    assert console_errors(driver) == []


BROKEN = "flows:\n  default:\n    - log: hi\ntriggers:\n  - cron:\n      spec: \"not a cron\"\n      entryPoint: default\n"


def test_a_repository_is_validated_and_edited(driver, admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    good = git({"concord.yml": "flows:\n  default:\n    - log: hi\n"})
    other = git({"concord.yml": "flows:\n  other:\n    - log: hi\n"})
    repo, _ = create_repo(admin, org, project, good.url)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/project/%s/repo/%s" % (org, project, repo), "repo")
    t(driver, "repo-validate").click()
    said(driver, "validate-result", "Valid")

    good.commit({"concord.yml": BROKEN})
    t(driver, "repo-validate").click()
    # the server's message names the file, line and column
    wait_until(driver, lambda d: "concord.yml:" in "".join(texts(d, "validate-result")), "file:line:col")
    console_errors(driver)  # the 400 of that validation

    t(driver, "repo-edit-panel").click()
    url = t(driver, "repo-edit-url")
    url.clear()
    url.send_keys(other.url)
    t(driver, "repo-edit-disabled").click()
    t(driver, "repo-edit-save").click()
    wait_until(driver, lambda d: other.url in t(d, "repo-details").text, "the new URL shown")
    r = admin.get("/api/v1/org/%s/project/%s/repository/%s" % (org, project, repo)).json()
    assert r["url"] == other.url and r["disabled"] is True
    assert console_errors(driver) == []


def test_the_audit_log_is_offered_to_admins_and_filtered(driver, admin, new_user):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    reader = new_user(password="Reader-pass-1")
    sign_in(driver, reader.username, "Reader-pass-1")
    visit(driver, "#/processes", "processes")
    assert driver.execute_script("return document.getElementById('nav-audit').hidden") is True
    driver.find_element("css selector", "#logout").click()
    wait_ready(driver, "login")

    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/processes", "processes")
    wait_until(driver, lambda d: d.execute_script("return !document.getElementById('nav-audit').hidden"), "the audit link")
    driver.find_element("css selector", "#nav-audit").click()
    wait_ready(driver, "audit")
    Select(t(driver, "audit-filter-object")).select_by_value("PROJECT")
    Select(t(driver, "audit-filter-action")).select_by_value("CREATE")
    t(driver, "audit-filter-user").send_keys("admin")
    t(driver, "audit-filter-apply").click()
    wait_until(driver, lambda d: "object=PROJECT" in d.current_url and d.find_elements("css selector", 'main[data-ready="audit"]'),
               "the filtered page")
    assert set(texts(driver, "audit-object")) == {"PROJECT"}
    assert set(texts(driver, "audit-action")) == {"CREATE"}
    assert any("projectName: %s" % project in x for x in texts(driver, "audit-details"))
    # a time filter typed in the chosen zone: after a moment in the future nothing is left
    after = t(driver, "audit-filter-after")
    driver.execute_script("arguments[0].value = '2999-01-01T00:00'", after)
    t(driver, "audit-filter-apply").click()
    wait_until(driver, lambda d: d.find_elements("css selector", '[data-test="audit-empty"]'), "nothing after 2999")
    assert "after=" in driver.current_url
    assert console_errors(driver) == []


def test_the_profile_shows_teams_and_keys(driver, admin, new_user):
    org, _ = make_org(admin)
    me = new_user(password="Profile-pass-1")
    team = make_team(admin, org, [(me, "MAINTAINER")])
    assert admin.post("/api/v1/apikey", json={"username": me.username, "name": "ci-key"}).status_code == 200
    sign_in(driver, me.username, "Profile-pass-1")
    visit(driver, "#/processes", "processes")
    driver.find_element("css selector", "#current-user").click()
    wait_ready(driver, "profile")
    assert me.username in t(driver, "profile-details").text
    wait_until(driver, lambda d: team in texts(d, "profile-team"), "the team listed")
    assert texts(driver, "profile-team-role")[texts(driver, "profile-team").index(team)] == "MAINTAINER"
    assert "ci-key" in texts(driver, "profile-key")
    assert console_errors(driver) == []


def test_a_secret_is_renamed_given_an_owner_and_moved(driver, admin, new_user):
    org, _ = make_org(admin)
    org2, _ = make_org(admin)
    bob = new_user()
    for o in (org, org2):  # an owner must be a member of the secret's organization
        make_team(admin, o, [(bob, "MEMBER")])
    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, "old-name"), "type": (None, "data"),
                                                          "data": ("d", b"s3cr3t-value", "application/octet-stream")})
    assert r.status_code == 200, r.text
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/secret/old-name" % org, "secret")
    name = t(driver, "secret-new-name")
    name.clear()
    name.send_keys("new-name")
    owner = t(driver, "secret-owner")
    owner.clear()
    owner.send_keys(bob.username)
    t(driver, "secret-move-save").click()
    wait_until(driver, lambda d: "/secret/new-name" in d.current_url and d.find_elements("css selector", 'main[data-ready="secret"]'),
               "the renamed secret's page")
    s = admin.get("/api/v1/org/%s/secret/new-name" % org).json()
    assert s["owner"]["username"] == bob.username
    assert admin.get("/api/v1/org/%s/secret/old-name" % org).status_code == 404

    Select(t(driver, "secret-org")).select_by_value(org2)
    t(driver, "secret-move-save").click()
    wait_until(driver, lambda d: "/org/%s/secret/new-name" % org2 in d.current_url, "the moved secret's page")
    wait_ready(driver, "secret")
    assert admin.get("/api/v1/org/%s/secret/new-name" % org2).status_code == 200
    assert "s3cr3t-value" not in driver.page_source
    assert console_errors(driver) == []


def test_tables_become_labelled_cards_on_a_phone(driver, admin):
    org, _ = make_org(admin)
    make_project(admin, org, description="a project with a description", visibility="PRIVATE")
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.set_window_size(390, 844)
    visit(driver, "#/org/%s" % org, "org")
    cells = driver.execute_script("""
        return [...document.querySelectorAll('[data-test="projects"] td')].map(td => ({
          label: getComputedStyle(td, '::before').content,
          display: getComputedStyle(td).display,
          text: td.textContent, width: td.getBoundingClientRect().width}))""")
    assert {c["label"] for c in cells} >= {'"Name"', '"Visibility"', '"Description"'}
    assert all(c["display"] == "grid" for c in cells)
    # the header row is for screen readers only; the page does not scroll sideways
    assert driver.execute_script("return document.querySelector('[data-test=\"projects\"] thead').getBoundingClientRect().height") <= 1
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    # "PRIVATE" on one line
    word = driver.execute_script("""
        const td = [...document.querySelectorAll('[data-test="projects"] td')].find(x => x.textContent === 'PRIVATE');
        const r = document.createRange(); r.selectNodeContents(td.firstChild);
        return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size""")
    assert word == 1, "PRIVATE is broken over %d lines" % word
    assert console_errors(driver) == []


def test_every_date_names_its_zone_and_the_header_switches_it(driver, admin):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/project/%s" % (org, project), "project")
    Select(wait_css(driver, "#zone")).select_by_value("UTC")
    stamp = wait_css(driver, '[data-test="project-details"] time.when')
    iso = stamp.get_attribute("datetime")  # 2026-11-27T02:43:42.160Z
    wait_until(driver, lambda d: stamp.text == iso[:10] + " " + iso[11:19] + " UTC", "the date in UTC, saying so")
    # remembered: another page, after a reload, still says UTC
    go(driver, "#/audit", "audit")
    assert wait_css(driver, '[data-test="audit"] time.when').text.endswith(" UTC")
    assert "(UTC)" in driver.find_element("css selector", '[data-test="audit-filters"]').text
    assert console_errors(driver) == []


def test_a_reader_is_offered_no_changes(driver, admin, new_user):
    org, _ = make_org(admin)
    reader = new_user(password="Reader-pass-2")
    project, _ = make_project(admin, org, visibility="PRIVATE")
    make_team(admin, org, [(reader, "MEMBER")], project=project, level="READER")
    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, "readable"), "type": (None, "data"),
                                                          "data": ("d", b"v", "application/octet-stream")})
    assert r.status_code == 200, r.text
    sign_in(driver, reader.username, "Reader-pass-2")
    visit(driver, "#/org/%s/project/%s" % (org, project), "project")
    for gone in ("project-settings-form", "rules-form", "cfg-save", "repo-add-panel"):
        assert not driver.find_elements("css selector", '[data-test="%s"]' % gone), gone
    assert "writer level" in t(driver, "settings-not-allowed").text
    assert "owner level" in t(driver, "access-not-allowed").text
    assert t(driver, "cfg-text").get_attribute("readonly") is not None
    go(driver, "#/org/%s/secret/readable" % org, "secret")
    for gone in ("settings-form", "secret-move-form", "rules-form", "secret-delete"):
        assert not driver.find_elements("css selector", '[data-test="%s"]' % gone), gone
    assert "you are a reader" in t(driver, "secret-not-allowed").text
    assert console_errors(driver) == []

    # the owner gets the forms
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/secret/readable" % org, "secret")
    t(driver, "secret-delete")
    t(driver, "secret-move-form")


def test_the_process_list_shows_its_total_and_reaches_the_last_page(driver, admin):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    for _ in range(7):
        start_process(admin, "flows:\n  default:\n    - log: hi\n", parts={"org": org, "project": project})
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/processes?org=%s&project=%s&limit=5" % (org, project), "processes")
    wait_until(driver, lambda d: d.find_element("css selector", "#page-range").text == "1–5 of 7", "the total")
    driver.find_element("css selector", "#page-last").click()
    wait_until(driver, lambda d: "offset=5" in d.current_url and d.find_element("css selector", "#page-range").text == "6–7 of 7",
               "the last page")
    assert not driver.find_elements("css selector", "#page-last")
    assert console_errors(driver) == []
