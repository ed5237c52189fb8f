"""The console's JSON store pages (issue 26 part 1, issue 28 item 10), driven as a user
would: an organization's stores listed with their capacity, created and deleted; a store's
items paged, filtered, added, edited and deleted; its queries created, changed and run with
parameters; a reader offered none of the changing actions.  Each page has no serious or
critical axe-core violation."""
from selenium.webdriver.support.ui import Select

from conftest import ADMIN_PASSWORD, axe_serious, console_errors, go, sign_in, t, texts, visit, wait_ready, wait_until
from proc_util import make_org, make_team

JS = "/api/v1/org/%s/jsonstore"


def said(d, test, fragment):
    wait_until(d, lambda x: fragment in "".join(texts(x, test)), "%r in %s" % (fragment, test))


def store(admin, org, name, items=None, **extra):
    r = admin.post(JS % org, json=dict(name=name, **extra))
    assert r.status_code == 200, r.text
    base = (JS % org) + "/" + name
    for path, data in (items or {}).items():
        r = admin.put(base + "/item/" + path, json=data)
        assert r.status_code == 200, r.text
    return base


def test_stores_listed_with_capacity_created_and_deleted(driver, admin):
    org, _ = make_org(admin)
    store(admin, org, "inventory-a", {"a": {"k": "0123456789"}}, maxDataSize=100)  # 18 bytes
    doomed = store(admin, org, "to-delete")
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s" % org, "org")
    t(driver, "org-jsonstores").click()
    wait_ready(driver, "jsonstores")
    assert texts(driver, "jsonstore-link") == ["inventory-a", "to-delete"]
    assert texts(driver, "jsonstore-size") == ["18 bytes of 100 bytes", "0 bytes (no limit)"]
    assert axe_serious(driver) == []

    # a refused name: the server's reason, nothing stored
    t(driver, "jsonstore-name").send_keys("<bad>")
    t(driver, "jsonstore-create").click()
    wait_until(driver, lambda d: texts(d, "jsonstore-create-error") != [""], "the refusal")
    console_errors(driver)  # the 400 of that refusal
    assert [s["name"] for s in admin.get(JS % org).json()] == ["inventory-a", "to-delete"]
    t(driver, "jsonstore-name").clear()
    t(driver, "jsonstore-name").send_keys("made-in-console")
    Select(t(driver, "jsonstore-visibility")).select_by_value("PUBLIC")
    t(driver, "jsonstore-max").send_keys("5000")
    t(driver, "jsonstore-create").click()
    wait_ready(driver, "jsonstore")
    said(driver, "jsonstore-capacity", "0 bytes of 5,000 bytes")
    s = admin.get((JS % org) + "/made-in-console").json()
    assert (s["visibility"], s["maxDataSize"], s["owner"]["username"]) == ("PUBLIC", 5000, "admin")

    # delete from the list, after asking
    go(driver, "#/org/%s/jsonstores" % org, "jsonstores")
    driver.find_elements("css selector", '[data-test="jsonstore-delete"]')[-1].click()
    t(driver, "confirm-yes").click()
    wait_until(driver, lambda d: "to-delete" not in texts(d, "jsonstore-link"), "the store gone from the list")
    assert texts(driver, "jsonstore-link") == ["inventory-a", "made-in-console"]
    assert admin.get(doomed).status_code == 404
    assert console_errors(driver) == []


def test_items_paged_added_edited_and_deleted(driver, admin):
    org, _ = make_org(admin)
    base = store(admin, org, "hosts", {"host-%02d" % i: {"i": i} for i in range(52)})
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/jsonstore/hosts" % org, "jsonstore")
    assert len(texts(driver, "item-link")) == 50 and texts(driver, "item-link")[0] == "host-00"
    assert axe_serious(driver) == []
    t(driver, "items-next").click()
    wait_until(driver, lambda d: texts(d, "item-link") == ["host-50", "host-51"], "the second page")
    t(driver, "items-filter").send_keys("HOST-1\n")
    wait_until(driver, lambda d: texts(d, "item-link") == ["host-%02d" % i for i in range(10, 20)], "the filter")

    # added: JSON checked in the page, an existing path refused, then a new one
    t(driver, "item-path").send_keys("dc1/web")
    data = t(driver, "item-data")
    data.clear()
    data.send_keys('{"ip": "10.0.0.1",')
    t(driver, "item-add").click()
    said(driver, "item-add-error", "The data is not valid JSON")
    data.clear()
    data.send_keys('{"ip": "10.0.0.1", "tags": ["web"]}')
    t(driver, "item-path").clear()
    t(driver, "item-path").send_keys("host-01")
    t(driver, "item-add").click()
    said(driver, "item-add-error", 'An item at "host-01" exists already')
    assert admin.get(base + "/item/host-01").json() == {"i": 1}
    t(driver, "item-path").clear()
    t(driver, "item-path").send_keys("dc1/web")
    t(driver, "item-add").click()
    wait_ready(driver, "jsonstore-item")
    assert admin.get(base + "/item/dc1/web").json() == {"ip": "10.0.0.1", "tags": ["web"]}
    box = t(driver, "item-json")
    assert '"ip": "10.0.0.1"' in box.get_attribute("value")
    assert axe_serious(driver) == []

    # edited: a bad edit is refused by the page, a good one replaces the item
    box.clear()
    box.send_keys('[1, 2]')
    t(driver, "item-save").click()
    said(driver, "item-save-result", "must be valid JSON objects")  # the server's rule
    console_errors(driver)
    box.clear()
    box.send_keys('{"ip": "10.0.0.2"}')
    t(driver, "item-save").click()
    said(driver, "item-save-result", "Saved.")
    assert admin.get(base + "/item/dc1/web").json() == {"ip": "10.0.0.2"}

    t(driver, "item-delete").click()
    t(driver, "confirm-yes").click()
    wait_ready(driver, "jsonstore")
    said(driver, "jsonstore-details", "Your access")
    assert 'Item "dc1/web" deleted.' in driver.find_element("css selector", "#flash").text
    assert admin.get(base + "/item/dc1/web").status_code == 204
    assert console_errors(driver) == []


def test_queries_created_changed_and_run_with_parameters(driver, admin):
    org, _ = make_org(admin)
    base = store(admin, org, "services", {
        "service_a": {"service": "service_a", "users": ["bob", "alice"]},
        "service_b": {"service": "service_b", "users": ["alice", "mike"]}})
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/org/%s/jsonstore/services" % org, "jsonstore")
    t(driver, "query-name").send_keys("lookupServiceByUser")
    text = t(driver, "query-text")
    text.clear()
    text.send_keys("select item_data->'service' from json_store_data where item_data @> ?::jsonb")
    t(driver, "query-add").click()
    wait_ready(driver, "jsonstore-query")
    q = admin.get(base + "/query/lookupServiceByUser").json()
    assert q["text"] == "select item_data->'service' from json_store_data where item_data @> ?::jsonb"

    # run with parameters as JSON
    t(driver, "query-params").send_keys('{"users": ["mike"]}')
    t(driver, "query-run").click()
    said(driver, "query-row-count", "1 row.")
    assert [x.strip() for x in texts(driver, "query-row")] == ['"service_b"']
    assert axe_serious(driver) == []
    params = t(driver, "query-params")
    params.clear()
    params.send_keys('{"users": ["alice"]}')
    t(driver, "query-run").click()
    said(driver, "query-row-count", "2 rows.")
    assert sorted(x.strip() for x in texts(driver, "query-row")) == ['"service_a"', '"service_b"']
    params.clear()
    params.send_keys("{users")
    t(driver, "query-run").click()
    said(driver, "query-run-error", "The parameters is not valid JSON")
    params.clear()  # none: the placeholder wants a filter, the server says so
    t(driver, "query-run").click()
    said(driver, "query-run-error", "placeholder")
    console_errors(driver)

    # changed: a broken text is refused when saved, a good one saved
    box = t(driver, "query-text")
    box.clear()
    box.send_keys("select item_data from users")
    t(driver, "query-save").click()
    said(driver, "query-save-result", "'users' is not allowed")
    console_errors(driver)
    box.clear()
    box.send_keys("select to_json(item_path) from json_store_data order by item_path")
    t(driver, "query-save").click()
    said(driver, "query-save-result", "Saved.")
    t(driver, "query-run").click()
    said(driver, "query-row-count", "2 rows.")
    assert [x.strip() for x in texts(driver, "query-row")] == ['"service_a"', '"service_b"']

    # listed on the store's page; deleted from its own
    go(driver, "#/org/%s/jsonstore/services" % org, "jsonstore")
    assert texts(driver, "query-link") == ["lookupServiceByUser"]
    t(driver, "query-link").click()
    wait_ready(driver, "jsonstore-query")
    t(driver, "query-delete").click()
    t(driver, "confirm-yes").click()
    wait_ready(driver, "jsonstore")
    assert texts(driver, "query-link") == []
    assert admin.get(base + "/query").json() == []
    assert console_errors(driver) == []


def test_a_reader_is_offered_no_changes(driver, admin, new_user):
    org, _ = make_org(admin)
    reader = new_user(password="Reader-pass-1")
    team = make_team(admin, org, [(reader, "MEMBER")])
    base = store(admin, org, "private-store", {"a": {"x": 1}})
    r = admin.post(base + "/query", json={"name": "all", "text": "select item_data from json_store_data"})
    assert r.status_code == 200, r.text
    assert admin.post(base + "/access", json={"teamName": team, "level": "READER"}).status_code == 200
    sign_in(driver, reader.username, "Reader-pass-1")

    visit(driver, "#/org/%s/jsonstores" % org, "jsonstores")
    assert texts(driver, "jsonstore-link") == ["private-store"]
    assert texts(driver, "jsonstore-delete") == []
    assert texts(driver, "jsonstore-create") == ["Create JSON store"]  # a member of the organization
    assert axe_serious(driver) == []

    go(driver, "#/org/%s/jsonstore/private-store" % org, "jsonstore")
    for absent in ("item-form", "query-form", "rules-form", "jsonstore-delete"):
        assert texts(driver, absent) == [], absent
    said(driver, "jsonstore-not-allowed", "needs the writer level; you are a reader here")
    assert axe_serious(driver) == []

    t(driver, "item-link").click()
    wait_ready(driver, "jsonstore-item")
    assert '"x": 1' in t(driver, "item-json").text
    assert texts(driver, "item-save") == [] and texts(driver, "item-delete") == []
    assert axe_serious(driver) == []

    go(driver, "#/org/%s/jsonstore/private-store/query/all" % org, "jsonstore-query")
    assert "json_store_data" in t(driver, "query-sql").text
    assert texts(driver, "query-save") == [] and texts(driver, "query-delete") == []
    t(driver, "query-run").click()  # readers run queries
    said(driver, "query-row-count", "1 row.")
    assert axe_serious(driver) == []
    assert console_errors(driver) == []


def test_create_offered_to_members_only(driver, admin, new_user):
    org, _ = make_org(admin)
    outsider = new_user(password="Outsider-pass-1")
    sign_in(driver, outsider.username, "Outsider-pass-1")
    visit(driver, "#/org/%s/jsonstores" % org, "jsonstores")
    said(driver, "jsonstore-create-not-allowed", "Only members of the organization")
    assert texts(driver, "jsonstore-form") == []
    # a member (a new user is in Default's team) is offered the form
    go(driver, "#/org/Default/jsonstores", "jsonstores")
    assert texts(driver, "jsonstore-create") == ["Create JSON store"]
    assert console_errors(driver) == []
