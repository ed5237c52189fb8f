"""Error messages in Concord's words (issue 29 item 9): where Accord answers with the same
status as Concord, a client or a script that matches on Concord's text finds it. Accord may
add detail after Concord's text, never before it.

Each difference found, from Concord's server sources (OrganizationManager, TeamManager,
UserResource, ApiKeyResource, ProcessResourceV2, ProcessResource):

| endpoint                                   | Accord's text before                                   | Concord's text                                              |
|--------------------------------------------|--------------------------------------------------------|-------------------------------------------------------------|
| POST /api/v1/org (new org, no createOrg)   | The current user (u) is not an administrator: ...      | Only roles with 'createOrg' permission are allowed to update organizations |
| POST /api/v1/org (existing, not owner)     | The current user (u) is not an owner of the org...     | Only roles with 'updateOrg' permission are allowed to update organizations |
| POST /api/v1/org/{org}/team (not owner)    | The current user (u) is not an owner of the org...     | The current user (u) does not have the required role: OWNER |
| PUT  …/team/{team}/users (not maintainer)  | The current user (u) needs the role MAINTAINER in...   | The current user (u) does not have the required role: MAINTAINER |
| users, audit (not admin)                   | The current user (u) is not an administrator: only...  | Only admins can do that                                     |
| org-members-only checks (e.g. team list)   | … doesn't belong to the organization: o                | … doesn't belong to the specified organization: o           |
| POST /api/v1/apikey (name taken)           | API key with name 'k' already exists                   | API Token with name 'k' already exists                      |
| GET /api/v2/process?limit=0                | 'limit' must be a number between 1 and 1000            | 'limit' must be a positive number                           |
| POST /api/v1/org/{org}/secret/{s} (update) | … server's key, the 'storePassword' cannot be changed | … server's key, can't use or set 'storePassword'            |
| GET …/state/snapshot/{name} (no such file) | File not found: name                                   | State file not found: name                                  |
| GET /api/v1/process/{id}/log (bad Range)   | Invalid Range header 'v': why                          | Invalid range header: v                                     |
| GET /api/v1/process/{id}/state/snapshot    | … permissions to download the state of process: id     | … permissions to the download the process state: id         |
| DELETE /api/v1/process/{id}[/cascade], bulk, disable, restart (no project, not its initiator) | … permissions to access process: id | The current user (u) does not have permissions to kill or disable the process: id |
| the same for a process of a project (not a writer) | … permissions to access process: id   | The current user (u) doesn't have the necessary access level (WRITER) to the project: p |
| DELETE /api/v1/process/{id}/cascade (unknown)  | Process instance not found: id                      | Process not found: id (ProcessManager.killCascade)          |
| DELETE /api/v1/process/bulk (a failure)    | 1 of 3 processes could not be stopped                  | the first failure's message (Concord stops there)           |
| form submit `errors` (FormResource)         | value 'x' not allowed for field 'f' (allowed: a, b), … | DefaultFormValidatorLocale's texts (tests below)            |
| GET …/repository/{r}/trigger (not a member of the org) | … necessary access level (READER) to the project: p | … doesn't belong to the specified organization: o |
| POST /api/v1/org/trigger/refresh (not admin) | Only admins can do that (…)                           | Not authorized, admin access required                       |
| /api/v1/org/{org}/inventory/{inv}… (unknown) | Inventory not found: inv                              | JSON store not found: inv (InventoryResource is JSON stores) |
| the same, not allowed                       | … necessary access level (READER) to the inventory: i | … necessary access level (READER) to the JSON store: i      |
"""
import uuid

import pytest

from conftest import start_process, unique, wait_process
from proc_util import make_project, make_team


def message(r, status):
    assert r.status_code == status, r.text
    body = r.json()
    assert body["ok"] is False
    return body["message"]


def test_org_create_and_update_refused_in_concords_words(admin, new_user):
    user = new_user()
    assert message(user.post("/api/v1/org", json={"name": unique("org")}), 403) == \
        "Only roles with 'createOrg' permission are allowed to update organizations"
    assert message(user.post("/api/v1/org", json={"name": "Default"}), 403) == \
        "Only roles with 'updateOrg' permission are allowed to update organizations"


def test_team_roles_refused_in_concords_words(admin, new_user):
    user = new_user()
    text = message(user.post("/api/v1/org/Default/team", json={"name": unique("team")}), 403)
    assert text.startswith("The current user (%s) does not have the required role: OWNER" % user.username)
    text = message(user.put("/api/v1/org/Default/team/default/users", json=[{"username": user.username}]), 403)
    assert text.startswith("The current user (%s) does not have the required role: MAINTAINER" % user.username)


def test_admin_only_refused_in_concords_words(new_user):
    user = new_user()
    text = message(user.post("/api/v1/user", json={"username": unique("u"), "type": "LOCAL"}), 403)
    assert text.startswith("Only admins can do that")
    assert message(user.get("/api/v1/user/admin"), 403).startswith("Only admins can do that")


def test_org_members_only_refused_in_concords_words(admin, new_user):
    org = unique("org")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    user = new_user()
    text = message(user.get("/api/v1/org/%s/team" % org), 403)
    assert text == "The current user (%s) doesn't belong to the specified organization: %s" % (user.username, org)


def test_duplicate_api_key_name_in_concords_words(admin):
    name = unique("key")
    assert admin.post("/api/v1/apikey", json={"username": "admin", "name": name}).status_code == 200
    text = message(admin.post("/api/v1/apikey", json={"username": "admin", "name": name}), 409)
    assert text == "API Token with name '%s' already exists" % name


def test_process_list_limit_in_concords_words(admin):
    assert message(admin.get("/api/v2/process", params={"limit": "0"}), 400).startswith(
        "'limit' must be a positive number")
    assert message(admin.get("/api/v2/process", params={"offset": "-1"}), 400) == \
        "'offset' must be a positive number or zero"


def test_state_download_refused_in_concords_words(admin, new_user):
    """A reader of the process's project may see the process but not download its state."""
    project, _ = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    user = new_user()
    make_team(admin, "Default", [(user, "MEMBER")], project=project, level="READER")
    pid = start_process(admin, "flows:\n  default:\n    - log: hi\n", parts={"org": "Default", "project": project})
    wait_process(admin, pid)
    assert user.get("/api/v2/process/%s" % pid).status_code == 200
    text = message(user.get("/api/v1/process/%s/state/snapshot" % pid), 403)
    assert text == ("The current user (%s) doesn't have the necessary permissions to the download the process "
                    "state: %s" % (user.username, pid))


def test_ended_process_state_is_its_attachments(admin):
    """Item 9's leftover, as docs/api.md documents it: a FINISHED process's payload is dropped
    at its end, so its state is its attachments; a file of the payload is 404 State file not found."""
    import io
    import zipfile

    flow = "flows:\n  default:\n    - set:\n        v: 1\n"
    pid = start_process(admin, flow, parts={"out": "v"}, files={"data/extra.txt": b"extra"})
    assert wait_process(admin, pid)["status"] == "FINISHED"
    r = admin.get("/api/v1/process/%s/state/snapshot" % pid)
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/zip"
    names = zipfile.ZipFile(io.BytesIO(r.content)).namelist()
    assert "_attachments/out.json" in names
    assert [n for n in names if not n.startswith("_attachments/")] == []
    for name in ("concord.yml", "_main.json", "data/extra.txt"):
        r = admin.get("/api/v1/process/%s/state/snapshot/%s" % (pid, name))
        assert message(r, 404) == "State file not found: %s" % name


def test_store_password_on_a_server_key_secret_in_concords_words(admin):
    """SecretManager.update: a storePassword for a secret the server's key encrypts."""
    name = unique("sec")
    r = admin.post("/api/v1/org/Default/secret", files={"name": (None, name), "type": (None, "data"),
                                                        "data": (None, "x")})
    assert r.status_code == 200, r.text
    r = admin.post("/api/v1/org/Default/secret/%s" % name, json={"storePassword": "Passw0rd-123"})
    assert message(r, 400) == "The secret is encrypted with the server's key, can't use or set 'storePassword'"


# ---- form submit: the `errors` map in Concord's words (DefaultFormValidatorLocale) ---------

FORM = """
flows:
  default:
    - form: f
forms:
  f:
    - color: {label: "Color", type: "string?", allow: [red, green]}
    - code: {type: "string?", pattern: "[A-Z]{3}"}
    - age: {type: "int?", min: 21, max: 100}
    - low: {type: "int?", min: 5}
    - high: {label: "Upper", type: "decimal?", max: 2.5}
    - ratio: {type: "decimal?"}
    - ok: {type: "boolean?"}
    - when: {type: "date?"}
    - one: {type: "string?"}
    - needed: {type: "int?"}
    - many: {type: "string+"}
    - tags: {type: "string*", allow: [a, b]}
"""


@pytest.fixture
def form_pid(admin):
    pid = start_process(admin, FORM)
    assert wait_process(admin, pid, ("SUSPENDED", "FAILED", "FINISHED"))["status"] == "SUSPENDED"
    return pid


@pytest.mark.parametrize("field,value,text", [
    ("many", None, "many: Invalid cardinality, expected at least a single value"),
    ("one", ["x", "y"], "one: Invalid cardinality, expected a single optional value"),
    ("age", "abc", "age: expected an integer value, got abc"),
    ("ratio", "x1", "ratio: expected a decimal value, got x1"),
    ("ok", "maybe", "ok: expected a boolean value, got maybe"),
    ("when", "soon", "when: expected a date value, got soon"),
    ("age", 101, "age: value '101' must be within 21 and 100 (inclusive)"),
    ("low", 4, "low: value '4' must be equal or greater than 5"),
    ("high", 3, "Upper: value '3.0' must be less or equal than 2.5"),
    ("color", "blue", "Color: value 'blue' is not allowed, valid values: [red, green]"),
    ("tags", ["a", "c"], "tags [1]: value 'c' is not allowed, valid values: [a, b]"),
    ("code", "abcd", "code: value 'abcd' doesn't match pattern '[A-Z]{3}'"),
])
def test_form_submit_errors_in_concords_words(admin, form_pid, field, value, text):
    body = {"many": ["m"]}
    if value is None:
        body.pop(field)
    else:
        body[field] = value
    r = admin.post("/api/v1/process/%s/form/f" % form_pid, json=body)
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is False
    assert r.json()["errors"] == {field: text}


# ---- kill, cascade, bulk (ProcessResource.kill/killCascade/batchKill, ProcessManager) ----------

SLEEPER = "flows:\n  default:\n    - suspend: never\n"


def test_kill_unknown_process_in_concords_words(admin):
    pid = str(uuid.uuid4())
    assert message(admin.delete("/api/v1/process/%s" % pid), 404) == "Process instance not found: %s" % pid


def test_kill_cascade_unknown_process_in_concords_words(admin):
    pid = str(uuid.uuid4())
    assert message(admin.delete("/api/v1/process/%s/cascade" % pid), 404) == "Process not found: %s" % pid


def test_kill_a_finished_process_is_no_error(admin):
    pid = start_process(admin, "flows:\n  default:\n    - log: hi\n")
    assert wait_process(admin, pid)["status"] == "FINISHED"
    for path in ("", "/cascade"):
        r = admin.delete("/api/v1/process/%s%s" % (pid, path))
        assert r.status_code == 204, r.text
    assert admin.delete("/api/v1/process/bulk", json=[pid]).status_code == 204
    assert wait_process(admin, pid)["status"] == "FINISHED"


def kill_refused(user, pid):
    return "The current user (%s) does not have permissions to kill or disable the process: %s" % (user.username, pid)


@pytest.mark.parametrize("path", ["", "/cascade"])
def test_kill_without_rights_in_concords_words(admin, new_user, path):
    pid = start_process(admin, SLEEPER)
    wait_process(admin, pid, ("SUSPENDED",))
    user = new_user()
    assert message(user.delete("/api/v1/process/%s%s" % (pid, path)), 403) == kill_refused(user, pid)
    assert message(user.post("/api/v1/process/%s/disable/true" % pid), 403) == kill_refused(user, pid)
    assert wait_process(admin, pid, ("SUSPENDED",))["status"] == "SUSPENDED"
    assert admin.delete("/api/v1/process/%s" % pid).status_code == 204


def test_kill_of_a_project_process_without_writer_rights_in_concords_words(admin, new_user):
    project, _ = make_project(admin, "Default", rawPayloadMode="EVERYONE")
    user = new_user()
    make_team(admin, "Default", [(user, "MEMBER")], project=project, level="READER")
    pid = start_process(admin, SLEEPER, parts={"org": "Default", "project": project})
    wait_process(admin, pid, ("SUSPENDED",))
    text = ("The current user (%s) doesn't have the necessary access level (WRITER) to the project: %s"
            % (user.username, project))
    assert message(user.delete("/api/v1/process/%s" % pid), 403) == text
    assert message(user.delete("/api/v1/process/%s/cascade" % pid), 403) == text
    assert admin.delete("/api/v1/process/%s" % pid).status_code == 204


def test_bulk_kill_answers_with_the_first_failures_message(admin, new_user):
    user = new_user()
    theirs = start_process(admin, SLEEPER)
    mine = start_process(user, SLEEPER)
    unknown = str(uuid.uuid4())
    r = user.delete("/api/v1/process/bulk", json=[mine, theirs, unknown])
    assert message(r, 403) == kill_refused(user, theirs) + " (2 of 3 processes could not be stopped)"
    assert [f["message"] for f in r.json()["failed"]] == [kill_refused(user, theirs),
                                                         "Process instance not found: %s" % unknown]
    assert wait_process(user, mine)["status"] == "CANCELLED"
    assert admin.delete("/api/v1/process/%s" % theirs).status_code == 204


# ---- triggers (TriggerResource, TriggerV2Resource) ------------------------------------------

def test_trigger_list_unknown_names_in_concords_words(admin):
    project, _ = make_project(admin, "Default")
    org = unique("org")
    base = "/api/v1/org/%s/project/%s/repository/%s/trigger"
    assert message(admin.get(base % (org, project, "r")), 404) == "Organization not found: %s" % org
    assert message(admin.get(base % ("Default", "nope" + project, "r")), 404) == "Project not found: nope" + project
    assert message(admin.get(base % ("Default", project, "nope")), 404) == "Repository not found: nope"


def test_trigger_list_of_a_non_member_in_concords_words(admin, new_user):
    org = unique("org")
    assert admin.post("/api/v1/org", json={"name": org}).status_code == 200
    project, _ = make_project(admin, org)
    user = new_user()
    r = user.get("/api/v1/org/%s/project/%s/repository/r/trigger" % (org, project))
    assert message(r, 403) == "The current user (%s) doesn't belong to the specified organization: %s" % (
        user.username, org)


def test_trigger_refresh_all_by_a_non_admin_in_concords_words(new_user):
    user = new_user()
    for path in ("/api/v1/org/trigger/refresh", "/api/v2/trigger/refresh"):
        assert message(user.post(path), 403).startswith("Not authorized, admin access required")


@pytest.mark.parametrize("query,text", [
    ({"type": ""}, "Invalid type value: "),
    ({"orgName": "no-such-org"}, "Organization not found: no-such-org"),
    ({"orgName": "Default", "projectName": "no-such-project"}, "Project not found: no-such-project"),
    ({"projectName": "x"}, "Organization ID or name is required"),
    ({"repoName": "x"}, "Invalid project ID or name"),
])
def test_trigger_v2_list_in_concords_words(admin, query, text):
    assert message(admin.get("/api/v2/trigger", params=query), 400) == text


# ---- inventories (InventoryResource and its data/query resources, on Concord's JSON stores) --

def make_inventory(admin, org="Default", **fields):
    name = unique("inv")
    body = {"name": name}
    body.update(fields)
    assert admin.post("/api/v1/org/%s/inventory" % org, json=body).status_code == 200
    return name


def test_inventory_unknown_names_in_concords_words(admin):
    org = unique("org")
    assert message(admin.get("/api/v1/org/%s/inventory/x" % org), 404) == "Organization not found: %s" % org
    assert message(admin.get("/api/v1/org/Default/inventory/nope"), 404) == "JSON store not found: nope"
    assert message(admin.get("/api/v1/org/Default/inventory/nope/data/a"), 404) == "JSON store not found: nope"


def test_inventory_without_access_in_concords_words(admin, new_user):
    name = make_inventory(admin, visibility="PRIVATE")
    user = new_user()
    make_team(admin, "Default", [(user, "MEMBER")])
    text = "The current user (%s) doesn't have the necessary access level (%s) to the JSON store: %s"
    assert message(user.get("/api/v1/org/Default/inventory/%s" % name), 403) == text % (user.username, "READER",
                                                                                        name)
    assert message(user.delete("/api/v1/org/Default/inventory/%s" % name), 403) == text % (user.username, "OWNER",
                                                                                           name)


def test_inventory_query_messages_in_concords_words(admin):
    name = make_inventory(admin)
    base = "/api/v1/org/Default/inventory/%s/query/" % name
    r = admin.delete(base + "nope")
    assert message(r, 404) == "Query not found: nope"
    r = admin.post(base + "qq1", data="   ", headers={"Content-Type": "text/plain"})
    assert message(r, 400) == "Query should not be empty"


@pytest.mark.parametrize("body,cls", [("x", "java.lang.String"), (7, "java.lang.Integer"), (2.5, "java.lang.Double"),
                                      (True, "java.lang.Boolean"), ([1], "java.util.ArrayList")])
def test_inventory_top_level_item_in_concords_words(admin, body, cls):
    name = make_inventory(admin)
    r = admin.post("/api/v1/org/Default/inventory/%s/data/top" % name, json=body)
    assert message(r, 400) == "Top-level inventory entries must be JSON objects. Got: class " + cls


# ---- a form's own messages: locale.properties (Concord's getting-started/forms.md) ----------

LOCALE_FORM = """
flows:
  default:
    - form: contact
forms:
  contact:
    - username: {type: string}
    - phone: {type: string, pattern: "[0-9]{3}-[0-9]{3}-[0-9]{4}"}
    - email: {type: "string?"}
"""


def test_form_messages_from_locale_properties(admin):
    locale = (b"username.invalidCardinality=Please enter your username\n"
              b"invalidCardinality=Required field\n"
              b"phone.doesntMatchPattern=Please enter your phone number with the format ###-###-####\n")
    pid = start_process(admin, LOCALE_FORM, files={"locale.properties": locale})
    assert wait_process(admin, pid, ("SUSPENDED", "FAILED", "FINISHED"))["status"] == "SUSPENDED"
    r = admin.post("/api/v1/process/%s/form/contact" % pid, json={"phone": "12"})
    assert r.status_code == 200 and r.json()["ok"] is False, r.text
    assert r.json()["errors"] == {"username": "Please enter your username",
                                  "phone": "Please enter your phone number with the format ###-###-####"}
    r = admin.post("/api/v1/process/%s/form/contact" % pid, json={"username": "u", "phone": "555-123-4567"})
    assert r.json()["ok"] is True, r.text


def test_a_broken_locale_properties_fails_the_form_step(admin):
    pid = start_process(admin, LOCALE_FORM, files={"locale.properties": b"x = \\u12\n"})
    assert wait_process(admin, pid)["status"] == "FAILED"
    from conftest import process_log
    assert "form 'contact': locale.properties: properties line 1: malformed \\uxxxx encoding" in \
        process_log(admin, pid)
