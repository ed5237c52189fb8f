"""Browser tests: a real `accord serve` (tests/api/conftest.py's Server and fixtures) and a
headless Chromium driven by Selenium, as a user of the console would.

Fixtures (besides server, fresh_server, admin, anon and new_user from tests/api/conftest.py)
  driver   a Chromium WebDriver at laptop size, with no cookies or storage of an earlier
           test; on failure the test's screenshot, page HTML and browser console log are
           saved under build/test-artifacts/browser/<test>/
Helpers
  login(driver, username, password)   through the console's login page
  sign_in(driver, username, password) the console's session cookie, got as the login page
                                      gets it, without loading a page (tests of other things)
  wait_ready(driver, page)            waits for main[data-ready="<page>"]
  phone(driver)                       switches the window to 360x740
  console_errors(driver)              the browser log's errors since the last call
  t(driver, name), texts(driver, name) the element / all texts with data-test=name
  visit(driver, "#/path", page)       loads a page afresh and waits until it is ready
  navigate(driver, "#/path", page)    moves the loaded console there as its links do (no load)
  go(driver, "#/path", page)          navigate when the console shows another page, else visit
  axe_serious(driver)                 axe-core's serious and critical violations on the page
Chromium, chromedriver and python3-selenium come from scripts/deps; without them every
test fails saying so (nothing is skipped).
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest
import requests

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
API = os.path.join(ROOT, "tests", "api")
ARTIFACTS = os.path.join(ROOT, "build", "test-artifacts", "browser")
TIMEOUT = 20

# tests/api/conftest.py under its own module name (this file is "conftest" too); its
# fixtures become ours by being names of this module.  tests/api on the path for proc_util.
_spec = importlib.util.spec_from_file_location("accord_api_conftest", os.path.join(API, "conftest.py"))
api_harness = importlib.util.module_from_spec(_spec)
sys.modules["accord_api_conftest"] = api_harness
_spec.loader.exec_module(api_harness)
sys.path.insert(0, API)
from accord_api_conftest import (  # noqa: E402,F401  (fixtures and helpers re-exported)
    ADMIN_KEY, ADMIN_PASSWORD, FINAL, Client, Server, admin, anon, fresh_server, new_user, process_log, server,
    start_process, unique, wait_process)

sys.path.insert(0, HERE)
from chromium import LAPTOP, PHONE, missing, new_browser  # noqa: E402

try:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait
except ImportError:
    pass  # pytest_sessionstart stops the run, naming what is missing


def pytest_sessionstart(session):
    if missing():
        pytest.exit("browser tests need %s: run scripts/deps" % ", ".join(missing()), returncode=1)
    shutil.rmtree(ARTIFACTS, ignore_errors=True)  # only this run's failures are left there


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture(scope="session")
def browser():
    """One Chromium for the session (starting one costs a second); `driver` resets it."""
    d = new_browser(LAPTOP)
    yield d
    d.quit()


def _save_artifacts(d, name):
    folder = os.path.join(ARTIFACTS, name)
    os.makedirs(folder, exist_ok=True)
    d.save_screenshot(os.path.join(folder, "screenshot.png"))
    with open(os.path.join(folder, "page.html"), "w") as f:
        f.write(d.page_source)
    with open(os.path.join(folder, "console.log"), "w") as f:
        f.write("url: %s\n" % d.current_url)
        for entry in d.get_log("browser"):
            f.write(json.dumps(entry) + "\n")
    return folder


@pytest.fixture
def driver(browser, server, request):
    """The session's Chromium on a page of the server that is not the console (its favicon:
    the test's first page load is a whole one, and sign_in can set the server's cookie), with
    no cookies, no storage and an empty console log, at laptop size."""
    browser.get(server.url + "/favicon.ico")
    browser.delete_all_cookies()
    browser.execute_script("try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}")
    browser.set_window_size(*LAPTOP)
    browser.get_log("browser")
    browser.base_url = server.url
    browser.signed_in = False
    yield browser
    rep = getattr(request.node, "rep_call", None)
    if rep is None or rep.failed:
        name = request.node.nodeid.split("::", 1)[-1].replace("/", "_").replace("[", "-").rstrip("]")
        folder = _save_artifacts(browser, "%s.%s" % (request.node.module.__name__, name))
        sys.stderr.write("browser artifacts: %s\n" % folder)


def phone(d):
    """Switches the window to a phone's 360x740."""
    d.set_window_size(*PHONE)


def wait_css(d, css, timeout=TIMEOUT):
    """The first element matching css once it is there."""
    try:
        return WebDriverWait(d, timeout).until(EC.presence_of_element_located((By.CSS_SELECTOR, css)))
    except TimeoutException:
        raise AssertionError("no element %r on %s after %ss" % (css, d.current_url, timeout)) from None


def wait_ready(d, page, timeout=TIMEOUT):
    """Waits until the page has loaded: main[data-ready="<page>"]."""
    return wait_css(d, 'main[data-ready="%s"]' % page, timeout)


def wait_until(d, pred, what, timeout=TIMEOUT):
    """Waits until pred(driver) is true; fails naming what was awaited.  An element the page
    replaced while pred looked at it (stale) or has not made yet counts as "not yet"."""
    try:
        return WebDriverWait(d, timeout, ignored_exceptions=(StaleElementReferenceException,
                                                             NoSuchElementException)).until(lambda _: pred(d))
    except TimeoutException:
        raise AssertionError("%s: not after %ss on %s" % (what, timeout, d.current_url)) from None


def click_css(d, css, timeout=TIMEOUT):
    """Clicks the first element matching css once it is there; one that the page replaced
    between the look and the click (a re-render: stale) is looked up again."""
    wait_until(d, lambda _: d.find_element(By.CSS_SELECTOR, css).click() or True, "a click on %r" % css, timeout)


def login(d, username, password, base_url=None):
    """Logs in through the console's login page (#username, #password, #login) and waits
    for the page it leads to (main[data-ready]).  Tests of something else use sign_in."""
    d.get((base_url or d.base_url) + "/#/login")
    wait_css(d, "#username").clear()
    d.find_element(By.CSS_SELECTOR, "#username").send_keys(username)
    d.find_element(By.CSS_SELECTOR, "#password").clear()
    d.find_element(By.CSS_SELECTOR, "#password").send_keys(password)
    d.find_element(By.CSS_SELECTOR, "#login").click()
    wait_until(d, lambda x: "/login" not in x.current_url and x.find_elements(By.CSS_SELECTOR, "main[data-ready]"),
               "the console after logging in as %s" % username)


def sign_in(d, username, password, base_url=None):
    """Logs in as the console's login page does — whoami with Basic credentials and
    X-Concord-EnableSession: true — but from here, and hands the browser the session cookie
    the server set (HttpOnly, as the console keeps it).  No page is loaded: the test's next
    one is the user's.  For tests whose subject is not the login page (test_console_login
    drives that one): a login through the page cost ~0.4 CPU-s of Chromium, this ~0.01
    (bench/RESULTS.md "The browser suite's page loads")."""
    base = base_url or d.base_url
    r = requests.get(base + "/api/service/console/whoami", auth=(username, password),
                     headers={"X-Concord-EnableSession": "true"}, timeout=30)
    assert r.status_code == 200 and r.cookies.get("accord_session"), "signing in as %s: %s %s" % (
        username, r.status_code, r.text)
    if not d.current_url.startswith(base + "/"):
        d.get(base + "/favicon.ico")  # a cookie is set for the page's own host
    d.add_cookie({"name": "accord_session", "value": r.cookies["accord_session"], "path": "/", "httpOnly": True,
                  "sameSite": "Lax"})
    d.signed_in = True  # a console already loaded has the session before: go() loads the next page


def console_errors(d):
    """The browser log's SEVERE entries since the last call (a failed request shows up here
    too, e.g. a 404 for a module)."""
    return [e for e in d.get_log("browser") if e.get("level") == "SEVERE"]


def t(d, name):
    """The element with data-test=name (waiting for it)."""
    return wait_css(d, '[data-test="%s"]' % name)


def texts(d, name):
    """The text of every element with data-test=name, read in one go (no stale elements
    while a list is redrawn)."""
    return d.execute_script(
        "return [...document.querySelectorAll('[data-test=\"' + arguments[0] + '\"]')].map(e => e.textContent)", name)


def visit(d, hash_path, page):
    """Loads the page afresh (also when it is the current one) and waits until it is ready.
    From the console's own document a get would only change its hash: about:blank first."""
    url = d.base_url + "/" + hash_path
    if d.current_url.split("#")[0] == url.split("#")[0]:
        d.get("about:blank")
    d.get(url)
    d.signed_in = False
    wait_ready(d, page)


def navigate(d, hash_path, page):
    """Moves the loaded console to another page as its links do — a hash change, after which
    the router renders the page afresh into main, without loading the document again — and
    waits until the new page is ready.  The old page's content is marked first, so that a
    page of the same name (process → process/log) is not taken for the new one."""
    moved = d.execute_script("if (location.hash === arguments[0]) return false;"
                             "const m = document.getElementById('main'); delete m.dataset.ready;"
                             "m.prepend(Object.assign(document.createElement('span'), {className: 'test-leaving'}));"
                             "location.hash = arguments[0]; return true;", hash_path)
    assert moved, "navigate: the console is at %s already (visit reloads it)" % hash_path
    return wait_css(d, 'main[data-ready="%s"]:not(:has(.test-leaving))' % page)


def go(d, hash_path, page):
    """Opens the page as the console's own links do (navigate) when the console is showing
    another page of this server for the same session; otherwise loads it afresh (visit).  For
    moving on in a test; visit where the point is a reload (what was saved, a new user)."""
    here = d.current_url
    if (not getattr(d, "signed_in", False) and here.startswith(d.base_url + "/#/")
            and here != d.base_url + "/" + hash_path):
        return navigate(d, hash_path, page)
    return visit(d, hash_path, page)


AXE = os.path.join(HERE, "axe", "node_modules", "axe-core", "axe.min.js")
# axe.run without the rules that can report nothing worse than moderate (a rule's impact is
# the highest of its own and its checks': axe-core's metadata), as only serious and critical
# violations fail a test: 29 of axe-core 4.14's 105 rules, among them `region`, which walks
# the whole page.  The rest run as by default.  Calls done([rule, impact, help, [html…]]…).
AXE_RUN = """
const done = arguments[arguments.length - 1];
const bad = {serious: true, critical: true};
const checks = axe._audit.data.checks;
const worst = (r) => bad[r.impact] || ['any', 'all', 'none'].some(
  (k) => (r[k] || []).some((c) => bad[(checks[c.id || c] || {}).impact]));
const off = {};
for (const r of axe._audit.rules) if (!worst(r)) off[r.id] = {enabled: false};
if (!Object.keys(off).length || off['color-contrast'])
  return done([['axe-metadata', 'critical', 'no rule impacts in this axe-core: ' + Object.keys(off), []]]);
axe.run(document, {resultTypes: ['violations'], rules: off}).then((r) => done(r.violations.map((v) =>
  [v.id, v.impact, v.help, v.nodes.slice(0, 3).map((n) => n.html.slice(0, 160))])),
  (e) => done([['axe-error', 'critical', String(e), []]]));
"""


def axe_serious(d):
    """axe-core's serious and critical violations on the page as it is now, as (rule id,
    impact, help, the first offending nodes' HTML); axe-core from tests/browser/axe,
    installed by scripts/npm-deps (run here when it is missing)."""
    if not os.path.exists(AXE) and subprocess.run([os.path.join(ROOT, "scripts", "npm-deps")]).returncode != 0:
        pytest.fail("scripts/npm-deps could not install axe-core (needs npm: scripts/deps)")
    if not d.execute_script("return !!window.axe"):
        with open(AXE) as f:
            d.execute_script(f.read())
    return [v for v in d.execute_async_script(AXE_RUN) if v[1] in ("serious", "critical")]
