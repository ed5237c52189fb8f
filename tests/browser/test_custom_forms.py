"""A custom form (issue 26 part 5) driven in Chromium: a start link's wizard opens the
process's own forms/<name>/index.html (and a login leads back to it), whose scripts (data.js, ../shared/) run under the CSP but cannot
reach the API; a refused value comes back with its error, a valid one resumes the process
and the wizard follows it to its end."""
from selenium.webdriver.common.by import By

from conftest import click_css, ADMIN_PASSWORD, console_errors, process_log, wait_css, wait_process, wait_ready, wait_until
from proc_util import make_org, make_project
from repo_util import GitRepo, create_repo

FLOW = """
flows:
  default:
    - form: order
      values:
        size: "M"
    - log: "ordered by ${order.name}, size ${order.size}"
forms:
  order:
    - name: {label: "Name", type: string, pattern: ".* .*"}
    - size: {type: string, allow: [S, M, L]}
"""

INDEX = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Order</title>
<script src="data.js"></script>
<script src="../shared/common.js"></script>
<link rel="stylesheet" href="../shared/common.css">
</head><body>
<h1 id="title">Order</h1>
<form id="f" method="post">
  <input id="name" name="name"> <span id="name-error" class="error"></span>
  <input id="size" name="size">
  <button id="send">Send</button>
</form>
<script>init();</script>
</body></html>
"""

COMMON_JS = b"""
function init() {
  document.getElementById('f').action = data.submitUrl;
  document.getElementById('title').textContent = 'Form ' + data.formName + ' (' + data.fields.join(',') + ')';
  var v = data.values || {}, e = data.errors || {};
  document.getElementById('name').value = v.name || '';
  document.getElementById('size').value = v.size || '';
  document.getElementById('name-error').textContent = e.name || '';
  document.body.dataset.ready = 'yes';
  fetch('/api/v1/server/ping').then(function () { document.body.dataset.fetch = 'reached'; },
                                    function () { document.body.dataset.fetch = 'blocked'; });
}
"""


def log_in(driver):
    wait_ready(driver, "login")
    driver.find_element(By.ID, "username").send_keys("admin")
    driver.find_element(By.ID, "password").send_keys(ADMIN_PASSWORD)
    click_css(driver, "#login")


def test_custom_form_from_a_start_link(driver, admin):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org)
    repo = GitRepo({"concord.yml": FLOW, "forms/order/index.html": INDEX.decode(),
                    "forms/shared/common.js": COMMON_JS.decode(), "forms/shared/common.css": ".error { color: red }"})
    try:
        name, _ = create_repo(admin, org, project, repo.url)
        run_custom_form(driver, admin, "/api/v1/org/%s/project/%s/repo/%s/start/default" % (org, project, name))
    finally:
        repo.cleanup()


def run_custom_form(driver, admin, link):
    # the start link logs in, starts the process and lands in the wizard, which opens the
    # custom form in place of the generated one
    driver.get(driver.base_url + link)
    log_in(driver)
    wait_until(driver, lambda d: "/forms/" in d.current_url, "the custom form's page from the wizard")
    page = driver.current_url[len(driver.base_url):]
    pid = page.split("/")[2]
    assert page == "/forms/%s/order/form/" % pid
    wait_css(driver, "body[data-ready=yes]")

    # opened again without a session (a bookmark): the login comes back to it
    driver.delete_all_cookies()
    driver.get(driver.base_url + page)
    log_in(driver)
    wait_until(driver, lambda d: d.current_url == d.base_url + page, "the custom form after the login")
    wait_css(driver, "body[data-ready=yes]")
    assert driver.find_element(By.ID, "title").text == "Form order (name,size)"
    assert driver.find_element(By.ID, "size").get_attribute("value") == "M"
    # its own scripts ran; the CSP kept them from the API
    wait_css(driver, "body[data-fetch]")
    assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-fetch") == "blocked"
    errors = " ".join(e["message"] for e in console_errors(driver))
    # (a missing file is Chromium's "…responded with a status of 404 (Not Found)"; the bare
    # "404" also matched the server's port, 40443 in one run)
    assert "script-src" not in errors and "style-src" not in errors and "404 (Not Found)" not in errors, errors

    # nor post anywhere but to its own submit URL (e.g. start a process as the user)
    driver.execute_script("var f = document.createElement('form'); f.method = 'post';"
                          "f.action = '/api/v1/process'; document.body.appendChild(f); f.submit();")
    seen = []
    wait_until(driver, lambda d: seen.extend(console_errors(d)) or any("form-action" in e["message"] for e in seen),
               "the CSP refusing a post elsewhere")
    assert driver.current_url == driver.base_url + page

    # a refused value: back to the same form, with the server's error and what was sent
    driver.find_element(By.ID, "name").send_keys("Ada")
    click_css(driver, "#send")
    wait_until(driver, lambda d: d.find_element(By.ID, "name-error").text != "", "the name's error")
    assert "doesn't match pattern" in driver.find_element(By.ID, "name-error").text
    assert driver.find_element(By.ID, "name").get_attribute("value") == "Ada"
    assert wait_process(admin, pid, ("SUSPENDED",))["status"] == "SUSPENDED"

    # the console's form page (the process page's link to the form) shows it too
    driver.get(driver.base_url + "/#/process/%s/form/order" % pid)
    wait_until(driver, lambda d: d.current_url == d.base_url + page, "the custom form from the form page")
    wait_css(driver, "body[data-ready=yes]")
    assert "doesn't match pattern" in driver.find_element(By.ID, "name-error").text  # still the last refusal

    # a valid one resumes the process; the wizard follows it to its end
    name = driver.find_element(By.ID, "name")
    name.clear()
    name.send_keys("Ada Lovelace")
    driver.find_element(By.ID, "size").clear()
    driver.find_element(By.ID, "size").send_keys("L")
    click_css(driver, "#send")
    wait_ready(driver, "wizard")
    wait_css(driver, "#wizard-stage[data-stage=end]")
    assert "finished" in driver.find_element(By.ID, "wizard-stage").text.lower()
    assert "ordered by Ada Lovelace, size L" in process_log(admin, pid)
