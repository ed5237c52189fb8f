"""The console's process operations (issue 26 part 4): the process page shows why a process
waits, stops it with its children and restarts a finished one; the list cancels the
selected rows at once."""
from selenium.webdriver.common.by import By

from conftest import click_css, ADMIN_PASSWORD, sign_in, start_process, wait_css, wait_process, wait_ready, wait_until
from proc_util import sleeper, status, wait_for

SLEEPS = """
flows:
  default:
    - log: "before"
    - task: sleep
      in: {duration: 60, suspend: true}
"""


def history(client, pid):
    return [h["status"] for h in status(client, pid, include="history")["statusHistory"]]


def test_waits_stop_with_children_and_restart(driver, admin):
    parent = start_process(admin, SLEEPS)
    wait_process(admin, parent, ("SUSPENDED",))
    child = start_process(admin, sleeper(60), parts={"parentInstanceId": parent})
    wait_process(admin, child, ("RUNNING",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s" % parent)
    wait_ready(driver, "process")
    why = wait_css(driver, "#process-waits li[data-type=PROCESS_SLEEP]")
    assert why.text.startswith("Waiting till ")
    click_css(driver, "#process-stop-cascade")
    ask = wait_css(driver, "[data-test=confirm]")
    assert "child processes" in ask.text
    wait_css(driver, "[data-test=confirm-yes]").click()
    assert "children are cancelled" in wait_css(driver, "#process-action-ok").text
    assert wait_process(admin, parent)["status"] == "CANCELLED"
    assert wait_process(admin, child)["status"] == "CANCELLED"
    wait_until(driver, lambda d: d.find_element(By.ID, "process-status").text == "CANCELLED", "CANCELLED")

    wait_css(driver, "#process-restart").click()
    wait_css(driver, "[data-test=confirm-yes]").click()
    assert "runs again" in wait_css(driver, "#process-action-ok").text
    wait_for(lambda: history(admin, parent).count("SUSPENDED") == 2, timeout=30)
    wait_until(driver, lambda d: d.find_element(By.ID, "process-status").text == "SUSPENDED", "SUSPENDED again")
    assert admin.delete("/api/v1/process/%s" % parent).status_code == 204


def test_the_list_cancels_the_selected_rows(driver, admin):
    a = start_process(admin, SLEEPS, parts={"tags": "bulk-pick"})
    b = start_process(admin, SLEEPS, parts={"tags": "bulk-pick"})
    keep = start_process(admin, SLEEPS, parts={"tags": "bulk-pick"})
    for pid in (a, b, keep):
        wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/processes?tags=bulk-pick")
    wait_ready(driver, "processes")
    assert not driver.find_element(By.ID, "process-bulk-stop").is_enabled()
    for pid in (a, b):
        wait_css(driver, "tr[data-id='%s'] [data-test=process-select]" % pid).click()
    btn = driver.find_element(By.ID, "process-bulk-stop")
    assert btn.text == "Cancel selected (2)"
    btn.click()
    wait_css(driver, "[data-test=confirm-yes]").click()
    assert "2 process" in wait_css(driver, "#process-bulk-ok").text
    assert wait_process(admin, a)["status"] == "CANCELLED"
    assert wait_process(admin, b)["status"] == "CANCELLED"
    assert status(admin, keep)["status"] == "SUSPENDED"
    assert admin.delete("/api/v1/process/%s" % keep).status_code == 204
