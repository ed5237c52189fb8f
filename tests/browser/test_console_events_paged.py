"""The Events tab of a process with 10,000 task calls (20,000 events): read in pages
(`limit`/`fromId` of GET /api/v1/process/{id}/event), at most a window of pages in the
page at once; scrolling to the end or **Later events** loads the next page and drops the
first, **Earlier events** goes back; the failing step is marked once the last page is
shown."""
from selenium.webdriver.common.by import By

from conftest import click_css, ADMIN_PASSWORD, sign_in, start_process, wait_css, wait_process, wait_ready, wait_until

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
# Clicks "Later events" until it is hidden; after each click waits (up to 20 s) until the last
# task call shown is a later one or the button is hidden.  Calls done([clicks, the most nodes
# in #events after a click]), or done([-1, what]) when a click led nowhere.
WALK = """
const done = arguments[arguments.length - 1];
const later = document.getElementById('events-later');
const last = () => { const s = document.querySelectorAll('#events li.ev-task'); return s.length ? +s[s.length - 1].dataset.seq : -1; };
const nodes = () => document.querySelectorAll('#events *').length;
let clicks = 0, most = 0;
function step() {
  if (later.hidden || !later.offsetParent || clicks >= 200) return done([clicks, most]);
  const before = last(), until = Date.now() + 20000;
  later.click();
  clicks++;
  (function wait() {
    if (last() > before || later.hidden || !later.offsetParent) { most = Math.max(most, nodes()); return setTimeout(step, 0); }
    if (Date.now() > until) return done([-1, 'no page after ' + before + ' (click ' + clicks + ')']);
    setTimeout(wait, 20);
  })();
}
step();
"""


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
    click_css(driver, "#events-earlier")
    wait_until(driver, lambda d: d.execute_script(SEQS)[0] < top, "the page before")
    back = driver.execute_script(SEQS)
    assert back == sorted(back) and len(back) == len(set(back))
    assert driver.execute_script(NODES) < 6000

    # the later button walks to the end, where the failing step is marked: clicked in the
    # page until it is hidden, each click awaited there (the next page shown or the button
    # gone), the window's size noted after each (~100 pages: a WebDriver round trip per step
    # cost more of Chromium's CPU than the step itself)
    driver.set_script_timeout(600)
    try:
        steps, most = driver.execute_async_script(WALK)
    finally:
        driver.set_script_timeout(30)
    assert 0 < steps < 200, (steps, most)
    assert most < 6000, most
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
