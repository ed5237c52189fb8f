"""The console's project page (issue 24 part 3): the project's cfg shown and saved as JSON
(a bad one refused before anything is sent), and "Encrypt a value", whose result a process
of the project opens with crypto.decryptString; the value itself never stays in the page."""
from conftest import (ADMIN_PASSWORD, console_errors, process_log, sign_in, start_process, wait_css, wait_process,
                      wait_ready, wait_until)
from proc_util import make_org, make_project


def t(d, name):
    return wait_css(d, '[data-test="%s"]' % name)


def texts(d, name):
    return d.execute_script(
        "return [...document.querySelectorAll('[data-test=\"' + arguments[0] + '\"]')].map(e => e.textContent)", name)


def test_project_cfg_edited_and_a_value_encrypted(driver, admin):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    cfg_url = "/api/v1/org/%s/project/%s/cfg" % (org, project)
    assert admin.put(cfg_url, json={"arguments": {"greeting": "hi"}}).status_code == 200
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/org/%s/project/%s" % (org, project))
    wait_ready(driver, "project")
    assert '"greeting": "hi"' in t(driver, "cfg-text").get_attribute("value")

    box = t(driver, "cfg-text")
    box.clear()
    box.send_keys("[1, 2]")
    t(driver, "cfg-save").click()
    wait_until(driver, lambda d: "must be a JSON object" in "".join(texts(d, "cfg-error")), "the refusal")
    assert admin.get(cfg_url).json() == {"arguments": {"greeting": "hi"}}
    box.clear()
    box.send_keys('{"arguments": {"greeting": "hello"}}')
    t(driver, "cfg-save").click()
    wait_until(driver, lambda d: "Saved." in "".join(texts(d, "cfg-error")), "saved")
    assert admin.get(cfg_url).json() == {"arguments": {"greeting": "hello"}}

    t(driver, "encrypt-panel").click()
    t(driver, "encrypt-value").send_keys("hush-hush-42")
    t(driver, "encrypt-submit").click()
    out = t(driver, "encrypt-output")
    wait_until(driver, lambda d: out.get_attribute("value"), "the encrypted value")
    enc = out.get_attribute("value")
    assert "hush-hush-42" not in driver.page_source
    assert t(driver, "encrypt-value").get_attribute("value") == ""
    flow = ("flows:\n  default:\n    - log: \"${greeting} ${crypto.decryptString(enc) == 'hush-hush-42'}\"\n")
    pid = start_process(admin, flow, parts={"org": org, "project": project, "arguments.enc": enc})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "hello true" in process_log(admin, pid)
    assert console_errors(driver) == []
