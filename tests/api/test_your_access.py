"""What the caller may do with a project or a secret (issue 28 item 4): GET of one names
the caller's level as `yourAccess` (READER, WRITER, OWNER) by the same rules that decide
the requests, so the console offers only what will be allowed; a record sent back as it was
read is still accepted."""
from proc_util import make_org, make_project, make_team


def level(client, path):
    r = client.get(path)
    assert r.status_code == 200, r.text
    return r.json()["yourAccess"]


def test_your_access_on_projects_and_secrets(admin, new_user):
    org, _ = make_org(admin)
    reader, writer, outsider_reader = new_user(), new_user(), new_user(roles=["concordSystemReader"])
    project, _ = make_project(admin, org, visibility="PRIVATE")
    make_team(admin, org, [(reader, "MEMBER")], project=project, level="READER")
    make_team(admin, org, [(writer, "MEMBER")], project=project, level="WRITER")
    path = "/api/v1/org/%s/project/%s" % (org, project)
    assert level(admin, path) == "OWNER"
    assert level(reader, path) == "READER"
    assert level(writer, path) == "WRITER"
    assert level(outsider_reader, path) == "READER"

    r = admin.post("/api/v1/org/%s/secret" % org, files={"name": (None, "yours"), "type": (None, "data"),
                                                          "data": ("d", b"v", "application/octet-stream")})
    assert r.status_code == 200, r.text
    spath = "/api/v1/org/%s/secret/yours" % org
    assert level(admin, spath) == "OWNER"
    assert level(reader, spath) == "READER"  # a PUBLIC secret: every member reads it
    rec = admin.get(path).json()
    assert admin.post("/api/v1/org/%s/project" % org, json=rec).status_code == 200
