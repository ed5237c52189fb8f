"""The console's login page (#/login): password and API key, a wrong password, logging out,
and what another organization's user sees of the processes (issue 10)."""
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import (click_css, ADMIN_KEY, ADMIN_PASSWORD, login, start_process, unique, wait_css, wait_process,
                      wait_ready, wait_until)
from proc_util import make_org, make_project, make_team


def test_log_in_and_out(driver):
    driver.get(driver.base_url + "/#/processes")
    wait_ready(driver, "login")  # no session: the login page, with the way back
    assert "from=" in driver.current_url
    login(driver, "admin", ADMIN_PASSWORD)
    wait_ready(driver, "processes")
    assert driver.current_url.endswith("#/processes")
    assert wait_css(driver, "#current-user").text == "admin"
    click_css(driver, "#logout")
    wait_ready(driver, "login")
    assert not driver.find_elements(By.ID, "current-user")
    # the session is gone on the server too: a reload of a page asks whoami again
    driver.get(driver.base_url + "/#/processes")
    driver.refresh()
    wait_ready(driver, "login")


def test_wrong_password_is_said_and_nothing_opens(driver, new_user):
    user = new_user(password="Right-pass-123")
    driver.get(driver.base_url + "/#/login")
    wait_ready(driver, "login")
    driver.find_element(By.ID, "username").send_keys(user.username)
    driver.find_element(By.ID, "password").send_keys("wrong-pass")
    click_css(driver, "#login")
    err = wait_css(driver, "#login-error")
    assert "wrong username or password" in err.text.lower()
    assert err.get_attribute("role") == "alert"
    assert "#/login" in driver.current_url
    assert not driver.find_elements(By.ID, "current-user")
    # then the right one works from the same form
    driver.find_element(By.ID, "password").clear()
    driver.find_element(By.ID, "password").send_keys("Right-pass-123")
    click_css(driver, "#login")
    wait_ready(driver, "processes")
    assert wait_css(driver, "#current-user").text == user.username


def test_log_in_with_an_api_key_and_return_to_the_asked_page(driver, admin):
    pid = start_process(admin, '\nflows:\n  default:\n    - log: "hi"\n')
    wait_process(admin, pid)
    driver.get(driver.base_url + "/#/process/%s/log" % pid)
    wait_ready(driver, "login")
    click_css(driver, "#login-mode-apikey")
    driver.find_element(By.ID, "apikey").send_keys("not-a-key")
    click_css(driver, "#login")
    assert "not valid" in wait_css(driver, "#login-error").text
    driver.find_element(By.ID, "apikey").clear()
    driver.find_element(By.ID, "apikey").send_keys(ADMIN_KEY)
    click_css(driver, "#login")
    wait_ready(driver, "process")
    assert driver.current_url.endswith("#/process/%s/log" % pid)
    wait_until(driver, lambda d: "hi" in d.find_element(By.ID, "log").text, "the log")


def test_an_outsider_does_not_see_another_orgs_processes(driver, admin, new_user):
    owner = new_user(password="Owner-pass-123")
    outsider = new_user(password="Outsider-pass-123")
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, visibility="PRIVATE", rawPayloadMode="TEAM_MEMBERS")
    make_team(admin, org, [(owner, "MEMBER")], project=project, level="WRITER")
    tag = unique("secret-tag")
    pid = start_process(owner, '\nflows:\n  default:\n    - log: "private"\n',
                        parts={"org": org, "project": project, "tags": tag})
    wait_process(admin, pid)

    login(driver, outsider.username, "Outsider-pass-123")
    driver.get(driver.base_url + "/#/processes?tags=" + tag)
    wait_ready(driver, "processes")
    assert not driver.find_elements(By.CSS_SELECTOR, "tr[data-id='%s']" % pid)
    assert "no processes" in wait_css(driver, "#process-list-status").text.lower()
    driver.get(driver.base_url + "/#/process/%s" % pid)
    wait_ready(driver, "error")
    assert driver.find_element(By.CSS_SELECTOR, "main .notice.error").text
    assert "private" not in driver.page_source
    # its owner sees it
    click_css(driver, "#logout")
    wait_ready(driver, "login")
    login(driver, owner.username, "Owner-pass-123")
    driver.get(driver.base_url + "/#/processes?tags=" + tag)
    wait_ready(driver, "processes")
    wait_css(driver, "tr[data-id='%s']" % pid)


def test_log_in_with_the_keyboard_only(driver):
    driver.get(driver.base_url + "/#/login")
    wait_ready(driver, "login")
    focused = driver.switch_to.active_element
    assert focused.get_attribute("id") == "username"  # the page starts in the first field
    focused.send_keys("admin" + Keys.TAB)
    driver.switch_to.active_element.send_keys(ADMIN_PASSWORD + Keys.ENTER)
    wait_ready(driver, "processes")
    assert wait_css(driver, "#current-user").text == "admin"


def test_a_lost_session_leads_to_the_login_and_back(driver):
    login(driver, "admin", ADMIN_PASSWORD)
    driver.get(driver.base_url + "/#/processes?status=FINISHED")
    wait_ready(driver, "processes")
    driver.delete_all_cookies()  # as an expired session: the list's next poll is answered 401
    wait_ready(driver, "login")
    assert "from=" in driver.current_url
    driver.find_element(By.ID, "username").send_keys("admin")
    driver.find_element(By.ID, "password").send_keys(ADMIN_PASSWORD)
    click_css(driver, "#login")
    wait_ready(driver, "processes")
    assert driver.current_url.endswith("#/processes?status=FINISHED")
