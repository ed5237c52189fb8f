"""The console's "Log in with SSO" (issue 30 part 2): shown only when the server has an OpenID
provider, and a click logs in through the provider (tests/api/oidc_provider.py) into the
console with the user it names."""
import os
import socket

import pytest
from selenium.webdriver.common.by import By

from conftest import Server, unique, wait_css, wait_ready, wait_until

from oidc_provider import Provider

SECRET = "s3cret-client"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sso_server():
    provider = Provider(client_secret=SECRET).start()
    port = free_port()
    srv = Server(env={"ACCORD_OIDC_CLIENT_SECRET": SECRET},
                 args=["--listen", "127.0.0.1:%d" % port, "--oidc-discovery-url", provider.url, "--oidc-client-id",
                       "accord", "--oidc-redirect-url",
                       "http://127.0.0.1:%d/api/service/oidc/callback" % port]).start()
    yield srv, provider
    srv.cleanup()
    provider.stop()


def test_no_sso_button_without_a_provider(driver):
    driver.get(driver.base_url + "/#/login")
    wait_ready(driver, "login")
    assert wait_css(driver, "#login-sso").get_attribute("hidden") is not None
    assert not driver.find_element(By.ID, "login-sso-button").is_displayed()


def test_log_in_with_sso(driver, sso_server):
    srv, provider = sso_server
    email = unique("sso") + "@example.org"
    provider.user = {"email": email, "name": "Sso User", "groups": []}
    driver.get(srv.url + "/#/login")
    wait_ready(driver, "login")
    button = wait_css(driver, "#login-sso-button")
    wait_until(driver, lambda d: button.is_displayed(), "the SSO button shows")
    button.click()
    wait_ready(driver, "processes")
    assert wait_css(driver, "#current-user").text == "Sso User"  # the display name from the token
