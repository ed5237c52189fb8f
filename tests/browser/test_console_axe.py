"""Every page of the console passes axe-core (tests/browser/axe, installed by
scripts/npm-deps) with no serious or critical violation: each route of web/app.js is
visited with data to show (a failed and a suspended process, an organization with a
project, a repository, a secret and a team), at laptop and phone size.  A route added to
app.js without a visit here fails the test, so new pages are checked too."""
import os
import re
import subprocess

import pytest
from selenium.webdriver.common.by import By

from conftest import (ADMIN_PASSWORD, AXE_RUN, ROOT, navigate, phone, sign_in, start_process, unique, visit,
                      wait_process, wait_ready, wait_until)
from proc_util import make_org, make_project, make_team
from repo_util import create_repo, git  # noqa: F401  (git is a fixture)

AXE_JS = os.path.join(ROOT, "tests", "browser", "axe", "node_modules", "axe-core", "axe.min.js")

FAILS = """
flows:
  default:
    - log: "about to fail"
    - task: log
      in: {msg: "a step"}
    - throw: "it broke"
"""

ASKS = """
flows:
  default:
    - checkpoint: before
    - form: details
    - log: "got ${details.name}"
forms:
  details:
    - name: {label: "Your name", type: string}
    - count: {label: "How many", type: int, min: 1}
    - color: {label: "Color", type: string, allow: ["red", "green", "blue"]}
"""

DEFINITION = """
configuration:
  arguments: {greeting: "hi"}
profiles:
  loud: {}
flows:
  default:
    - log: "${greeting}"
triggers:
  - manual:
      name: "Run it"
      entryPoint: default
"""


@pytest.fixture(scope="module")
def axe_source():
    if not os.path.exists(AXE_JS) and subprocess.run([os.path.join(ROOT, "scripts", "npm-deps")]).returncode != 0:
        pytest.fail("scripts/npm-deps could not install axe-core (needs npm: scripts/deps)")
    with open(AXE_JS) as f:
        return f.read()


def routes():
    """The route patterns of web/app.js, as regular expressions over a hash's path."""
    with open(os.path.join(ROOT, "web", "app.js")) as f:
        patterns = re.findall(r"^route\('([^']+)'", f.read(), re.M)
    assert len(patterns) > 10, patterns
    return {p: re.compile("^" + re.sub(r"\{\w+\}", "[^/]+", p) + "$") for p in patterns}


def violations(d, axe_source):
    """axe's serious and critical violations of the page as it is: [(rule, impact, html…)]."""
    if not d.execute_script("return !!window.axe"):
        d.execute_script(axe_source)
    return [v for v in d.execute_async_script(AXE_RUN) if v[1] in ("serious", "critical")]


def settle(d, path):
    """What a page loads after it says it is ready (the log's lines, the events)."""
    if path.endswith("/log"):
        wait_until(d, lambda x: x.find_element(By.ID, "log").get_attribute("data-complete") == "true", "the whole log")
    if path.endswith("/events"):
        wait_until(d, lambda x: x.find_elements(By.CSS_SELECTOR, "#events li.ev"), "the events")


def test_every_page_passes_axe(driver, admin, new_user, git, axe_source):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, description="checked by axe")
    repo_name, _ = create_repo(admin, org, project, git({"concord.yml": DEFINITION}).url)
    secret = unique("axe")
    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, secret), "type": (None, "data"),
                                                          "data": ("data", b"value")})
    assert r.status_code == 200, r.text
    team = make_team(admin, org, [(new_user(), "MEMBER")], project=project, level="READER")
    base = "/api/v1/org/%s/jsonstore" % org
    assert admin.post(base, json={"name": "axe-store"}).status_code == 200
    assert admin.put(base + "/axe-store/item/host-1", json={"role": "web"}).status_code == 200
    r = admin.post(base + "/axe-store/query", json={"name": "all", "text": "select item_data from json_store_data"})
    assert r.status_code == 200, r.text
    policy = unique("axe-policy")
    r = admin.post("/api/v2/policy", json={"name": policy, "rules": {"queue": {"forkDepth": {"max": 5}}}})
    assert r.status_code == 200, r.text
    failed = start_process(admin, FAILS)
    assert wait_process(admin, failed)["status"] == "FAILED"
    waiting = start_process(admin, ASKS)
    wait_process(admin, waiting, ("SUSPENDED",))

    pages = [
        ("#/login", "login"),
        ("#/processes", "processes"),
        ("#/processes?tags=nothing-has-this", "processes"),
        ("#/process/%s" % failed, "process"),
        ("#/process/%s/log" % failed, "process"),
        ("#/process/%s/events" % failed, "process"),
        ("#/process/%s/attachments" % failed, "process"),
        ("#/process/%s/children" % failed, "process"),
        ("#/process/%s/checkpoints" % waiting, "process"),
        ("#/process/%s/wizard" % waiting, "wizard"),
        ("#/process/%s/form/details" % waiting, "form"),
        ("#/orgs", "orgs"),
        ("#/org/%s" % org, "org"),
        ("#/org/%s/new-project" % org, "project-new"),
        ("#/org/%s/teams" % org, "teams"),
        ("#/org/%s/team/%s" % (org, team), "team"),
        ("#/audit", "audit"),
        ("#/profile", "profile"),
        ("#/org/%s/project/%s" % (org, project), "project"),
        ("#/org/%s/project/%s/repo/%s" % (org, project, repo_name), "repo"),
        ("#/org/%s/secrets" % org, "secrets"),
        ("#/org/%s/secret/%s" % (org, secret), "secret"),
        ("#/apikeys", "apikeys"),
        ("#/org/%s/jsonstores" % org, "jsonstores"),
        ("#/org/%s/jsonstore/axe-store" % org, "jsonstore"),
        ("#/org/%s/jsonstore/axe-store/item?path=host-1" % org, "jsonstore-item"),
        ("#/org/%s/jsonstore/axe-store/query/all" % org, "jsonstore-query"),
        ("#/roles", "roles"),
        ("#/role/concordAdmin", "role"),
        ("#/policies", "policies"),
        ("#/policy/%s" % policy, "policy"),
        ("#/no/such/page", "error"),
    ]
    unvisited = [p for p, rx in routes().items() if not any(rx.match(h[1:].split("?")[0]) for h, _ in pages)]
    assert not unvisited, "routes of web/app.js that this test does not visit (add them to `pages`): %s" % unvisited

    # At each size one load of the console, then every route as the console's links reach
    # it (the router renders each afresh into main), so that axe-core is read and compiled
    # once per load, not once per page (a load and an injection cost ~6x the CPU of a hash
    # change: bench/RESULTS.md "The browser suite's page loads").
    bad = {}
    driver.get(driver.base_url + "/#/login")
    wait_ready(driver, "login")
    bad.update({("#/login", "laptop"): v for v in [violations(driver, axe_source)] if v})
    sign_in(driver, "admin", ADMIN_PASSWORD)
    for size in ("laptop", "phone"):
        if size == "phone":
            phone(driver)
        visit(driver, *pages[1])
        for i, (hash_path, ready) in enumerate(pages[1:]):
            if i:
                navigate(driver, hash_path, ready)
            settle(driver, hash_path)
            found = violations(driver, axe_source)
            if found:
                bad[(hash_path, size)] = found
    assert not bad, "\n".join("%s at %s: %s" % (h, s, v) for (h, s), v in bad.items())
