"""The console's process page shows what a process waits for when it waits for a process
lock (issue 26 part 2): the lock, its scope and the holder, linked; it offers no resume
button for the lock's event (the server hands the lock over)."""
from selenium.webdriver.common.by import By

from conftest import ADMIN_PASSWORD, sign_in, start_process, unique, wait_css, wait_process, wait_ready, wait_until
from proc_util import log_text, make_project, status, wait_for

HOLDER = """
flows:
  default:
    - task: lock
      in: {name: "${lockName}"}
    - log: "got the lock ${txId}"
    - suspend: go
"""


def test_a_process_waiting_for_a_lock_says_which_and_who_holds_it(driver, admin):
    project, _ = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    lock = unique("deploy")
    parts = {"org": "Default", "project": project, "arguments.lockName": lock}
    holder = start_process(admin, HOLDER, parts=parts)
    wait_for(lambda: "got the lock %s" % holder in log_text(admin, holder))
    waiter = start_process(admin, HOLDER, parts=parts)
    wait_for(lambda: status(admin, waiter).get("waits"))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s" % waiter)
    wait_ready(driver, "process")
    waits = wait_css(driver, "#process-lock-waits")
    assert waits.text == "lock '%s' (PROJECT) held by process %s" % (lock, holder), waits.text
    assert not driver.find_elements(By.CSS_SELECTOR, "#process-actions [data-event^='lock-']")
    assert driver.find_elements(By.ID, "process-stop")
    # The holder lets go: the waiter gets the lock, the page follows.
    r = admin.post("/api/v1/process/%s/resume/go" % holder, json={})
    assert r.status_code == 200, r.text
    assert wait_process(admin, holder)["status"] == "FINISHED"
    wait_for(lambda: "got the lock %s" % waiter in log_text(admin, waiter))
    wait_until(driver, lambda d: not d.find_elements(By.ID, "process-lock-waits"), "the wait to go")
    wait_css(driver, "#process-actions [data-event='go']")
    admin.delete("/api/v1/process/%s" % waiter)
