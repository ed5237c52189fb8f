"""Forms through the API (issue 9 part 2): GET/POST /api/v1/process/{id}/form[/{name}]."""
from conftest import process_log, start_process, wait_process
from proc_util import make_org, make_project, make_team, status, wait_for

SURVEY = """
flows:
  default:
    - form: survey
      values:
        note: "preset"
    - log: "got color=${survey.color} code=${survey.code} age=${survey.age} ok=${survey.ok} when=${survey.when} tags=${survey.tags} note=${survey.note}"
forms:
  survey:
    - color: {label: "Color", type: string, allow: [red, green]}
    - code: {type: "string?", pattern: "[A-Z]{3}"}
    - age: {type: "int?", min: 21, max: 100}
    - ok: {type: boolean}
    - when: {type: "date?"}
    - tags: {type: "string*", allow: [a, b]}
    - note: {type: string, readonly: true}
"""


def suspended(client, flow=SURVEY, parts=None):
    pid = start_process(client, flow, parts=parts)
    p = wait_process(client, pid, ("SUSPENDED", "FINISHED", "FAILED"))
    assert p["status"] == "SUSPENDED", process_log(client, pid)
    return pid


def form_url(pid, name=None):
    return "/api/v1/process/%s/form" % pid + ("/" + name if name else "")


def test_list_and_get(admin):
    pid = suspended(admin)
    r = admin.get(form_url(pid))
    assert r.status_code == 200, r.text
    forms = r.json()
    assert [f["name"] for f in forms] == ["survey"]
    assert forms[0]["custom"] is False and forms[0]["yield"] is False
    assert forms[0]["formInstanceId"]
    r = admin.get(form_url(pid, "survey"))
    assert r.status_code == 200, r.text
    f = r.json()
    assert f["processInstanceId"] == pid and f["name"] == "survey"
    fields = {x["name"]: x for x in f["fields"]}
    assert list(fields) == ["color", "code", "age", "ok", "when", "tags", "note"]
    assert fields["color"]["label"] == "Color"
    assert fields["color"]["type"] == "string"
    assert fields["color"]["cardinality"] == "ONE_AND_ONLY_ONE"
    assert fields["color"]["allowedValue"] == ["red", "green"]
    assert fields["code"]["cardinality"] == "ONE_OR_NONE"
    assert fields["code"]["options"]["pattern"] == "[A-Z]{3}"
    assert fields["age"]["type"] == "int" and fields["age"]["options"]["min"] == 21
    assert fields["tags"]["cardinality"] == "ANY"
    assert fields["note"]["value"] == "preset" and fields["note"]["options"]["readonly"] is True


def test_validation_errors_per_field(admin):
    pid = suspended(admin)
    r = admin.post(form_url(pid, "survey"), json={
        "color": "blue", "code": "abcd", "age": 101, "ok": "maybe", "when": "soon", "tags": ["a", "c"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False and body["processInstanceId"] == pid
    errs = body["errors"]
    assert set(errs) == {"color", "code", "age", "ok", "when", "tags"}, errs
    assert errs["color"] == "Color: value 'blue' is not allowed, valid values: [red, green]"
    assert "doesn't match pattern" in errs["code"]
    assert errs["age"] == "age: value '101' must be within 21 and 100 (inclusive)"
    assert errs["ok"] == "ok: expected a boolean value, got maybe"
    assert errs["when"] == "when: expected a date value, got soon"
    assert "is not allowed" in errs["tags"]
    # required fields missing, int below min, a string for an int
    r = admin.post(form_url(pid, "survey"), json={"age": "abc"})
    errs = r.json()["errors"]
    assert errs["color"] == "Color: Invalid cardinality, expected a single value"
    assert errs["ok"] == "ok: Invalid cardinality, expected a single value"
    assert errs["age"] == "age: expected an integer value, got abc"
    assert "code" not in errs and "tags" not in errs  # optional (? and *)
    r = admin.post(form_url(pid, "survey"), json={"color": "red", "ok": True, "age": 20})
    assert "age: value '20' must be within 21 and 100 (inclusive)" == r.json()["errors"]["age"]
    # nothing changed: still suspended with the form pending
    assert status(admin, pid)["status"] == "SUSPENDED"
    assert [f["name"] for f in admin.get(form_url(pid)).json()] == ["survey"]
    r = admin.post(form_url(pid, "survey"), data="{", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert status(admin, pid)["status"] == "SUSPENDED"


def test_valid_submit_resumes_with_values(admin):
    pid = suspended(admin)
    r = admin.post(form_url(pid, "survey"), json={
        "color": "green", "code": "ABC", "age": "30", "ok": "true", "when": "2026-01-02",
        "tags": "b", "note": "changed", "unknown": 1})
    assert r.status_code == 200, r.text
    assert r.json() == {"ok": True, "processInstanceId": pid}
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "got color=green code=ABC age=30 ok=true when=2026-01-02T00:00:00.000Z tags=[b] note=preset" in log
    assert "Form 'survey' submitted by" in log
    assert admin.get(form_url(pid)).json() == []
    r = admin.post(form_url(pid, "survey"), json={})
    assert r.status_code == 409, r.text
    assert r.json()["ok"] is False


def test_parallel_forms(admin):
    pid = suspended(admin, """
flows:
  default:
    - parallel:
        - block:
            - form: first
              fields:
                - a: {type: string}
            - log: "branch a=${first.a}"
        - block:
            - form: second
              fields:
                - b: {type: int}
            - log: "branch b=${second.b}"
    - log: "both done"
""")
    assert sorted(f["name"] for f in admin.get(form_url(pid)).json()) == ["first", "second"]
    r = admin.post(form_url(pid, "first"), json={"a": "x"})
    assert r.json()["ok"] is True, r.text

    def second_only():
        if status(admin, pid)["status"] != "SUSPENDED":
            return False
        return [f["name"] for f in admin.get(form_url(pid)).json()] == ["second"]
    wait_for(second_only)
    assert admin.get(form_url(pid, "first")).status_code == 404
    r = admin.post(form_url(pid, "second"), json={"b": 7})
    assert r.json()["ok"] is True, r.text
    p = wait_process(admin, pid)
    assert p["status"] == "FINISHED", process_log(admin, pid)
    log = process_log(admin, pid)
    assert "branch a=x" in log and "branch b=7" in log and "both done" in log


def test_file_field_multipart(admin):
    pid = suspended(admin, """
flows:
  default:
    - form: upload
      fields:
        - doc: {type: file}
        - title: {type: string}
    - log: "path=${upload.doc} title=${upload.title}"
    - log: "content=${resource.asString(upload.doc)}"
""")
    r = admin.post(form_url(pid, "upload"), json={"doc": "/etc/passwd", "title": "t"})
    assert "multipart" in r.json()["errors"]["doc"]
    r = admin.post(form_url(pid, "upload") + "/multipart", files={"title": (None, "")})
    assert r.json()["ok"] is False and r.json()["errors"]["doc"] == "doc: Invalid cardinality, expected a single value"
    r = admin.post(form_url(pid, "upload") + "/multipart",
                   files={"title": (None, "Report"), "doc": ("a.txt", b"hello file", "text/plain")})
    assert r.status_code == 200, r.text
    assert r.json()["ok"] is True, r.text
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "path=_form_files/upload/doc title=Report" in log
    assert "content=hello file" in log
    assert "_accordResumeFiles" not in log


def test_access(admin, new_user):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    reader = new_user()
    make_team(admin, org, [(reader, "MEMBER")], project=proj, level="READER")
    stranger = new_user()
    pid = suspended(admin, parts={"org": org, "project": proj})
    assert stranger.get(form_url(pid)).status_code == 403
    assert stranger.get(form_url(pid, "survey")).status_code == 403
    assert reader.get(form_url(pid)).status_code == 200
    r = reader.post(form_url(pid, "survey"), json={"color": "red", "ok": True})
    assert r.status_code == 403, r.text
    assert stranger.post(form_url(pid, "survey"), json={"color": "red", "ok": True}).status_code == 403
    assert status(admin, pid)["status"] == "SUSPENDED"


def test_run_as_restricts_submitters(admin, new_user):
    approver = new_user()
    other = new_user()
    pid = suspended(admin, """
flows:
  default:
    - form: approval
      saveSubmittedBy: true
      runAs:
        username: ["%s"]
      fields:
        - approved: {type: boolean}
    - log: "approved=${approval.approved} by=${approval.submittedBy.username}"
""" % approver.username)
    assert admin.get(form_url(pid)).json()[0]["runAs"] == {"username": [approver.username]}
    r = other.post(form_url(pid, "approval"), json={"approved": True})
    assert r.status_code == 403, r.text
    assert approver.get(form_url(pid, "approval")).status_code == 200
    r = approver.post(form_url(pid, "approval"), json={"approved": True})
    assert r.status_code == 200 and r.json()["ok"] is True, r.text
    wait_process(admin, pid)
    assert "approved=true by=%s" % approver.username in process_log(admin, pid)


def test_unknown_form_and_process(admin):
    pid = suspended(admin)
    r = admin.get(form_url(pid, "nope"))
    assert r.status_code == 404
    assert "Form not found: nope" in r.json()["message"]
    assert admin.post(form_url(pid, "nope"), json={}).status_code == 404
    assert admin.get(form_url("00000000-0000-4000-8000-000000000000")).status_code == 404
    assert admin.get(form_url("not-a-uuid", "x")).status_code == 404


def test_not_suspended(admin):
    pid = start_process(admin, "flows:\n  default:\n    - log: hi\n")
    wait_process(admin, pid)
    assert admin.get(form_url(pid)).json() == []
    r = admin.post(form_url(pid, "survey"), json={})
    assert r.status_code == 409
    assert "not suspended" in r.json()["message"]


def test_at_least_one_and_lists(admin):
    pid = suspended(admin, """
flows:
  default:
    - form: pick
      fields:
        - nums: {type: "int+", max: 10}
        - one: {type: "string?"}
    - log: "nums=${pick.nums} one=${pick.one}"
""")
    r = admin.post(form_url(pid, "pick"), json={"nums": []})
    assert r.json()["errors"]["nums"] == "nums: Invalid cardinality, expected at least a single value"
    r = admin.post(form_url(pid, "pick"), json={"nums": [1, 11], "one": ["x", "y"]})
    errs = r.json()["errors"]
    assert errs["nums"] == "nums [1]: value '11' must be less or equal than 10" and errs["one"] == "one: Invalid cardinality, expected a single optional value"
    assert admin.get(form_url(pid, "pick")).json()["fields"][0]["cardinality"] == "AT_LEAST_ONE"
    r = admin.post(form_url(pid, "pick") + "/multipart",
                   files=[("nums", (None, "3")), ("nums", (None, "4")), ("one", (None, "z"))])
    assert r.json()["ok"] is True, r.text
    wait_process(admin, pid)
    assert "nums=[3, 4] one=z" in process_log(admin, pid)
