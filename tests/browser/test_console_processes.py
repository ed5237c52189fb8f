"""The console's process pages (issue 10): the list updating live with its filters in the
URL, a process's live log (tail first, earlier parts on demand), the events timeline, stop
and checkpoint restore."""
import importlib.util
import os
from importlib.machinery import SourceFileLoader

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import (ADMIN_KEY, ADMIN_PASSWORD, ROOT, Client, click_css, phone, sign_in, start_process, wait_css,
                      wait_process, wait_ready, wait_until)
from proc_util import status, wait_for

_loader = SourceFileLoader("bench_retention_run", os.path.join(ROOT, "bench", "retention", "run"))
retention = importlib.util.module_from_spec(importlib.util.spec_from_loader(_loader.name, _loader))
_loader.exec_module(retention)  # fill(): copies of a process, straight into the store

SUSPENDS = """
flows:
  default:
    - log: "first line"
    - suspend: go
    - log: "second line"
    - task: log
      in: {msg: "second level warning", level: WARN}
"""

STEPS = """
flows:
  default:
    - log: "one"
    - task: sleep
      in: {duration: 1}
    - checkpoint: middle
    - log: "two"
"""


def resume(client, pid, event="go"):
    r = client.post("/api/v1/process/%s/resume/%s" % (pid, event), json={})
    assert r.status_code == 200, r.text


def row_status(d, pid):
    return d.find_element(By.CSS_SELECTOR, "tr[data-id='%s'] [data-test=status]" % pid).text


def test_the_list_follows_a_running_process_without_reloading(driver, admin):
    sign_in(driver, "admin", ADMIN_PASSWORD)
    pid = start_process(admin, SUSPENDS, parts={"tags": "live-list"})
    driver.get(driver.base_url + "/#/processes?tags=live-list")
    wait_ready(driver, "processes")
    row = wait_css(driver, "tr[data-id='%s']" % pid)
    driver.execute_script("arguments[0].dataset.before = 'yes'", row)  # gone if the page were rebuilt
    wait_until(driver, lambda d: row_status(d, pid) == "SUSPENDED", "SUSPENDED in the list")
    resume(admin, pid)
    wait_until(driver, lambda d: row_status(d, pid) == "FINISHED", "FINISHED in the list")
    assert driver.find_element(By.CSS_SELECTOR, "tr[data-id='%s']" % pid).get_attribute("data-before") == "yes"
    # a process started meanwhile appears on top
    pid2 = start_process(admin, SUSPENDS, parts={"tags": "live-list"})
    wait_until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#process-rows tr")[0].get_attribute("data-id") == pid2,
               "the new process first")
    assert driver.find_element(By.CSS_SELECTOR, "tr[data-id='%s']" % pid).get_attribute("data-before") == "yes"


def filled_server(make, n):
    """A server of its own whose store holds n finished processes: one run, n - 1 copies of
    it dated 45 days back (bench/retention's fill, as bench/console does)."""
    srv = make(admin_password=True).start()  # the login below uses it
    client = Client(srv.url, ADMIN_KEY)
    pid = start_process(client, 'flows:\n  default:\n    - log: "hello"\n')
    assert wait_process(client, pid)["status"] == "FINISHED"
    srv.stop()
    retention.fill(os.path.join(srv.data_dir, "accord.db"), pid, n - 1)
    srv.start()
    return srv, Client(srv.url, ADMIN_KEY)


def focused_row(d):
    return d.execute_script("const tr = document.activeElement.closest('tr');"
                            "return tr && [tr.dataset.id, tr.getAttribute('aria-rowindex')];")


def test_a_list_of_1000_draws_the_rows_in_view_and_reaches_every_one(driver, fresh_server):
    srv, client = filled_server(fresh_server, 999)
    live = start_process(client, SUSPENDS)  # the newest, the first row
    wait_process(client, live, ("SUSPENDED",))
    listed = [p["instanceId"] for p in client.get("/api/v2/process?limit=1000").json()]
    assert len(listed) == 1000 and listed[0] == live
    sign_in(driver, "admin", ADMIN_PASSWORD, base_url=srv.url)
    driver.get(srv.url + "/#/processes?limit=1000")
    wait_ready(driver, "processes")
    assert driver.find_element(By.ID, "process-list").get_attribute("aria-rowcount") == "1001"
    in_dom = len(driver.find_elements(By.CSS_SELECTOR, "#process-rows tr"))
    assert 30 <= in_dom <= 200, in_dom  # a window of the list, not all of it

    # a row in view follows its process, the row itself kept
    row = wait_css(driver, "tr[data-id='%s']" % live)
    driver.execute_script("arguments[0].dataset.before = 'yes'", row)
    resume(client, live)
    wait_until(driver, lambda d: row_status(d, live) == "FINISHED", "FINISHED in the list")
    assert row.get_attribute("data-before") == "yes"

    # Tab walks past the first window, row by row (two stops a row: its selection box, its link)
    driver.execute_script("arguments[0].focus()", row.find_element(By.CSS_SELECTOR, "[data-test=process-link]"))
    ActionChains(driver).send_keys(Keys.TAB * 300).perform()
    assert focused_row(driver) == [listed[150], "152"]
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB * 6).key_up(Keys.SHIFT).perform()
    assert focused_row(driver) == [listed[147], "149"]

    # the bottom of the page is the oldest process, and its link opens it
    driver.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
    last = wait_css(driver, "tr[data-id='%s']" % listed[-1])
    assert driver.execute_script("const r = arguments[0].getBoundingClientRect(); return r.top < innerHeight && r.bottom > 0",
                                 last), "the oldest process's row is not in view at the bottom"
    assert not driver.find_elements(By.CSS_SELECTOR, "tr[data-id='%s']" % live)  # the window moved
    last.find_element(By.CSS_SELECTOR, "[data-test=process-link]").click()
    wait_until(driver, lambda d: d.current_url.endswith("#/process/%s" % listed[-1]), "the oldest process's page")
    wait_ready(driver, "process")
    assert driver.find_element(By.ID, "process-id").text == listed[-1]


def test_filters_live_in_the_url(driver, admin):
    a = start_process(admin, SUSPENDS, parts={"tags": "filter-a"})
    b = start_process(admin, SUSPENDS, parts={"tags": "filter-b"})
    wait_process(admin, a, ("SUSPENDED",))
    wait_process(admin, b, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/processes")
    wait_ready(driver, "processes")
    driver.find_element(By.ID, "filter-tags").send_keys("filter-a")
    driver.find_element(By.ID, "filter-status").send_keys("SUSPENDED")
    click_css(driver, "#filter-apply")
    wait_until(driver, lambda d: "tags=filter-a" in d.current_url and "status=SUSPENDED" in d.current_url, "filters in the URL")
    wait_ready(driver, "processes")
    wait_css(driver, "tr[data-id='%s']" % a)
    assert not driver.find_elements(By.CSS_SELECTOR, "tr[data-id='%s']" % b)
    driver.refresh()  # a reload keeps them
    wait_ready(driver, "processes")
    assert driver.find_element(By.ID, "filter-tags").get_attribute("value") == "filter-a"
    wait_css(driver, "tr[data-id='%s']" % a)
    driver.back()  # and back goes to the unfiltered list
    wait_until(driver, lambda d: d.current_url.endswith("#/processes"), "back")
    wait_ready(driver, "processes")
    wait_css(driver, "tr[data-id='%s']" % b)
    for pid in (a, b):
        resume(admin, pid)


def test_the_log_shows_lines_as_they_are_written(driver, admin):
    pid = start_process(admin, SUSPENDS)
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/log" % pid)
    wait_ready(driver, "process")
    log = wait_css(driver, "#log")
    wait_until(driver, lambda d: "first line" in log.text, "the first line")
    assert "second line" not in log.text
    wait_css(driver, "[data-event=go]").click()  # the resume button of the event it waits for
    wait_until(driver, lambda d: "second level warning" in log.text, "the lines written after the resume")
    warn = [e for e in driver.find_elements(By.CSS_SELECTOR, "#log .log-line") if "second level warning" in e.text]
    assert "level-WARN" in warn[0].get_attribute("class")
    info = [e for e in driver.find_elements(By.CSS_SELECTOR, "#log .log-line") if "first line" in e.text]
    assert "level-INFO" in info[0].get_attribute("class")
    wait_until(driver, lambda d: log.get_attribute("data-complete") == "true", "the end of the log")
    assert "FINISHED" == driver.find_element(By.ID, "process-status").text


def test_a_big_log_opens_at_its_tail_and_loads_earlier_parts(driver, admin):
    big = "x" * 100000
    flow = '\nflows:\n  default:\n    - log: "START of the log"\n    - log: "${big}"\n    - log: "END of the log"\n'
    pid = start_process(admin, flow, parts={"arguments.big": big})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/log" % pid)
    wait_ready(driver, "process")
    log = wait_css(driver, "#log")
    wait_until(driver, lambda d: "END of the log" in log.text, "the tail")
    assert "START of the log" not in log.text
    assert "showing the last" in driver.find_element(By.ID, "log-info").text
    click_css(driver, "#log-earlier")
    wait_until(driver, lambda d: "START of the log" in log.text, "the earlier part")
    assert not driver.find_element(By.ID, "log-earlier").is_displayed()
    lines = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#log .log-line") if e.text.strip()]
    start = [i for i, t in enumerate(lines) if "START of the log" in t]
    end = [i for i, t in enumerate(lines) if "END of the log" in t]
    assert len(start) == 1 and len(end) == 1 and start[0] < end[0], lines[:3] + lines[-3:]
    assert sum(1 for t in lines if "xxxxxxxxxx" in t) == 1  # the long line once, whole


def test_events_timeline_pairs_task_calls(driver, admin):
    pid = start_process(admin, STEPS)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/events" % pid)
    wait_ready(driver, "process")
    tasks = driver.find_elements(By.CSS_SELECTOR, "#events li.ev-task")
    sleeps = [t for t in tasks if "Task: sleep" in t.text]
    assert len(sleeps) == 1, [t.text for t in tasks]  # PRE and POST are one entry
    assert sleeps[0].find_element(By.CSS_SELECTOR, "[data-test=event-duration]").text.endswith("s")
    assert "running" not in sleeps[0].get_attribute("class")
    assert driver.find_elements(By.CSS_SELECTOR, "#events li.ev-process_status")


def test_stop_a_running_process(driver, admin):
    pid = start_process(admin, SUSPENDS)
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s" % pid)
    wait_ready(driver, "process")
    assert driver.find_element(By.ID, "process-status").text == "SUSPENDED"
    wait_css(driver, "[data-event=go]")  # the event it waits for, as a resume button
    click_css(driver, "#process-stop")
    wait_css(driver, "[data-test=confirm-yes]").click()  # it asks first
    wait_until(driver, lambda d: d.find_element(By.ID, "process-status").text == "CANCELLED", "CANCELLED")
    assert not driver.find_elements(By.ID, "process-stop")
    assert status(admin, pid)["status"] == "CANCELLED"


def test_stop_refused_shows_the_servers_message(driver, admin, new_user):
    other = new_user(password="Other-pass-123")
    pid = start_process(admin, SUSPENDS)
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, other.username, "Other-pass-123")
    driver.get(driver.base_url + "/#/process/%s" % pid)
    page = wait_css(driver, "main[data-ready]")
    if page.get_attribute("data-ready") == "process":  # may read it: the stop is refused
        click_css(driver, "#process-stop")
        wait_css(driver, "[data-test=confirm-yes]").click()
        assert wait_css(driver, "#process-action-error").text
    assert status(admin, pid)["status"] == "SUSPENDED"
    resume(admin, pid)


def test_restore_a_checkpoint(driver, admin):
    pid = start_process(admin, STEPS)
    assert wait_process(admin, pid)["status"] == "FINISHED"
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/checkpoints" % pid)
    wait_ready(driver, "process")
    row = wait_css(driver, "#checkpoints tr[data-name=middle]")
    row.find_element(By.CSS_SELECTOR, "[data-test=restore]").click()
    ask = wait_css(driver, "#checkpoints [data-test=confirm]")  # it asks first, saying what happens
    assert "runs again" in ask.text
    ask.find_element(By.CSS_SELECTOR, "[data-test=confirm-yes]").click()
    assert "Restored from checkpoint" in wait_css(driver, "#process-action-ok").text
    wait_for(lambda: "restored from checkpoint 'middle'" in admin.get("/api/v1/process/%s/log" % pid).text.lower())
    hist = [h["status"] for h in status(admin, pid, include="history")["statusHistory"]]
    assert hist.count("RESUMING") == 1, hist
    wait_until(driver, lambda d: d.find_element(By.ID, "process-status").text == "FINISHED"
               and d.find_elements(By.CSS_SELECTOR, "[data-test=restore]"), "FINISHED again, restorable")
    assert not driver.find_elements(By.ID, "process-action-error")


def test_process_pages_fit_a_phone(driver, admin):
    pid = start_process(admin, STEPS, parts={"tags": "phone"})
    wait_process(admin, pid)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    phone(driver)
    for page, hash_ in (("processes", "#/processes"), ("process", "#/process/%s" % pid),
                        ("process", "#/process/%s/log" % pid), ("process", "#/process/%s/events" % pid)):
        driver.get(driver.base_url + "/" + hash_)
        wait_ready(driver, page)
        width = driver.execute_script("return document.documentElement.scrollWidth")
        inner = driver.execute_script("return window.innerWidth")
        assert width <= inner, (hash_, width, inner)


def test_details_out_variables_and_attachments(driver, admin):
    flow = '\nconfiguration:\n  arguments:\n    answer: 42\nflows:\n  default:\n    - log: "x"\n'
    pid = start_process(admin, flow, parts={"out": "answer", "tags": "t1,t2"})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s" % pid)
    wait_ready(driver, "process")
    assert '"answer": 42' in driver.find_element(By.ID, "process-out").text
    assert driver.find_element(By.ID, "process-initiator").text == "admin"
    assert "t1, t2" in driver.find_element(By.ID, "main").text
    assert not driver.find_elements(By.ID, "process-stop")  # a finished process cannot be stopped
    click_css(driver, "#tab-attachments")
    wait_ready(driver, "process")
    link = wait_css(driver, "#attachments a[data-name='out.json']")
    body = driver.execute_script("return fetch(arguments[0].href).then((r) => r.text())", link)
    assert '"answer"' in body and "42" in body


PARENT = """
flows:
  default:
    - task: concord
      in:
        action: start
        payload: child
        sync: true
        tags: [kid]
      out: job
"""


def test_children_link_to_their_pages(driver, admin):
    child_flow = b'\nflows:\n  default:\n    - log: "child here"\n'
    pid = start_process(admin, PARENT, files={"child/concord.yml": child_flow})
    assert wait_process(admin, pid)["status"] == "FINISHED", admin.get("/api/v1/process/%s/log" % pid).text
    kids = admin.get("/api/v1/process/%s/subprocess" % pid).json()
    assert len(kids) == 1
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/children" % pid)
    wait_ready(driver, "process")
    row = wait_css(driver, "#children tr[data-id='%s']" % kids[0]["instanceId"])
    assert "FINISHED" in row.text and "kid" in row.text
    row.find_element(By.CSS_SELECTOR, "a").click()
    wait_until(driver, lambda d: d.current_url.endswith("#/process/%s" % kids[0]["instanceId"]), "the child's page")
    wait_ready(driver, "process")
    # and back to the parent from the child's details (the page may render them again
    # meanwhile: a clean-clone run clicked a replaced link)
    click_css(driver, "a[href='#/process/%s']" % pid)
    wait_until(driver, lambda d: d.current_url.endswith("#/process/%s" % pid), "the parent's page")
