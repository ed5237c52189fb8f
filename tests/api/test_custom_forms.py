"""Custom forms (issue 26 part 5): forms/<name>/index.html served under /forms/{id}/{name}/,
data.js in Concord's shape, the CSP, no path escapes, access as for the form's submit, and
the submit through /api/service/custom_form/{id}/{name}/continue."""
import http.client
import json
import re
import urllib.parse

from conftest import process_log, start_process, wait_process
from proc_util import make_org, make_project, make_team, status

FLOW = """
flows:
  default:
    - form: myForm
      values:
        note: "preset"
    - log: "Hello, ${myForm.name} age=${myForm.age} color=${myForm.color}"
forms:
  myForm:
    - name: {label: "Name", type: "string", pattern: ".* .*"}
    - age: {type: "int?", min: 21}
    - color: {type: "string*", allow: [red, green]}
    - note: {type: "string?"}
"""

INDEX = b"""<!doctype html>
<html><head><title>My Form</title><script src="data.js"></script>
<link rel="stylesheet" href="../shared/common.css"></head>
<body><form method="post" onsubmit="this.action = data.submitUrl"><input name="name"/><button>Go</button></form>
</body></html>
"""

FILES = {
    "forms/myForm/index.html": INDEX,
    "forms/myForm/img/logo.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    "forms/shared/common.css": b"body { color: #333 }",
    "secret.txt": b"not for the form",
}


def suspended(client, flow=FLOW, files=None, parts=None):
    pid = start_process(client, flow, parts=parts, files=FILES if files is None else files)
    p = wait_process(client, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(client, pid)
    return pid


def data_of(client, pid, form="myForm"):
    r = client.get("/forms/%s/%s/form/data.js" % (pid, form))
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/javascript")
    m = re.fullmatch(r"data = (.*);\s*", r.text, re.S)
    assert m, r.text
    return json.loads(m.group(1))


def raw_get(client, path):
    """GET of path exactly as written: requests would remove its dot segments first."""
    u = urllib.parse.urlsplit(client.url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        conn.request("GET", path, headers={"Authorization": client.s.headers["Authorization"]})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_list_says_custom_and_start_gives_its_page(admin):
    pid = suspended(admin)
    forms = admin.get("/api/v1/process/%s/form" % pid).json()
    assert [(f["name"], f["custom"]) for f in forms] == [("myForm", True)]
    assert admin.get("/api/v1/process/%s/form/myForm" % pid).json()["custom"] is True
    r = admin.post("/api/service/custom_form/%s/myForm/start" % pid)
    assert r.status_code == 200, r.text
    assert r.json() == {"uri": "/forms/%s/myForm/form/" % pid}


def test_generated_form_when_no_index(admin):
    pid = suspended(admin, files={"forms/myForm/logo.png": b"png", "forms/shared/common.css": b""})
    assert admin.get("/api/v1/process/%s/form" % pid).json()[0]["custom"] is False
    r = admin.post("/api/service/custom_form/%s/myForm/start" % pid)
    assert r.status_code == 200, r.text
    assert r.json() == {"uri": "/#/process/%s/form/myForm" % pid}
    assert admin.get("/forms/%s/myForm/form/" % pid).status_code == 404


def test_serves_index_assets_and_shared_with_csp(admin):
    pid = suspended(admin)
    r = admin.get("/forms/%s/myForm/form/" % pid)
    assert r.status_code == 200, r.text
    assert r.content == INDEX
    assert r.headers["Content-Type"].startswith("text/html")
    csp = r.headers["Content-Security-Policy"]
    directives = dict((d.strip().split(" ", 1) + [""])[:2] for d in csp.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self' 'unsafe-inline'"
    assert directives["connect-src"] == "'none'"
    # the page posts to its own submit URL only, on the origin the browser used
    assert directives["form-action"] == "%s/api/service/custom_form/%s/myForm/continue" % (admin.url, pid)
    assert directives["base-uri"] == "'none'"
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    assert r.headers["Cross-Origin-Opener-Policy"] == "same-origin"
    assert "Cross-Origin-Opener-Policy" not in admin.get("/").headers  # the console's pages differ
    r = admin.get("/forms/%s/myForm/form/img/logo.svg" % pid)
    assert r.status_code == 200 and r.headers["Content-Type"] == "image/svg+xml"
    assert r.headers["Content-Security-Policy"] == csp
    r = admin.get("/forms/%s/myForm/form/" % pid, headers={"Host": "evil; script-src *"})
    assert "script-src *" not in r.headers["Content-Security-Policy"]
    assert r.headers["Content-Security-Policy"].endswith("form-action 'none'")
    r = admin.get("/forms/%s/myForm/shared/common.css" % pid)
    assert r.status_code == 200 and r.text == "body { color: #333 }"
    assert r.headers["Content-Type"].startswith("text/css")
    # without the folder's slash: to it, so that data.js and ../shared/ resolve
    r = admin.get("/forms/%s/myForm/form" % pid, allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == "/forms/%s/myForm/form/" % pid


def test_data_js_in_concord_shape(admin):
    pid = suspended(admin)
    d = data_of(admin, pid)
    assert d["txId"] == pid and d["formName"] == "myForm"
    assert d["success"] is False and d["processFailed"] is False
    assert d["submitUrl"] == "/api/service/custom_form/%s/myForm/continue" % pid
    assert d["fields"] == ["name", "age", "color", "note"]
    assert d["definitions"]["name"] == {"label": "Name", "type": "string", "cardinality": "ONE_AND_ONLY_ONE"}
    assert d["definitions"]["age"] == {"type": "int", "cardinality": "ONE_OR_NONE"}
    assert d["definitions"]["color"] == {"type": "string", "cardinality": "ANY", "allow": ["red", "green"]}
    assert d["values"] == {"note": "preset"}
    assert d["errors"] == {}


def test_refused_submit_comes_back_with_errors(admin):
    pid = suspended(admin)
    url = "/api/service/custom_form/%s/myForm/continue" % pid
    r = admin.post(url, data={"name": "single", "age": "7", "color": ["red", "blue"]}, allow_redirects=False)
    assert r.status_code == 303, r.text
    assert r.headers["Location"] == "/forms/%s/myForm/form/" % pid
    assert status(admin, pid)["status"] == "SUSPENDED"
    d = data_of(admin, pid)
    assert set(d["errors"]) == {"name", "age", "color"}, d["errors"]
    assert "doesn't match pattern" in d["errors"]["name"]
    assert d["values"]["name"] == "single" and d["values"]["color"] == ["red", "blue"]
    assert d["values"]["note"] == "preset"
    # the generated form's API does not show the note
    assert "customSubmit" not in admin.get("/api/v1/process/%s/form/myForm" % pid).text


def test_valid_submit_resumes_and_goes_to_the_wizard(admin):
    pid = suspended(admin)
    url = "/api/service/custom_form/%s/myForm/continue" % pid
    r = admin.post(url, data={"name": "Ada Lovelace", "age": "36", "color": ["red", "green"]},
                   allow_redirects=False)
    assert r.status_code == 303, r.text
    assert r.headers["Location"] == "/#/process/%s/wizard" % pid
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    assert "Hello, Ada Lovelace age=36 color=[red, green]" in process_log(admin, pid)


def test_multipart_submit(admin):
    pid = suspended(admin)
    url = "/api/service/custom_form/%s/myForm/continue" % pid
    r = admin.post(url, files=[("name", (None, "Grace Hopper")), ("age", (None, "40"))], allow_redirects=False)
    assert r.status_code == 303, r.text
    assert r.headers["Location"].endswith("/wizard")
    wait_process(admin, pid)
    assert "Hello, Grace Hopper age=40" in process_log(admin, pid)


def test_submit_other_media_type_and_bad_encoding(admin):
    pid = suspended(admin)
    url = "/api/service/custom_form/%s/myForm/continue" % pid
    r = admin.post(url, json={"name": "Ada Lovelace"})
    assert r.status_code == 415, r.text
    assert r.json()["ok"] is False
    r = admin.post(url, data="name=%zz", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 400, r.text
    assert "x-www-form-urlencoded" in r.json()["message"]
    r = admin.post(url, data=b"name=%FF%FE", headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 400, r.text
    assert status(admin, pid)["status"] == "SUSPENDED"


def test_no_path_escape(admin):
    pid = suspended(admin)
    base = "/forms/%s/myForm" % pid
    for path in ("/form/../../secret.txt", "/form/%2e%2e/%2e%2e/secret.txt", "/form/img/../index.html",
                 "/form/./index.html", "/form/img//logo.svg", "/shared/../myForm/index.html",
                 "/form/..%2f..%2fsecret.txt", "/shared/%2e%2e/%2e%2e/secret.txt"):
        code, body = raw_get(admin, base + path)
        assert code in (400, 404), (path, code, body)
        assert b"not for the form" not in body and b"<!doctype" not in body
    # folders are not files; other forms' names and the shared folder are not forms
    assert admin.get(base + "/form/img").status_code == 404
    assert admin.get("/forms/%s/shared/form/common.css" % pid).status_code == 404
    assert raw_get(admin, "/forms/%s/..%%2f/form/index.html" % pid)[0] == 404


def test_links_made_by_the_flow_are_not_served(admin):
    """A link the flow makes beneath forms/ before the form (to a file outside, to a
    folder) is not part of the stored working directory, so it is never served."""
    flow = """
flows:
  default:
    - script: python
      body: |
        import os
        os.symlink(os.path.abspath("secret.txt"), "forms/myForm/leak.txt")
        os.symlink("/etc", "forms/myForm/etc")
        os.symlink("../../secret.txt", "forms/shared/leak.txt")
""" + FLOW.split("flows:\n  default:\n", 1)[1]
    pid = suspended(admin, flow=flow)
    for path in ("form/leak.txt", "form/etc/passwd", "shared/leak.txt"):
        r = admin.get("/forms/%s/myForm/%s" % (pid, path))
        assert r.status_code == 404, (path, r.text)
        assert b"not for the form" not in r.content and b"root:" not in r.content
    assert admin.get("/forms/%s/myForm/form/" % pid).status_code == 200


def test_a_linked_page_is_no_custom_form(admin):
    """forms/<name> (or its index.html) as a link is not kept with the process: the form is
    the generated one."""
    flow = """
flows:
  default:
    - script: python
      body: |
        import os
        os.symlink("myForm", "forms/linked")
        os.makedirs("forms/alsoLinked")
        os.symlink("../myForm/index.html", "forms/alsoLinked/index.html")
    - parallel:
      - form: linked
      - form: alsoLinked
forms:
  linked:
    - name: {type: string}
  alsoLinked:
    - name: {type: string}
"""
    pid = suspended(admin, flow=flow)
    forms = admin.get("/api/v1/process/%s/form" % pid).json()
    assert sorted((f["name"], f["custom"]) for f in forms) == [("alsoLinked", False), ("linked", False)]
    for name in ("linked", "alsoLinked"):
        assert admin.get("/forms/%s/%s/form/" % (pid, name)).status_code == 404
        assert admin.post("/api/service/custom_form/%s/%s/start" % (pid, name)).json()["uri"] == \
            "/#/process/%s/form/%s" % (pid, name)


def test_access_is_the_forms_submit_right(admin, new_user, anon):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    reader = new_user()
    make_team(admin, org, [(reader, "MEMBER")], project=proj, level="READER")
    stranger = new_user()
    pid = suspended(admin, parts={"org": org, "project": proj})
    for who, code in ((anon, 401), (stranger, 403), (reader, 403)):
        r = who.get("/forms/%s/myForm/form/" % pid, allow_redirects=False)
        if who is anon:  # a browser without a session: to the login, which comes back
            assert r.status_code == 303, r.text
            assert r.headers["Location"] == "/#/login?from=%%2Fforms%%2F%s%%2FmyForm%%2Fform%%2F" % pid
        else:
            assert r.status_code == code, r.text
        assert who.get("/forms/%s/myForm/form/data.js" % pid).status_code == code
        assert who.get("/forms/%s/myForm/shared/common.css" % pid).status_code == code
        assert who.post("/api/service/custom_form/%s/myForm/start" % pid).status_code == code
        r = who.post("/api/service/custom_form/%s/myForm/continue" % pid, data={"name": "A B"},
                     allow_redirects=False)
        assert r.status_code == code, r.text
    assert status(admin, pid)["status"] == "SUSPENDED"


def test_run_as_user_may_open_and_submit(admin, new_user):
    approver = new_user()
    other = new_user()
    flow = """
flows:
  default:
    - form: myForm
      runAs:
        username: ["%s"]
    - log: "by ${myForm.name}"
forms:
  myForm:
    - name: {type: string}
""" % approver.username
    pid = suspended(admin, flow=flow)
    assert other.get("/forms/%s/myForm/form/" % pid).status_code == 403
    assert approver.get("/forms/%s/myForm/form/" % pid).status_code == 200
    r = approver.post("/api/service/custom_form/%s/myForm/continue" % pid, data={"name": "approver"},
                      allow_redirects=False)
    assert r.status_code == 303, r.text
    wait_process(admin, pid)
    assert "by approver" in process_log(admin, pid)


def test_unknown_form_and_finished_process(admin):
    pid = suspended(admin)
    assert admin.get("/forms/%s/nope/form/" % pid).status_code == 404
    assert admin.post("/api/service/custom_form/%s/nope/start" % pid).status_code == 404
    assert admin.get("/forms/%s/myForm/form/missing.js" % pid).status_code == 404
    assert admin.get("/forms/00000000-0000-4000-8000-000000000000/myForm/form/").status_code == 404
    r = admin.post("/api/service/custom_form/%s/myForm/continue" % pid, data={"name": "A B"},
                   allow_redirects=False)
    assert r.status_code == 303
    wait_process(admin, pid)
    r = admin.get("/forms/%s/myForm/form/" % pid)
    assert r.status_code == 409, r.text
    assert admin.post("/api/service/custom_form/%s/myForm/continue" % pid,
                      data={"name": "A B"}).status_code == 409
