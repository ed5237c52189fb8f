"""The Events tab of a process with 10,000 task calls (20,000 events): read in pages
(`limit`/`fromId` of GET /api/v1/process/{id}/event), at most a window of pages in the
page at once; scrolling to the end or **Later events** loads the next page and drops the
first, **Earlier events** goes back; the failing step is marked once the last page is
shown."""
from selenium.webdriver.common.by import By

from conftest import ADMIN_PASSWORD, sign_in, start_process, wait_css, wait_process, wait_ready, wait_until

CALLS = 10000
MANY = """
flows:
  default:
    - script: js
      body: "execution.setVariable('xs', Array.from({length: %d}, (_, i) => i));"
    - task: log
      in: {msg: "call ${item}"}
      withItems: ${xs}
    - throw: "the end"
""" % CALLS

NODES = "return document.querySelectorAll('#events *').length"
SEQS = "return [...document.querySelectorAll('#events li.ev-task')].map(li => +li.dataset.seq)"


def test_ten_thousand_task_calls_are_paged(driver, admin):
    pid = start_process(admin, MANY)
    assert wait_process(admin, pid, timeout=600)["status"] == "FAILED"
    events = admin.get("/api/v1/process/%s/event?type=ELEMENT&limit=-1" % pid).json()
    assert len(events) >= 2 * CALLS
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s/events" % pid)
    wait_ready(driver, "process")
    wait_css(driver, "#events li.ev-task")
    first = driver.execute_script(SEQS)
    assert 50 <= len(first) <= 200, len(first)  # one page, task calls paired
    assert driver.execute_script(NODES) < 3000
    assert not driver.find_element(By.ID, "events-earlier").is_displayed()
    assert not driver.find_elements(By.ID, "failing-step")  # on the last page only

    # scrolling to the end loads the next pages; the window stays bounded
    for _ in range(6):
        before = driver.execute_script(SEQS)[-1]
        driver.execute_script("document.getElementById('events-later').scrollIntoView()")
        wait_until(driver, lambda d: d.execute_script(SEQS)[-1] > before, "the next page after scrolling")
        assert driver.execute_script(NODES) < 6000
    seqs = driver.execute_script(SEQS)
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs))
    assert seqs[0] > first[-1]  # the first page was dropped
    assert driver.find_element(By.ID, "events-earlier").is_displayed()

    # Earlier goes back one page at a time
    top = seqs[0]
    driver.find_element(By.ID, "events-earlier").click()
    wait_until(driver, lambda d: d.execute_script(SEQS)[0] < top, "the page before")
    back = driver.execute_script(SEQS)
    assert back == sorted(back) and len(back) == len(set(back))
    assert driver.execute_script(NODES) < 6000

    # the later button walks to the end, where the failing step is marked
    for _ in range(200):
        later = driver.find_element(By.ID, "events-later")
        if not later.is_displayed():
            break
        last = driver.execute_script(SEQS)[-1]
        driver.execute_script("arguments[0].click()", later)
        wait_until(driver, lambda d: d.execute_script(SEQS)[-1] > last or
                   not d.find_element(By.ID, "events-later").is_displayed(), "the next page")
    wait_css(driver, "#failing-step")
    assert driver.find_elements(By.CSS_SELECTOR, "#events li.st-FAILED")
    assert driver.execute_script(NODES) < 6000
    tasks = driver.find_elements(By.CSS_SELECTOR, "#events li.ev-task.running")
    assert not tasks  # every PRE found its POST: pages never split a call

    # the address may ask for other pages: ?pageSize=50
    driver.get("about:blank")
    driver.get(driver.base_url + "/#/process/%s/events?pageSize=50" % pid)
    wait_ready(driver, "process")
    wait_css(driver, "#events li.ev-task")
    assert len(driver.find_elements(By.CSS_SELECTOR, "#events li.ev")) <= 50
