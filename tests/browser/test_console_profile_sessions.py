"""The profile page lists the user's console sessions (this browser's marked) and ends
one: the other browser is then logged out; ending this browser's own leads to the login."""
import base64

import requests
from selenium.webdriver.common.by import By

from conftest import login, t, texts, visit, wait_ready, wait_until

WHOAMI = "/api/service/console/whoami"


def other_browser(url, username, password):
    """A second login (another browser): its session cookie."""
    auth = "Basic " + base64.b64encode(("%s:%s" % (username, password)).encode()).decode()
    r = requests.get(url + WHOAMI, headers={"Authorization": auth, "X-Concord-EnableSession": "true"}, timeout=30)
    assert r.status_code == 200, r.text
    return r.cookies.get("accord_session")


def still_in(url, token):
    return requests.get(url + WHOAMI, cookies={"accord_session": token}, timeout=30).status_code == 200


def test_the_profile_lists_and_ends_sessions(driver, new_user):
    me = new_user(password="Sessions-pass-1")
    elsewhere = other_browser(driver.base_url, me.username, "Sessions-pass-1")
    login(driver, me.username, "Sessions-pass-1")
    visit(driver, "#/profile", "profile")
    wait_until(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "[data-test=session-end]")) == 2, "two sessions")
    assert texts(driver, "session-current") == ["this browser"]
    assert elsewhere not in driver.page_source

    # the other one: ended, that browser logged out, this one listed alone
    other = [b for b in driver.find_elements(By.CSS_SELECTOR, "[data-test=session-end]") if b.text == "End"]
    assert len(other) == 1
    other[0].click()
    wait_until(driver, lambda d: "Session ended" in "".join(texts(d, "session-result")), "the session ended")
    assert len(driver.find_elements(By.CSS_SELECTOR, "[data-test=session-end]")) == 1
    assert not still_in(driver.base_url, elsewhere)

    # this browser's own: to the login page, and the profile needs a login again
    t(driver, "session-end").click()
    wait_ready(driver, "login")
    driver.get(driver.base_url + "/#/profile")
    wait_ready(driver, "login")
