"""The console for an operator (issue 28 items 1, 2, 3, 9): a log that opens at its end,
follows, lets go when scrolled up and can be searched, with its times in the user's zone;
failures that explain themselves; actions that ask first and say what happened; statuses
that read at a glance, error pages with a way back, a logged-out header without
navigation and a visible focus ring."""
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.action_chains import ActionChains

from conftest import (click_css, ADMIN_PASSWORD, login, phone, sign_in, start_process, wait_css, wait_process, wait_ready,
                      wait_until)
from proc_util import status

MANY = "configuration:\n  arguments:\n    many: [%s]\n" % ", ".join(str(i) for i in range(400))

# 400 lines, a wait for "one", 400 more, a wait for "two", 400 more.
IN_PARTS = MANY + """
flows:
  default:
    - task: log
      in: {msg: "first ${item}"}
      loop:
        items: ${many}
    - suspend: one
    - task: log
      in: {msg: "second ${item}"}
      loop:
        items: ${many}
    - suspend: two
    - task: log
      in: {msg: "third ${item}"}
      loop:
        items: ${many}
    - log: "THE END"
"""

FAILS_IN_TASK = """
flows:
  default:
    - log: "before the failure"
    - call: inner
  inner:
    - log: "in inner"
    - task: sleep
      in: {duration: "abc"}
"""

THROWS = """
flows:
  default:
    - log: "before the throw"
    - call: deeper
  deeper:
    - throw: "the deploy went wrong"
"""

SUSPENDS = """
flows:
  default:
    - log: "waiting"
    - suspend: go
"""


def resume(client, pid, event):
    r = client.post("/api/v1/process/%s/resume/%s" % (pid, event), json={})
    assert r.status_code == 200, r.text


def last_line_visible(d):
    """The last whole line of #log is inside both the log's box and the window."""
    return d.execute_script("""
        const log = document.getElementById('log');
        const lines = log.querySelectorAll('.log-line:not(.partial)');
        const last = lines[lines.length - 1];
        if (!last) return false;
        const r = last.getBoundingClientRect(), b = log.getBoundingClientRect();
        return r.bottom <= b.bottom + 2 && r.top >= b.top - 2 && r.bottom <= innerHeight && r.top >= 0;""")


def log_text(d):
    return d.find_element(By.ID, "log").text


def open_log(driver, pid, query=""):
    driver.get(driver.base_url + "/#/process/%s/log%s" % (pid, query))
    wait_ready(driver, "process")
    return wait_css(driver, "#log")


def suspended_log(driver, admin):
    """An IN_PARTS process waiting for "one", its log open with the first part shown."""
    pid = start_process(admin, IN_PARTS)
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    open_log(driver, pid)
    wait_until(driver, lambda d: "first 399" in log_text(d), "the first part")
    return pid


def test_the_log_opens_at_its_end_follows_and_lets_go_when_scrolled_up(driver, admin):
    pid = suspended_log(driver, admin)
    wait_until(driver, last_line_visible, "the end of the log in view when it opens")
    follow = driver.find_element(By.ID, "log-follow")
    assert not follow.is_displayed()

    # it follows what is written while it is open
    resume(admin, pid, "one")
    wait_until(driver, lambda d: "second 399" in log_text(d), "the lines written after the page opened")
    wait_until(driver, last_line_visible, "the new end in view")
    assert not follow.is_displayed()

    # scrolled up, it stays where the user is and offers the way back
    driver.execute_script("document.getElementById('log').scrollTop = 0")
    wait_until(driver, lambda d: follow.is_displayed(), "the jump-to-end button")
    resume(admin, pid, "two")
    wait_until(driver, lambda d: "THE END" in log_text(d), "the last lines")
    assert driver.execute_script("return document.getElementById('log').scrollTop") < 50
    follow.click()
    wait_until(driver, last_line_visible, "the end after jumping to it")
    assert not follow.is_displayed()
    assert status(admin, pid)["status"] == "FINISHED"


def test_log_times_follow_the_chosen_zone_and_the_log_can_be_searched(driver, admin):
    pid = suspended_log(driver, admin)
    driver.execute_script("document.getElementById('log-zone').value = 'UTC';"
                          "document.getElementById('log-zone').dispatchEvent(new Event('change'))")
    stamp = driver.find_element(By.CSS_SELECTOR, "#log time.log-ts")
    iso = stamp.get_attribute("datetime")  # 2026-11-27T02:43:42.160Z
    assert stamp.text == iso[:10] + " " + iso[11:23], (stamp.text, iso)
    assert driver.find_element(By.ID, "log").get_attribute("data-zone") == "UTC"
    # remembered: a reload shows UTC again
    driver.refresh()
    open_log(driver, pid)
    wait_until(driver, lambda d: d.find_element(By.ID, "log-zone").get_attribute("value") == "UTC", "UTC kept")
    stamp = wait_css(driver, "#log time.log-ts")
    assert stamp.text == stamp.get_attribute("datetime")[:10] + " " + stamp.get_attribute("datetime")[11:23]

    box = driver.find_element(By.ID, "log-search")
    box.send_keys("first 12", Keys.ENTER)  # first 12, first 120 … first 129: 11 lines
    count = driver.find_element(By.ID, "log-search-count")
    wait_until(driver, lambda d: count.text == "11 of 11", "the last of 11 matches")
    current = driver.find_element(By.CSS_SELECTOR, "#log .log-line.current")
    assert current.text.endswith("first 129")
    assert driver.find_element(By.ID, "log-follow").is_displayed()  # searching let go of the end
    box.send_keys(Keys.ENTER)  # past the last: back to the first
    wait_until(driver, lambda d: count.text == "1 of 11", "the first match")
    assert driver.find_element(By.CSS_SELECTOR, "#log .log-line.current").text.endswith("first 12")
    assert driver.execute_script("""const c = document.querySelector('#log .log-line.current').getBoundingClientRect();
        const b = document.getElementById('log').getBoundingClientRect();
        return c.top >= b.top && c.bottom <= b.bottom""")
    click_css(driver, "#log-search-prev")
    wait_until(driver, lambda d: count.text == "11 of 11", "back to the last")
    box.clear()
    box.send_keys("no such text", Keys.ENTER)
    wait_until(driver, lambda d: count.text == "no match", "no match")
    assert admin.delete("/api/v1/process/%s" % pid).status_code in (200, 204)


def failed_page(driver, admin, flow, tab=""):
    """A process of flow, FAILED, its page open on tab; returns its banner's
    (message, flow, step) and the banner."""
    pid = start_process(admin, flow)
    assert wait_process(admin, pid)["status"] == "FAILED"
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s%s" % (pid, tab))
    wait_ready(driver, "process")
    banner = wait_css(driver, "#process-failure")
    said = tuple(banner.find_element(By.CSS_SELECTOR, "[data-test=failure-%s]" % k).text
                 for k in ("message", "flow", "step"))
    return said, banner


def test_a_failed_task_explains_itself(driver, admin):
    said, banner = failed_page(driver, admin, FAILS_IN_TASK)
    assert said == ("'duration' must be a number of seconds >= 0", "inner", "concord.yml:8:7")
    # the link goes to that line of the log
    banner.find_element(By.ID, "failure-log-link").click()
    wait_until(driver, lambda d: "/log?find=" in d.current_url, "the log page")
    wait_ready(driver, "process")
    current = wait_css(driver, "#log .log-line.current")
    assert "[ERROR]" in current.text and "line: 8, col: 7" in current.text
    assert "level-ERROR" in current.get_attribute("class")
    # the events mark the step, and the FAILED status is red
    click_css(driver, "#tab-events")
    wait_ready(driver, "process")
    step = wait_css(driver, "#events #failing-step")
    assert "Task: sleep" in step.text and "Failed here" in step.text
    assert "must be a number" in step.text
    failed = driver.find_element(By.CSS_SELECTOR, "#events li.st-FAILED .status")
    assert failed.text == "FAILED"
    r, g, b = rgb(failed.value_of_css_property("color"))
    assert r > 120 and g < 80 and b < 80, failed.value_of_css_property("color")


def test_a_throw_explains_itself_with_its_place(driver, admin):
    said, _ = failed_page(driver, admin, THROWS, "/events")
    assert said == ("the deploy went wrong", "deeper", "concord.yml:7:7")
    step = wait_css(driver, "#events #failing-step")  # the throw leaves no event: an entry of its own
    assert "the deploy went wrong" in step.text and "concord.yml:7:7" in step.text
    phone(driver)  # the banner and the log's bar fit a phone
    for tab in ("/events", "/log"):
        driver.get(driver.current_url.rsplit("/", 1)[0] + tab)
        wait_ready(driver, "process")
        assert driver.execute_script("return document.documentElement.scrollWidth <= innerWidth"), tab


def rgb(css):
    """'rgba(161, 29, 18, 1)' → (161, 29, 18)"""
    return tuple(int(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])


def test_the_list_shows_and_filters_by_flow_and_duration(driver, admin):
    tag = "flowcol"
    other = "flows:\n  default:\n    - log: x\n  other:\n    - log: y\n"
    a = start_process(admin, other, parts={"tags": tag})
    b = start_process(admin, other, parts={"tags": tag, "entryPoint": "other"})
    for pid in (a, b):
        assert wait_process(admin, pid)["status"] == "FINISHED"
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/processes?tags=" + tag)
    wait_ready(driver, "processes")
    row = wait_css(driver, "tr[data-id='%s']" % b)
    assert row.find_element(By.CSS_SELECTOR, "[data-test=flow]").text == "other"
    assert row.find_element(By.CSS_SELECTOR, "[data-test=duration]").text.endswith("s")
    heads = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "#process-list thead th")]
    assert "Flow" in heads and "Duration" in heads
    driver.find_element(By.ID, "filter-flow").send_keys("other")
    click_css(driver, "#filter-apply")
    wait_until(driver, lambda d: "flow=other" in d.current_url, "the flow filter in the address")
    wait_ready(driver, "processes")
    wait_css(driver, "tr[data-id='%s']" % b)
    assert not driver.find_elements(By.CSS_SELECTOR, "tr[data-id='%s']" % a)
    # no process of this flow ran longer than an hour: the empty state says what to do
    driver.get(driver.base_url + "/#/processes?tags=%s&flow=other&minDuration=60" % tag)
    wait_ready(driver, "processes")
    empty = wait_css(driver, "[data-test=processes-empty]")
    assert "Clear the filters" in empty.text
    assert not driver.find_elements(By.CSS_SELECTOR, "tr[data-id='%s']" % b)


def test_stop_asks_first_and_says_what_happened(driver, admin):
    pid = start_process(admin, SUSPENDS)
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s" % pid)
    wait_ready(driver, "process")
    click_css(driver, "#process-stop")
    ask = wait_css(driver, "[data-test=confirm]")
    assert "CANCELLED" in ask.text and "cannot be resumed" in ask.text
    ask.find_element(By.CSS_SELECTOR, "[data-test=confirm-no]").click()  # Cancel keeps it running
    wait_css(driver, "#process-stop")
    assert status(admin, pid)["status"] == "SUSPENDED"
    click_css(driver, "#process-stop")
    wait_css(driver, "[data-test=confirm-yes]").click()
    ok = wait_css(driver, "#process-action-ok")
    assert "cancelled" in ok.text
    wait_until(driver, lambda d: d.find_element(By.ID, "process-status").text == "CANCELLED", "CANCELLED")
    assert status(admin, pid)["status"] == "CANCELLED"


def test_a_refused_stop_says_why_in_plain_words(driver, admin, new_user):
    other = new_user(password="Other-pass-123", roles=["concordSystemReader"])
    pid = start_process(admin, SUSPENDS)
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, other.username, "Other-pass-123")
    driver.get(driver.base_url + "/#/process/%s" % pid)
    wait_ready(driver, "process")
    click_css(driver, "#process-stop")
    wait_css(driver, "[data-test=confirm-yes]").click()
    err = wait_css(driver, "#process-action-error")
    assert err.text.startswith("You are not allowed to stop this process"), err.text
    assert status(admin, pid)["status"] == "SUSPENDED"
    resume(admin, pid, "go")


def test_statuses_read_at_a_glance(driver, admin):
    pid = start_process(admin, SUSPENDS, parts={"tags": "pills"})
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/processes")
    wait_ready(driver, "processes")
    looks = driver.execute_script("""
        const out = {};
        for (const s of ['NEW', 'PREPARING', 'ENQUEUED', 'WAITING', 'STARTING', 'RUNNING', 'SUSPENDED', 'RESUMING',
                         'FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT']) {
          const el = document.createElement('span');
          el.className = 'status ' + s;
          el.textContent = s;
          document.getElementById('main').append(el);
          const cs = getComputedStyle(el), icon = getComputedStyle(el, '::before').content;
          out[s] = [icon, cs.color + '|' + cs.backgroundColor];
          el.remove();
        }
        return out;""")
    icons = [v[0] for v in looks.values()]
    assert all(i not in ("none", "normal", '""') for i in icons), looks
    assert len(set(icons)) == len(icons), looks  # an icon of its own for each status
    assert looks["SUSPENDED"][1] != looks["CANCELLED"][1], looks
    assert looks["FAILED"][1] != looks["FINISHED"][1], looks
    # the process page is titled by what it runs, not a bare id
    driver.get(driver.base_url + "/#/process/%s" % pid)
    wait_ready(driver, "process")
    assert driver.find_element(By.ID, "process-title").text == "default"  # no project: the entry point
    assert "default" in driver.title and pid not in driver.title
    resume(admin, pid, "go")


def test_not_found_pages_have_a_heading_and_a_way_back(driver, admin):
    sign_in(driver, "admin", ADMIN_PASSWORD)
    for hash_, heading in (("#/no/such/page", "Page not found"),
                           ("#/process/00000000-0000-0000-0000-000000000000", "Not found")):
        driver.get(driver.base_url + "/" + hash_)
        wait_ready(driver, "error")
        assert driver.find_element(By.CSS_SELECTOR, "main h1").text == heading
        assert driver.find_element(By.CSS_SELECTOR, "[data-test=error-back]").is_displayed()
    click_css(driver, "[data-test=error-home]")
    wait_ready(driver, "processes")


def test_the_logged_out_header_has_no_navigation(driver):
    driver.get(driver.base_url + "/#/processes")
    wait_ready(driver, "login")
    assert not driver.find_element(By.ID, "nav").is_displayed()
    login(driver, "admin", ADMIN_PASSWORD)
    assert driver.find_element(By.ID, "nav").is_displayed()
    click_css(driver, "#logout")
    wait_ready(driver, "login")
    assert not driver.find_element(By.ID, "nav").is_displayed()


def luminance(c):
    def ch(v):
        v = v / 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    r, g, b = c
    return 0.2126 * ch(r) + 0.7152 * ch(g) + 0.0722 * ch(b)


def contrast(a, b):
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_the_focus_ring_stands_out(driver):
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/processes")
    wait_ready(driver, "processes")
    # by keyboard, as :focus-visible needs: Tab from the start of the page
    for css, behind in (("#filter-apply", "html"), ("header.top .brand", "header.top")):
        driver.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
        target = driver.find_element(By.CSS_SELECTOR, css)
        for _ in range(400):  # the rows' links and selection boxes come first when it wraps
            ActionChains(driver).send_keys(Keys.TAB).perform()
            if driver.execute_script("return document.activeElement === arguments[0]", target):
                break
        assert driver.execute_script("return document.activeElement === arguments[0]", target), css
        ring = target.value_of_css_property("outline-color")
        assert target.value_of_css_property("outline-style") != "none", css
        assert float(target.value_of_css_property("outline-width").rstrip("px")) >= 2, css
        bg = driver.find_element(By.CSS_SELECTOR, behind).value_of_css_property("background-color")
        assert contrast(rgb(ring), rgb(bg)) >= 3, (css, ring, bg)


def test_the_banner_appears_when_a_watched_process_fails(driver, admin):
    pid = start_process(admin, 'flows:\n  default:\n    - suspend: go\n    - throw: "late failure"\n')
    wait_process(admin, pid, ("SUSPENDED",))
    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/process/%s" % pid)
    wait_ready(driver, "process")
    assert not driver.find_elements(By.ID, "process-failure")
    resume(admin, pid, "go")
    banner = wait_css(driver, "#process-failure")
    assert banner.find_element(By.CSS_SELECTOR, "[data-test=failure-message]").text == "late failure"
    assert driver.find_element(By.ID, "process-status").text == "FAILED"
