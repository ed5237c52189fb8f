"""An outsider cannot tell the names in a PRIVATE org from names that do not exist
(issue 15 part 11): every request answers as for a missing org."""
import pytest

from conftest import unique


def answers(client, org, names):
    """(status, message with the org name replaced) for requests naming things in org."""
    p, s, i = names
    reqs = [
        ("GET", "/api/v1/org/%s" % org, None),
        ("GET", "/api/v1/org/%s/project/%s" % (org, p), None),
        ("GET", "/api/v2/org/%s/project/%s" % (org, p), None),
        ("GET", "/api/v1/org/%s/project" % org, None),
        ("DELETE", "/api/v1/org/%s/project/%s" % (org, p), None),
        ("GET", "/api/v2/org/%s/secret/%s" % (org, s), None),
        ("POST", "/api/v1/org/%s/secret/%s/data" % (org, s), None),
        ("GET", "/api/v2/org/%s/secret" % org, None),
        ("GET", "/api/v1/org/%s/inventory/%s" % (org, i), None),
        ("GET", "/api/v1/org/%s/inventory/%s/data" % (org, i), None),
        ("GET", "/api/v1/org/%s/inventory" % org, None),
        ("GET", "/api/v1/org/%s/team" % org, None),
        ("POST", "/api/v1/org", {"name": org}),
    ]
    out = []
    for method, path, body in reqs:
        r = client.req(method, path, json=body)
        try:
            v = r.json() if r.content else ""
            msg = v.get("message", "") if isinstance(v, dict) else repr(v)
        except ValueError:
            msg = r.text
        out.append((method, path.replace(org, "ORG"), r.status_code, msg.replace(org, "ORG")))
    return out


def test_outsider_cannot_tell_private_org_names(admin, new_user):
    outsider = new_user()
    org = unique("priv")
    assert admin.post("/api/v1/org", json={"name": org, "visibility": "PRIVATE"}).status_code == 200
    p, s, i = unique("p"), unique("s"), unique("i")
    assert admin.post("/api/v1/org/%s/project" % org, json={"name": p}).status_code == 200
    assert admin.post("/api/v1/org/%s/secret" % org,
                      files={"type": (None, "data"), "name": (None, s), "data": (None, "x")}).status_code == 200
    assert admin.post("/api/v1/org/%s/inventory" % org, json={"name": i}).status_code == 200
    existing = answers(outsider, org, (p, s, i))
    missing = answers(outsider, unique("none"), (p, s, i))
    for e, m in zip(existing, missing):
        assert e[2] == m[2] and e[3].replace("ORG", "") == m[3].replace("ORG", ""), (e, m)
    assert all(st in (404, 403) for _, _, st, _ in existing), existing
    # members still see it
    member_view = admin.get("/api/v1/org/%s/project/%s" % (org, p))
    assert member_view.status_code == 200
