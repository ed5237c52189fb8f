"""Headless Chromium through Selenium, for the browser tests and bench/console.

new_browser(size) starts one (Debian's chromium and chromedriver, or $ACCORD_CHROMIUM and
$ACCORD_CHROMEDRIVER) with the browser console log recorded; missing() names what is not
installed (scripts/deps installs it)."""
import os
import shutil

CHROMIUM = os.environ.get("ACCORD_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("ACCORD_CHROMEDRIVER", "/usr/bin/chromedriver")
LAPTOP = (1366, 860)
PHONE = (360, 740)

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    SELENIUM_MISSING = None
except ImportError as e:
    SELENIUM_MISSING = "python3-selenium (%s)" % e


def missing():
    """What the browser tests need and this machine lacks (empty when nothing)."""
    return ([SELENIUM_MISSING] if SELENIUM_MISSING else []) + [p for p in (CHROMIUM, CHROMEDRIVER)
                                                               if not shutil.which(p)]


def new_browser(size=LAPTOP):
    o = webdriver.ChromeOptions()
    o.binary_location = CHROMIUM
    # Beyond headless: none of Chromium's background services (updates, sync, safe
    # browsing, translation, crash reports, metrics), which the console never needs —
    # 8–11% less CPU over two browser test files (bench/RESULTS.md "The test suites' CPU
    # by program").  Without the back-forward cache and site isolation, a page load reuses the
    # tab's renderer: with them, Chromium started a new renderer process for nearly every
    # navigation (about:blank and back to the console: 68 processes over 30 page visits, 8
    # without), which was ~40% of its CPU per visit (bench/RESULTS.md "The browser suite's and
    # the build's CPU").  The console is one origin and no test goes back across documents.
    for a in ("--headless=new", "--disable-back-forward-cache", "--disable-site-isolation-trials", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              "--no-first-run", "--disable-extensions", "--window-size=%d,%d" % size,
              "--disable-background-networking", "--disable-component-update", "--disable-default-apps",
              "--disable-sync", "--disable-domain-reliability", "--disable-client-side-phishing-detection",
              "--disable-breakpad", "--no-default-browser-check", "--password-store=basic", "--mute-audio",
              "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,"
              "CertificateTransparencyComponentUpdater"):
        o.add_argument(a)
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=o)
