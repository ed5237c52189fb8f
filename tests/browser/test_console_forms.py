"""Forms in the console (issue 10): a form with every field type, a server's validation
error shown next to its field, a valid submit resuming the process; a two-form wizard; and
the start link, with and without a session."""
import urllib.parse

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import (click_css, ADMIN_PASSWORD, phone, process_log, sign_in, start_process, unique, wait_css, wait_process,
                      wait_ready, wait_until)
from proc_util import make_org, make_project, status, wait_for
from repo_util import GitRepo, create_repo

EVERYTHING = """
flows:
  default:
    - form: everything
    - log: "name=${everything.name} age=${everything.age} ratio=${everything.ratio} ok=${everything.ok}"
    - log: "day=${everything.day} at=${everything.at} color=${everything.color} many=${everything.many}"
    - log: "notes=${everything.notes} big=${everything.big} fixed=${everything.fixed} doc=${everything.doc}"
forms:
  everything:
    - name: {label: "Full name", type: string, pattern: "[A-Za-z ]+", placeholder: "First Last"}
    - age: {label: "Age", type: "int?", min: 18, max: 99}
    - ratio: {label: "Ratio", type: "decimal?", min: 0, max: 1}
    - ok: {label: "Agreed", type: boolean}
    - day: {label: "Day", type: "date?"}
    - at: {label: "At", type: "dateTime?"}
    - color: {label: "Colour", type: string, allow: [red, green, blue]}
    - many: {label: "Letters", type: "string+", allow: [a, b, c]}
    - notes: {label: "Notes", type: "string*"}
    - big: {label: "Big choice", type: "string?", allow: [o1, o2, o3, o4, o5, o6, o7]}
    - fixed: {label: "Fixed", type: string, readonly: true, value: "constant"}
    - doc: {label: "Document", type: "file?"}
"""

TWO_FORMS = """
flows:
  default:
    - log: "asking"
    - form: first
    - form: second
    - log: "answers ${first.a} and ${second.b}"
forms:
  first:
    - a: {label: "First answer", type: string}
  second:
    - b: {label: "Second answer", type: int}
"""


def set_value(d, el, value):
    """Sets an input's value the way a date picker would (independent of the locale)."""
    d.execute_script("arguments[0].value = arguments[1];"
                     "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));", el, value)


def field_error(d, field_id, input_id=None):
    """The visible error next to the field, checking the input points to it."""
    el = d.find_element(By.ID, input_id or field_id)
    err = d.find_element(By.ID, field_id + "-error")
    assert err.is_displayed()
    assert field_id + "-error" in (el.get_attribute("aria-describedby") or "").split()
    assert el.get_attribute("aria-invalid") == "true"
    return err.text


def suspended(admin, flow, **parts):
    pid = start_process(admin, flow, parts=parts or None)
    p = wait_process(admin, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(admin, pid)
    return pid


def test_form_with_every_field_type(driver, admin, tmp_path):
    pid = suspended(admin, EVERYTHING)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/form/everything" % pid)
    wait_ready(driver, "form")
    name = driver.find_element(By.ID, "f-name")
    assert name.get_attribute("placeholder") == "First Last"
    assert name.get_attribute("pattern") == "[A-Za-z ]+"
    assert driver.find_element(By.CSS_SELECTOR, "label[for=f-name]").text.startswith("Full name")
    age = driver.find_element(By.ID, "f-age")
    assert (age.get_attribute("type"), age.get_attribute("min"), age.get_attribute("max")) == ("number", "18", "99")
    assert driver.find_element(By.ID, "f-ratio").get_attribute("step") == "any"
    assert driver.find_element(By.ID, "f-ok").get_attribute("type") == "checkbox"
    assert driver.find_element(By.ID, "f-day").get_attribute("type") == "date"
    assert driver.find_element(By.ID, "f-at").get_attribute("type") == "datetime-local"
    assert len(driver.find_elements(By.CSS_SELECTOR, "input[type=radio][name=color]")) == 3
    assert len(driver.find_elements(By.CSS_SELECTOR, "input[type=checkbox][name=many]")) == 3
    assert driver.find_element(By.ID, "f-big").tag_name == "select"
    fixed = driver.find_element(By.ID, "f-fixed")
    assert fixed.get_attribute("readonly") is not None and fixed.get_attribute("value") == "constant"
    assert driver.find_element(By.ID, "f-doc").get_attribute("type") == "file"
    # every input has a label
    for el in driver.find_elements(By.CSS_SELECTOR, "#process-form input, #process-form select"):
        labelled = driver.execute_script("return arguments[0].labels.length > 0 || !!arguments[0].getAttribute('aria-label')", el)
        assert labelled, el.get_attribute("outerHTML")

    # the server's messages, each next to its field
    name.send_keys("R2D2")
    age.send_keys("5")
    click_css(driver, "#form-submit")
    wait_css(driver, "#form-error")
    assert "doesn't match pattern" in field_error(driver, "f-name")
    assert "must be within" in field_error(driver, "f-age")
    assert "Invalid cardinality" in field_error(driver, "f-color", "f-color-0")
    assert driver.find_element(By.CSS_SELECTOR, "[data-field=ratio] .field-error").is_displayed() is False
    assert status(admin, pid)["status"] == "SUSPENDED"

    # a valid submit resumes the process and leads to the wizard
    name.clear()
    name.send_keys("Ann Lee")
    age.clear()
    age.send_keys("30")
    driver.find_element(By.ID, "f-ratio").send_keys("0.5")
    click_css(driver, "#f-ok")
    set_value(driver, driver.find_element(By.ID, "f-day"), "2026-03-15")
    set_value(driver, driver.find_element(By.ID, "f-at"), "2026-03-15T10:30:00")
    click_css(driver, "label[for=f-color-1]")
    click_css(driver, "label[for=f-many-0]")
    click_css(driver, "label[for=f-many-2]")
    driver.find_element(By.ID, "f-notes").send_keys("n1")
    click_css(driver, "#f-notes-add")
    wait_css(driver, "#f-notes-2").send_keys("n2")
    Select(driver.find_element(By.ID, "f-big")).select_by_visible_text("o6")
    doc = tmp_path / "doc.txt"
    doc.write_text("hello file")
    driver.find_element(By.ID, "f-doc").send_keys(str(doc))
    click_css(driver, "#form-submit")
    wait_ready(driver, "wizard")
    wait_until(driver, lambda d: d.find_element(By.ID, "wizard-stage").get_attribute("data-stage") == "end", "the end")
    assert wait_process(admin, pid)["status"] == "FINISHED"
    log = process_log(admin, pid)
    assert "name=Ann Lee age=30 ratio=0.5 ok=true" in log, log
    assert "day=2026-03-15T00:00:00.000Z at=2026-03-15T" in log and "color=green many=[a, c]" in log, log
    assert "notes=[n1, n2] big=o6 fixed=constant doc=_form_files/everything/doc" in log, log


def test_two_form_wizard(driver, admin):
    pid = suspended(admin, TWO_FORMS)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    phone(driver)  # as on a phone, from an email's link
    driver.get(driver.base_url + "/#/process/%s/wizard" % pid)
    wait_ready(driver, "wizard")
    assert driver.find_element(By.ID, "wizard-id").text == pid
    assert driver.find_element(By.ID, "wizard-initiator").text == "admin"
    wait_css(driver, "#wizard-stage[data-form=first] #f-a").send_keys("yes")
    click_css(driver, "#form-submit")
    wait_css(driver, "#wizard-stage[data-form=second] #f-b").send_keys("42")
    click_css(driver, "#form-submit")
    wait_css(driver, "#wizard-stage[data-stage=end]")
    assert "finished" in driver.find_element(By.ID, "wizard-stage").text.lower()
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    click_css(driver, "#wizard-process-link")
    wait_ready(driver, "process")
    assert driver.find_element(By.ID, "process-status").text == "FINISHED"
    assert "answers yes and 42" in process_log(admin, pid)


START_FLOW = """
flows:
  default:
    - log: "started with ${greeting}"
    - form: approve
    - log: "approved=${approve.ok}"
forms:
  approve:
    - ok: {label: "Approve", type: boolean}
"""


def start_link(admin):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = GitRepo({"concord.yml": START_FLOW})
    name, _ = create_repo(admin, org, project, repo.url)
    link = "/api/v1/org/%s/project/%s/repo/%s/start/default?arguments.greeting=%s" % (org, project, name, "hi")
    return repo, project, link


def started(admin, project):
    r = admin.get("/api/v2/process", params={"limit": 10})
    return [p for p in r.json() if p.get("projectName") == project]


def finish_in_wizard(driver, admin):
    wait_ready(driver, "wizard")
    pid = driver.find_element(By.ID, "wizard-id").text
    wait_css(driver, "#wizard-stage[data-form=approve] #f-ok").click()
    click_css(driver, "#form-submit")
    wait_css(driver, "#wizard-stage[data-stage=end]")
    assert wait_process(admin, pid)["status"] == "FINISHED"
    log = process_log(admin, pid)
    assert "started with hi" in log and "approved=true" in log, log
    return pid


def test_start_link_without_a_session_logs_in_then_shows_progress(driver, admin, new_user):
    repo, project, link = start_link(admin)
    try:
        driver.get(driver.base_url + link)
        wait_ready(driver, "login")
        assert urllib.parse.unquote(driver.current_url.split("from=", 1)[1]) == link
        assert not started(admin, project)  # nothing started without a session
        driver.find_element(By.ID, "username").send_keys("admin")
        driver.find_element(By.ID, "password").send_keys(ADMIN_PASSWORD)
        click_css(driver, "#login")
        pid = finish_in_wizard(driver, admin)
        assert [p["instanceId"] for p in started(admin, project)] == [pid]
        assert status(admin, pid)["initiator"] == "admin"
    finally:
        repo.cleanup()


def test_start_link_with_a_session_starts_at_once(driver, admin):
    repo, project, link = start_link(admin)
    try:
        sign_in(driver, "admin", ADMIN_PASSWORD)
        driver.get(driver.base_url + link)
        pid = finish_in_wizard(driver, admin)
        assert driver.find_element(By.ID, "wizard-initiator").text == "admin"
        assert [p["instanceId"] for p in started(admin, project)] == [pid]
    finally:
        repo.cleanup()


def test_bad_start_link_is_an_error_page(driver, admin):
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/api/v1/org/%s/project/nope/repo/nope/start/default" % unique("org"))
    body = driver.find_element(By.TAG_NAME, "body").text
    assert "not found" in body.lower() or "unknown" in body.lower(), body
    assert driver.find_element(By.CSS_SELECTOR, "a[href='/']")


YIELDS = """
flows:
  default:
    - form: first
      yield: true
    - form: second
forms:
  first:
    - a: {type: string}
  second:
    - b: {type: string}
"""


def test_a_yield_form_ends_the_wizard(driver, admin):
    pid = suspended(admin, YIELDS)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/wizard" % pid)
    wait_ready(driver, "wizard")
    wait_css(driver, "#wizard-stage[data-form=first] #f-a").send_keys("x")
    click_css(driver, "#form-submit")
    wait_css(driver, "#wizard-stage[data-stage=end]")
    assert "background" in driver.find_element(By.ID, "wizard-stage").text
    # the next form waits for someone to open it
    wait_for(lambda: [f["name"] for f in admin.get("/api/v1/process/%s/form" % pid).json()] == ["second"])
    assert driver.find_element(By.ID, "wizard-stage").get_attribute("data-stage") == "end"
