"""The console as files: served by `accord serve` with its headers, cacheable, gzipped, no
inline script; loads in Chromium without errors; fits a phone; never shows a secret."""
import gzip
import re

import requests
from conftest import ADMIN_PASSWORD, console_errors, login, navigate, phone, sign_in, unique, wait_ready
from selenium.webdriver.common.by import By

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
IMMUTABLE = "public, max-age=31536000, immutable"


def assert_console_headers(r):
    assert r.headers.get("Content-Security-Policy") == CSP, r.headers
    assert r.headers.get("X-Content-Type-Options") == "nosniff", r.headers
    assert r.headers.get("Referrer-Policy") == "same-origin", r.headers


def index(server):
    r = requests.get(server.url + "/", timeout=10)
    assert r.status_code == 200, r.text
    return r


def asset_urls(html):
    """The files index.html loads: every src= and href= that is not a page link."""
    return [u for u in re.findall(r'(?:src|href)="([^"#]+)"', html) if not u.startswith("#")]


def test_index_has_csp_and_no_inline_script(server):
    r = index(server)
    assert r.headers["Content-Type"].startswith("text/html"), r.headers
    assert r.headers.get("Cache-Control") == "no-cache", r.headers
    assert_console_headers(r)
    html = r.text
    assert "@ASSETS@" not in html
    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, re.S | re.I)
    assert scripts, "index.html loads no script"
    for attrs, body in scripts:
        assert 'src="' in attrs and not body.strip(), "inline script in index.html: %r" % body[:200]
    assert not re.search(r"\son[a-z]+\s*=", html, re.I), "an inline event handler in index.html"
    assert not re.search(r"\sstyle\s*=", html, re.I), "an inline style attribute in index.html"
    assert not re.search(r"<style\b", html, re.I), "an inline <style> in index.html"
    assert not re.search(r"(?:src|href)=\"(?:https?:)?//", html), "index.html loads something from elsewhere"


def test_assets_have_hashed_urls_and_are_cacheable(server):
    html = index(server).text
    urls = asset_urls(html)
    assert len(urls) >= 3, urls
    prefixes = {re.match(r"^(/assets/[0-9a-f]{16})/", u).group(1) if re.match(r"^/assets/[0-9a-f]{16}/", u) else u
                for u in urls}
    assert len(prefixes) == 1, "every file under one /assets/<hash>/ prefix: %s" % urls
    for u in urls:
        r = requests.get(server.url + u, headers={"Accept-Encoding": "identity"}, timeout=10)
        assert r.status_code == 200, (u, r.status_code)
        assert r.headers.get("Cache-Control") == IMMUTABLE, (u, r.headers)
        assert_console_headers(r)
        etag = r.headers.get("ETag")
        assert etag and etag.startswith('"'), (u, r.headers)
        assert "Content-Encoding" not in r.headers
        again = requests.get(server.url + u, headers={"Accept-Encoding": "identity", "If-None-Match": etag},
                             timeout=10)
        assert again.status_code == 304 and again.content == b"", (u, again.status_code)
        head = requests.head(server.url + u, headers={"Accept-Encoding": "identity"}, timeout=10)
        assert head.status_code == 200 and head.content == b"", u
        assert head.headers.get("Content-Length") == str(len(r.content)), (u, head.headers)
    js = [u for u in urls if u.endswith(".js")][0]
    assert requests.get(server.url + js, timeout=10).headers["Content-Type"].startswith("text/javascript")


def test_wrong_hash_and_unknown_files_are_404(server):
    js = [u for u in asset_urls(index(server).text) if u.endswith("/app.js")][0]
    good = js.rsplit("/app.js", 1)[0]
    for path in ("/assets/0123456789abcdef/app.js", good + "/no-such-file.js", good + "/index.html",
                 good + "/../app.js", "/assets/" + "/app.js", good + "/"):
        r = requests.get(server.url + path, timeout=10)
        assert r.status_code == 404, (path, r.status_code, r.text[:200])
    r = requests.get(server.url + "/assets/0123456789abcdef/app.js", timeout=10)
    assert r.json()["ok"] is False and "console" in r.json()["message"]
    assert_console_headers(r)


def test_gzip_when_accepted(server):
    js = [u for u in asset_urls(index(server).text) if u.endswith("/app.js")][0]
    plain = requests.get(server.url + js, headers={"Accept-Encoding": "identity"}, timeout=10)
    for accept in ("gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", "*"):
        r = requests.get(server.url + js, headers={"Accept-Encoding": accept}, stream=True, timeout=10)
        raw = r.raw.read(decode_content=False)
        assert r.headers.get("Content-Encoding") == "gzip", (accept, r.headers)
        assert r.headers.get("Vary") == "Accept-Encoding", r.headers
        assert len(raw) < len(plain.content), accept
        assert gzip.decompress(raw) == plain.content, accept
        assert r.headers["ETag"] != plain.headers["ETag"], "one ETag per representation"
    for accept in ("identity", "gzip;q=0", "deflate, br", "gzip;q=0.000"):
        r = requests.get(server.url + js, headers={"Accept-Encoding": accept}, stream=True, timeout=10)
        assert "Content-Encoding" not in r.headers, (accept, r.headers)
        assert r.raw.read(decode_content=False) == plain.content, accept
        assert r.headers.get("Vary") == "Accept-Encoding", r.headers
    r = requests.get(server.url + "/", headers={"Accept-Encoding": "gzip"}, stream=True, timeout=10)
    assert r.headers.get("Content-Encoding") == "gzip" and gzip.decompress(r.raw.read(decode_content=False))


def test_favicon(server):
    r = requests.get(server.url + "/favicon.ico", timeout=10)
    assert r.status_code == 200, r.status_code
    assert r.headers["Content-Type"] == "image/svg+xml"
    assert b"<svg" in r.content
    assert_console_headers(r)
    html = index(server).text
    assert re.search(r'<link rel="icon" href="/assets/[0-9a-f]{16}/favicon\.svg"', html)


def only_expected(errors):
    """A not-logged-in whoami answers 401, which Chromium logs as a failed request."""
    return [e for e in errors if not ("/api/service/console/whoami" in e["message"] and "401" in e["message"])]


def test_console_loads_without_errors(driver, server):
    driver.get(server.url + "/")
    wait_ready(driver, "login")
    assert only_expected(console_errors(driver)) == []
    login(driver, "admin", ADMIN_PASSWORD)
    driver.get(server.url + "/#/processes")
    wait_ready(driver, "processes")
    assert console_errors(driver) == []
    origins = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => new URL(e.name).origin)")
    assert set(origins) <= {server.url}, origins
    version = driver.find_element(By.CSS_SELECTOR, "#version").text
    assert version, "no version in the footer"


def no_horizontal_scroll(driver):
    return driver.execute_script(
        "const d = document.documentElement; return [d.scrollWidth, d.clientWidth, document.body.scrollWidth];")


def visit(driver, server, hash_path, page):
    driver.get("about:blank")
    driver.get(server.url + "/" + hash_path)
    wait_ready(driver, page)


def test_layout_fits_a_phone(driver, server):
    phone(driver)
    visit(driver, server, "#/login", "login")
    scroll, width, body = no_horizontal_scroll(driver)
    assert scroll <= width and body <= width, "login page scrolls sideways at 360 px: %s > %s" % (scroll, width)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    for hash_path, page in (("#/processes", "processes"), ("#/orgs", "orgs"), ("#/apikeys", "apikeys")):
        if page == "processes":
            visit(driver, server, hash_path, page)
        else:
            navigate(driver, hash_path, page)
        scroll, width, body = no_horizontal_scroll(driver)
        assert scroll <= width and body <= width, "%s scrolls sideways at 360 px: %s > %s" % (page, scroll, width)
    assert console_errors(driver) == []


def test_no_secret_value_in_page_html(driver, server, admin):
    org = unique("sorg")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    name, value = unique("sec"), "s3cret-" + unique("v")
    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, name), "type": (None, "data"),
                                                         "data": ("data", value.encode())})
    assert r.status_code == 200, r.text
    sign_in(driver, "admin", ADMIN_PASSWORD)
    pages = (("#/org/%s/secrets" % org, "secrets"), ("#/org/%s/secret/%s" % (org, name), "secret"),
             ("#/org/%s" % org, "org"), ("#/processes", "processes"))
    for hash_path, page in pages:
        if page == "secrets":
            visit(driver, server, hash_path, page)
        else:
            navigate(driver, hash_path, page)
        html = driver.page_source
        assert name in html or page not in ("secrets", "secret"), "the %s page does not show the secret's name" % page
        assert value not in html, "the secret's value is in the %s page" % page
        texts = driver.execute_script("return [...document.querySelectorAll('input, textarea')].map(e => e.value)")
        assert not any(value in t for t in texts), "the secret's value is in a field of the %s page" % page
    assert console_errors(driver) == []
