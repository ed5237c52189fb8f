"""The console's administration pages (issue 10): secrets of every kind created, listed,
deleted and given access rules; API keys shown once and deleted; organizations → projects →
repositories browsed, a process started with arguments from a repository, a refresh (and
its error), a manual trigger run; an outsider kept out of another organization's secrets;
no secret value in any page."""
import os
import struct
import tempfile

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from conftest import (click_css, ADMIN_PASSWORD, Client, console_errors, go, navigate, phone, process_log, sign_in, t, texts,
                      unique, visit, wait_process, wait_ready, wait_until)
from proc_util import make_org, make_project, make_team
from repo_util import create_repo, git  # noqa: F401  (git is a fixture)

SECRET_API = "/api/v1/org/%s/secret"


def field_values(d):
    return d.execute_script("return [...document.querySelectorAll('input, textarea')].map(e => e.value)")


def assert_no_value(d, value, where):
    assert value not in d.page_source, "a secret value is in the HTML of %s" % where
    assert not any(value in v for v in field_values(d)), "a secret value is in a field of %s" % where


def export(client, org, name):
    r = client.post(SECRET_API % org + "/" + name + "/data")
    assert r.status_code == 200, r.text
    return r.content


def secret_meta(client, org, name):
    r = client.get(SECRET_API % org + "/" + name)
    assert r.status_code == 200, r.text
    return r.json()


def create_in_form(d, name, kind, fill=None, visibility=None, project=None, store_password=None, error=False):
    """Fills the new-secret form and submits it; waits for the secret in the list, or with
    error=True for the error shown next to the form (returned)."""
    t(d, "secret-name").clear()
    t(d, "secret-name").send_keys(name)
    Select(t(d, "secret-kind")).select_by_value(kind)
    if fill:
        fill()
    if visibility:
        Select(t(d, "secret-visibility")).select_by_value(visibility)
    if project:
        Select(t(d, "secret-project")).select_by_visible_text(project)
    if store_password:
        t(d, "secret-storepass").send_keys(store_password)
    t(d, "secret-create").click()
    if error:
        return wait_until(d, lambda x: "".join(texts(x, "secret-error")), "an error creating %s" % name)
    wait_until(d, lambda x: name in texts(x, "secret-link") or "".join(texts(x, "secret-error")),
               "secret %s listed or an error" % name)
    assert not "".join(texts(d, "secret-error")), texts(d, "secret-error")


def test_secrets_of_every_kind_are_created_and_listed(driver, admin):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/secrets" % org, "secrets")
    assert t(driver, "secrets-empty")

    # generated: the public key is shown, with a copy button
    gen = unique("gen")
    create_in_form(driver, gen, "generated", fill=lambda: Select(t(driver, "secret-keytype")).select_by_value("ed25519"))
    shown = t(driver, "public-key").get_attribute("value")
    assert shown.startswith("ssh-ed25519 "), shown
    assert t(driver, "public-key-copy").text == "Copy"
    b = export(admin, org, gen)
    assert b[4:4 + struct.unpack(">i", b[:4])[0]] == shown.encode()

    # uploaded: public key typed, private key from a file; both stored byte for byte
    up = unique("up")
    pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIUploadedKeyForTheConsoleTest me@host"
    priv = b"-----BEGIN OPENSSH PRIVATE KEY-----\nUPLOADED-PRIVATE-\x01-BYTES\n-----END OPENSSH PRIVATE KEY-----\n"
    with tempfile.NamedTemporaryFile(suffix=".key", delete=False) as f:
        f.write(priv)
    try:
        def fill_pair():
            t(driver, "secret-public").send_keys(pub)
            t(driver, "secret-private-file").send_keys(f.name)
        create_in_form(driver, up, "uploaded", fill=fill_pair)
    finally:
        os.unlink(f.name)
    assert t(driver, "public-key").get_attribute("value") == pub
    b = export(admin, org, up)
    n = struct.unpack(">i", b[:4])[0]
    assert b[4:4 + n] == pub.encode() and b[8 + n:] == priv

    # username/password, private and restricted to a project
    userpass, password = unique("up"), "pw-" + unique("VALUE")

    def fill_userpass():
        t(driver, "secret-username").send_keys("deployer")
        t(driver, "secret-password").send_keys(password)
    create_in_form(driver, userpass, "username_password", fill=fill_userpass, visibility="PRIVATE", project=project)
    m = secret_meta(admin, org, userpass)
    assert (m["type"], m["visibility"], m["projectName"]) == ("USERNAME_PASSWORD", "PRIVATE", project)

    # a single value with several lines, kept as typed (no CRLF, no trimming), under a store password
    data, value = unique("data"), "  first line of " + unique("VALUE") + "\nsecond line  "

    create_in_form(driver, data, "data", fill=lambda: t(driver, "secret-data").send_keys(value), store_password="Str0ngPass")
    assert secret_meta(admin, org, data)["encryptedBy"] == "PASSWORD"
    r = admin.post(SECRET_API % org + "/" + data + "/data", files={"storePassword": (None, "Str0ngPass")})
    assert r.status_code == 200 and r.content == value.encode(), r.content

    # the list shows every one with its type; the form is empty again
    rows = driver.execute_script(
        "return [...document.querySelectorAll('[data-test=secrets] tbody tr')].map(r => [...r.cells].map(c => c.textContent))")
    kinds = {r[0]: r[1] for r in rows}
    assert kinds == {gen: "KEY_PAIR", up: "KEY_PAIR", userpass: "USERNAME_PASSWORD", data: "DATA"}, kinds
    assert [r for r in rows if r[0] == userpass][0][2:4] == ["PRIVATE", project]
    for secret in (password, value.strip(), "UPLOADED-PRIVATE"):
        assert_no_value(driver, secret, "the secrets page after creating")

    # a server error is shown next to the form: the name is taken
    err = create_in_form(driver, data, "data", fill=lambda: t(driver, "secret-data").send_keys("x"), error=True)
    assert "already exists" in err, err
    assert t(driver, "secret-error").find_element(By.CSS_SELECTOR, "[role=alert]")
    err = create_in_form(driver, unique("weak"), "data", fill=lambda: t(driver, "secret-data").send_keys("x"),
                         store_password="weak", error=True)
    assert "Invalid password" in err, err

    # no value in any page that shows these secrets
    for hash_path, page in (("#/org/%s/secrets" % org, "secrets"), ("#/org/%s/secret/%s" % (org, userpass), "secret"),
                            ("#/org/%s/secret/%s" % (org, data), "secret"), ("#/org/%s" % org, "org"),
                            ("#/org/%s/secret/%s" % (org, up), "secret")):
        if page == "secrets":
            visit(driver, hash_path, page)
        else:
            navigate(driver, hash_path, page)
        for secret in (password, value.strip(), "UPLOADED-PRIVATE", "deployer"):
            assert_no_value(driver, secret, hash_path)
    assert [e for e in console_errors(driver) if "409" not in e["message"] and "400" not in e["message"]] == []


def test_secret_access_rules_and_delete(driver, admin):
    org, _ = make_org(admin)
    teams = []
    for _ in range(2):
        name = unique("team")
        assert admin.post("/api/v1/org/%s/team" % org, json={"name": name}).status_code == 200
        teams.append(name)
    name = unique("sec")
    r = admin.post(SECRET_API % org, files={"name": (None, name), "type": (None, "key_pair"), "keyType": (None, "ed25519")})
    assert r.status_code == 200, r.text
    public_key = r.json()["publicKey"]
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/secrets" % org, "secrets")
    driver.find_element(By.LINK_TEXT, name).click()
    wait_ready(driver, "secret")
    assert t(driver, "public-key").get_attribute("value") == public_key
    assert texts(driver, "rule-row") == []

    # settings: private, restricted to a project; the details follow
    project, _ = make_project(admin, org)
    visit(driver, "#/org/%s/secret/%s" % (org, name), "secret")
    Select(t(driver, "secret-visibility")).select_by_value("PRIVATE")
    Select(t(driver, "secret-project")).select_by_visible_text(project)
    t(driver, "settings-save").click()
    wait_until(driver, lambda d: project in "".join(texts(d, "secret-details")), "the details updated")
    assert "PRIVATE" in "".join(texts(driver, "secret-details"))
    m = admin.get(SECRET_API % org + "/" + name).json()
    assert (m["visibility"], m["projectName"]) == ("PRIVATE", project)

    # two rules added and saved
    for team, level in zip(teams, ("WRITER", "OWNER")):
        t(driver, "rule-add").click()
        Select(driver.find_elements(By.CSS_SELECTOR, "[data-test=rule-team]")[-1]).select_by_visible_text(team)
        Select(driver.find_elements(By.CSS_SELECTOR, "[data-test=rule-level]")[-1]).select_by_value(level)
    t(driver, "rules-save").click()
    wait_until(driver, lambda d: "Saved 2 rules" in "".join(texts(d, "rules-result")), "the rules saved")
    access = admin.get(SECRET_API % org + "/" + name + "/access").json()
    assert sorted((a["teamName"], a["level"]) for a in access) == sorted(zip(teams, ("WRITER", "OWNER")))

    # shown again after a reload; one removed, the other changed
    visit(driver, "#/org/%s/secret/%s" % (org, name), "secret")
    rows = driver.find_elements(By.CSS_SELECTOR, "[data-test=rule-row]")
    assert len(rows) == 2
    shown = [Select(r.find_element(By.CSS_SELECTOR, "[data-test=rule-team]")).first_selected_option.text for r in rows]
    assert sorted(shown) == sorted(teams)
    rows[0].find_element(By.CSS_SELECTOR, "[data-test=rule-remove]").click()
    Select(driver.find_element(By.CSS_SELECTOR, "[data-test=rule-level]")).select_by_value("READER")
    t(driver, "rules-save").click()
    wait_until(driver, lambda d: "Saved 1 rule." in "".join(texts(d, "rules-result")), "one rule saved")
    access = admin.get(SECRET_API % org + "/" + name + "/access").json()
    assert [(a["teamName"], a["level"]) for a in access] == [(shown[1], "READER")]

    # a rule without a team is refused before anything is sent
    t(driver, "rule-add").click()
    t(driver, "rules-save").click()
    wait_until(driver, lambda d: "Choose a team" in "".join(texts(d, "rules-result")), "the missing team said")
    assert len(admin.get(SECRET_API % org + "/" + name + "/access").json()) == 1

    # delete: Cancel (or Escape) keeps it; the keyboard reaches the buttons; Delete deletes
    t(driver, "secret-delete").click()
    assert driver.switch_to.active_element.get_attribute("data-test") == "confirm-no"
    driver.switch_to.active_element.send_keys(Keys.ESCAPE)
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-test=confirm]")
    t(driver, "secret-delete").click()
    t(driver, "confirm-no").click()
    assert admin.get(SECRET_API % org + "/" + name).status_code == 200
    t(driver, "secret-delete").click()
    driver.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)  # from Cancel back to Delete
    assert driver.switch_to.active_element.get_attribute("data-test") == "confirm-yes"
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    wait_until(driver, lambda d: d.current_url.endswith("#/org/%s/secrets" % org), "back to the list")
    wait_ready(driver, "secrets")
    assert name not in texts(driver, "secret-link")
    assert driver.find_element(By.ID, "flash").text == 'Secret "%s" deleted.' % name  # it says what it did
    assert admin.get(SECRET_API % org + "/" + name).status_code == 404


def test_api_key_shown_once_then_deleted(driver, new_user):
    user = new_user(password="Keys-pass-123")
    sign_in(driver, user.username, "Keys-pass-123")
    visit(driver, "#/apikeys", "apikeys")
    name = unique("key")
    t(driver, "apikey-name-input").send_keys(name)
    t(driver, "apikey-create").click()
    value = t(driver, "apikey-value").get_attribute("value")
    assert "shown only this once" in t(driver, "apikey-created").text
    assert t(driver, "apikey-value-copy")
    wait_until(driver, lambda d: name in texts(d, "apikey-name"), "the new key listed")
    assert value not in driver.page_source  # in the text box, not in the HTML
    me = Client(driver.base_url, value)
    assert me.get("/api/v1/apikey").status_code == 200  # the shown value is the key

    # a duplicate name: the server's message next to the form
    t(driver, "apikey-name-input").send_keys(name)
    t(driver, "apikey-create").click()
    wait_until(driver, lambda d: "already exists" in "".join(texts(d, "apikey-error")), "the duplicate refused")

    # shown once: not after coming back
    go(driver, "#/orgs", "orgs")
    go(driver, "#/apikeys", "apikeys")
    assert name in texts(driver, "apikey-name")
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-test=apikey-value]")
    assert not any(value in v for v in field_values(driver)) and value not in driver.page_source

    i = texts(driver, "apikey-name").index(name)
    driver.find_elements(By.CSS_SELECTOR, "[data-test=apikey-delete]")[i].click()
    t(driver, "confirm-yes").click()
    wait_until(driver, lambda d: name not in texts(d, "apikey-name"), "the key gone from the list")
    assert "deleted" in t(driver, "apikey-deleted").text
    assert me.get("/api/v1/apikey").status_code == 401


DEFINITION = """
configuration:
  arguments:
    greeting: "hello"
profiles:
  loud:
    configuration:
      arguments:
        greeting: "HELLO"
flows:
  default:
    - log: "${greeting} ${name}, n+1=${n + 1}, deep=${deploy.region}"
  other:
    - log: "other flow with ${color}"
"""

MANUAL = DEFINITION + """
triggers:
  - manual:
      name: "Paint it"
      entryPoint: other
      arguments: {color: "ultramarine"}
"""


def test_browse_to_a_repository_and_start_a_process_with_arguments(driver, admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, description="the console test's project")
    repo = git({"concord.yml": DEFINITION})
    repo_name, _ = create_repo(admin, org, project, repo.url)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/orgs", "orgs")
    t(driver, "orgs-filter").send_keys(org, Keys.ENTER)
    wait_until(driver, lambda d: texts(d, "org-link") == [org], "the filtered list")
    driver.find_element(By.LINK_TEXT, org).click()
    wait_ready(driver, "org")
    assert t(driver, "org-secrets").get_attribute("href").endswith("#/org/%s/secrets" % org)
    driver.find_element(By.LINK_TEXT, project).click()
    wait_ready(driver, "project")
    assert "the console test's project" in t(driver, "project-details").text
    driver.find_element(By.LINK_TEXT, repo_name).click()
    wait_ready(driver, "repo")
    assert repo.url in t(driver, "repo-details").text

    # the definition's choices: its flows in a drop-down, its profiles as boxes, its declared
    # argument first (left as declared, it is not sent)
    entry = Select(t(driver, "start-entry"))
    assert [o.text for o in entry.options] == ["default", "other"]
    assert entry.first_selected_option.text == "default"
    assert [e.get_attribute("value") for e in driver.find_elements(By.CSS_SELECTOR, "[data-test=start-profile]")] == ["loud"]
    declared = driver.find_element(By.CSS_SELECTOR, "[data-test=arg-row][data-declared=greeting]")
    assert declared.find_element(By.CSS_SELECTOR, "[data-test=arg-value]").get_attribute("value") == "hello"

    # arguments of three types, a profile; a bad number is said before anything starts
    click_css(driver, "[data-test=start-profile][value=loud]")
    for name, value, kind in (("name", "world", "text"), ("n", "forty", "number"), ("deploy.region", "eu-1", "text")):
        t(driver, "start-args-add").click()
        assert driver.switch_to.active_element.get_attribute("data-test") == "arg-name"
        driver.switch_to.active_element.send_keys(name)
        driver.find_elements(By.CSS_SELECTOR, "[data-test=arg-value]")[-1].send_keys(value)
        Select(driver.find_elements(By.CSS_SELECTOR, "[data-test=arg-type]")[-1]).select_by_value(kind)
    t(driver, "start-submit").click()
    wait_until(driver, lambda d: "is not a number" in "".join(texts(d, "start-error")), "the bad number said")
    n = driver.find_elements(By.CSS_SELECTOR, "[data-test=arg-value]")[2]
    n.clear()
    n.send_keys("41")
    t(driver, "start-submit").click()
    wait_until(driver, lambda d: "#/process/" in d.current_url, "the process page")
    pid = driver.current_url.rsplit("#/process/", 1)[1].split("/")[0]
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", p
    assert (p["orgName"], p["projectName"], p["repoName"], p["initiator"]) == (org, project, repo_name, "admin")
    assert "HELLO world, n+1=42, deep=eu-1" in process_log(admin, pid)

    # another branch: the choices follow its definition
    repo.checkout("next", create=True)
    repo.commit({"concord.yml": "flows:\n  nightly:\n    - log: night\n  weekly:\n    - log: week\n"})
    go(driver, "#/org/%s/project/%s/repo/%s" % (org, project, repo_name), "repo")
    t(driver, "start-branch").send_keys("next", Keys.TAB)
    wait_until(driver, lambda d: [o.text for o in Select(t(d, "start-entry")).options] == ["nightly", "weekly"],
               "the other branch's flows")
    assert t(driver, "start-profiles-none")
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-test=arg-row][data-declared]")

    # a branch without the definition: the server's message, and the choices typed as text
    go(driver, "#/org/%s/project/%s/repo/%s" % (org, project, repo_name), "repo")
    t(driver, "start-branch").send_keys("nosuchbranch", Keys.TAB)
    wait_until(driver, lambda d: "nosuchbranch" in "".join(texts(d, "start-definition-error")), "the bad branch said")
    assert t(driver, "start-entry").tag_name == "input"
    t(driver, "start-entry").send_keys("nosuchflow")
    t(driver, "start-submit").click()
    wait_until(driver, lambda d: "nosuchbranch" in "".join(texts(d, "start-error")), "the start refused")
    assert "#/org/" in driver.current_url
    assert len(admin.get("/api/v2/process", params={"orgName": org}).json()) == 1


def test_refresh_a_repository_and_run_its_manual_trigger(driver, admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": DEFINITION})
    repo_name, _ = create_repo(admin, org, project, repo.url)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/project/%s/repo/%s" % (org, project, repo_name), "repo")
    assert t(driver, "triggers-empty")

    # a trigger added in git appears after a refresh
    repo.commit({"concord.yml": MANUAL})
    t(driver, "repo-refresh").click()
    wait_until(driver, lambda d: "Refreshed" in "".join(texts(d, "refresh-result")), "the refresh done")
    run = t(driver, "trigger-run")
    assert "Paint it" in t(driver, "triggers").text
    run.click()
    wait_until(driver, lambda d: "#/process/" in d.current_url, "the process page")
    pid = driver.current_url.rsplit("#/process/", 1)[1].split("/")[0]
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED" and p["repoName"] == repo_name, p
    assert "other flow with ultramarine" in process_log(admin, pid)

    # a refresh that fails shows the server's message (file:line:col) and keeps the trigger
    repo.commit({"concord.yml": MANUAL + "  - cron: {spec: '61 * * * *', entryPoint: other}\n"})
    visit(driver, "#/org/%s/project/%s/repo/%s" % (org, project, repo_name), "repo")
    t(driver, "repo-refresh").click()
    wait_until(driver, lambda d: "concord.yml:" in "".join(texts(d, "refresh-result")), "the refresh error")
    assert "61" in "".join(texts(driver, "refresh-result"))
    assert driver.find_element(By.CSS_SELECTOR, "[data-test=refresh-result] [role=alert]")
    assert "Paint it" in t(driver, "triggers").text


def test_an_outsider_does_not_see_another_orgs_secrets(driver, admin, new_user):
    org, _ = make_org(admin)
    name = unique("hidden")
    r = admin.post(SECRET_API % org, files={"name": (None, name), "type": (None, "data"), "data": ("d", b"x")})
    assert r.status_code == 200, r.text
    outsider = new_user(password="Outsider-pass-1")
    own, _ = make_org(admin)
    make_team(admin, own, [(outsider, "MEMBER")])
    sign_in(driver, outsider.username, "Outsider-pass-1")
    visit(driver, "#/org/%s/secrets" % org, "error")
    assert t(driver, "page-error").text
    assert name not in driver.page_source
    go(driver, "#/org/%s/secret/%s" % (org, name), "error")
    assert t(driver, "page-error").text
    assert "DATA" not in t(driver, "page-error").text and not driver.find_elements(By.CSS_SELECTOR, "[data-test=secret-details]")
    go(driver, "#/org/%s" % org, "org")  # a public organization: its page, without its secrets
    assert t(driver, "org-secrets-none")
    assert name not in driver.page_source
    # their own organization's page works
    go(driver, "#/org/%s/secrets" % own, "secrets")
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-test=page-error]")


def test_admin_pages_fit_a_phone(driver, admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": MANUAL})
    repo_name, _ = create_repo(admin, org, project, repo.url)
    name = unique("sec")
    admin.post(SECRET_API % org, files={"name": (None, name), "type": (None, "data"), "data": ("d", b"x")})
    sign_in(driver, "admin", ADMIN_PASSWORD)
    phone(driver)
    for hash_path, page in (("#/orgs", "orgs"), ("#/org/%s" % org, "org"), ("#/org/%s/project/%s" % (org, project), "project"),
                            ("#/org/%s/project/%s/repo/%s" % (org, project, repo_name), "repo"),
                            ("#/org/%s/secrets" % org, "secrets"), ("#/org/%s/secret/%s" % (org, name), "secret"),
                            ("#/apikeys", "apikeys")):
        if hash_path == "#/orgs":
            visit(driver, hash_path, page)
        else:
            navigate(driver, hash_path, page)
        scroll, width = driver.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert scroll <= width, "%s scrolls sideways at 360 px: %s > %s" % (hash_path, scroll, width)
        unlabelled = driver.execute_script(
            "return [...document.querySelectorAll('main input, main select, main textarea')]"
            ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).map(e => e.outerHTML)")
        assert unlabelled == [], "inputs without a label on %s: %s" % (hash_path, unlabelled)
    assert console_errors(driver) == []


def test_add_and_delete_a_repository(driver, admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": MANUAL})
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/project/%s" % (org, project), "project")
    assert t(driver, "repos-empty")
    click_css(driver, "[data-test=repo-add-panel] summary")
    name = unique("repo")
    t(driver, "repo-name").send_keys(name)
    t(driver, "repo-url").send_keys("git://example.com/flows.git")
    t(driver, "repo-add").click()
    wait_until(driver, lambda d: "git://" in "".join(texts(d, "repo-error")), "the refused URL said")
    assert admin.get("/api/v1/org/%s/project/%s/repository/%s" % (org, project, name)).status_code == 404
    t(driver, "repo-url").clear()
    t(driver, "repo-url").send_keys(repo.url)
    t(driver, "repo-add").click()
    wait_until(driver, lambda d: d.current_url.endswith("/repo/%s" % name), "the new repository's page")
    wait_ready(driver, "repo")
    assert "Paint it" in t(driver, "triggers").text  # read at creation
    r = admin.get("/api/v1/org/%s/project/%s/repository/%s" % (org, project, name))
    assert r.status_code == 200 and r.json()["url"] == repo.url, r.text

    t(driver, "repo-delete").click()
    t(driver, "confirm-yes").click()
    wait_until(driver, lambda d: d.current_url.endswith("#/org/%s/project/%s" % (org, project)), "back to the project")
    wait_ready(driver, "project")
    assert t(driver, "repos-empty")
    assert "deleted" in driver.find_element(By.ID, "flash").text
    assert admin.get("/api/v1/org/%s/project/%s/repository/%s" % (org, project, name)).status_code == 404


def test_the_start_link_of_a_repository(driver, admin, git):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = git({"concord.yml": DEFINITION})
    repo_name, _ = create_repo(admin, org, project, repo.url)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/project/%s/repo/%s" % (org, project, repo_name), "repo")
    Select(t(driver, "start-entry")).select_by_value("other")
    click_css(driver, "[data-test=start-profile][value=loud]")
    t(driver, "start-args-add").click()
    driver.switch_to.active_element.send_keys("color")
    driver.find_elements(By.CSS_SELECTOR, "[data-test=arg-value]")[-1].send_keys("teal & sky")
    link = t(driver, "start-link").get_attribute("value")
    assert link == "%s/api/v1/org/%s/project/%s/repo/%s/start/other?activeProfiles=loud&arguments.color=teal+%%26+sky" % (
        driver.base_url, org, project, repo_name), link
    assert t(driver, "start-link-copy")
    driver.get(link)  # the session's cookie goes with it: the server starts the process
    wait_until(driver, lambda d: d.current_url.endswith("/wizard"), "the wizard")
    pid = driver.current_url.rsplit("#/process/", 1)[1].split("/")[0]
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED" and p["initiator"] == "admin", p
    assert "other flow with teal & sky" in process_log(admin, pid)


def test_secret_with_several_projects_keeps_them(driver, admin):
    """A secret restricted to several projects shows them all, and a settings change that
    does not touch the project choice keeps them (issue 29 item 6)."""
    org, _ = make_org(admin)
    p1, id1 = make_project(admin, org)
    p2, id2 = make_project(admin, org)
    name = unique("sec")
    r = admin.post(SECRET_API % org, files={"name": (None, name), "type": (None, "data"), "data": (None, "x"),
                                            "projectIds": (None, "%s,%s" % (id1, id2))})
    assert r.status_code == 200, r.text
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/secrets" % org, "secrets")
    wait_until(driver, lambda d: p1 in d.page_source and p2 in d.page_source, "the list names both projects")
    go(driver, "#/org/%s/secret/%s" % (org, name), "secret")
    details = "".join(texts(driver, "secret-details"))
    assert p1 in details and p2 in details
    Select(t(driver, "secret-visibility")).select_by_value("PRIVATE")
    t(driver, "settings-save").click()
    wait_until(driver, lambda d: "PRIVATE" in "".join(texts(d, "secret-details")), "the details updated")
    m = admin.get(SECRET_API % org + "/" + name).json()
    assert m["visibility"] == "PRIVATE" and sorted(p["name"] for p in m["projects"]) == sorted([p1, p2])
