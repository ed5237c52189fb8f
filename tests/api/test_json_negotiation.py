"""JSON answers and the console's poll (issue 28 item 6): a GET's JSON answer carries an
ETag of its body; the same If-None-Match is a 304 without a body while nothing changed and
a 200 once something did; a client that accepts gzip gets big answers gzipped (the same
JSON once unpacked), one that does not gets them plain; a handler's own Cache-Control
(no-store) is kept."""
import gzip

from proc_util import make_org, make_project


def raw_get(client, path, **headers):
    return client.get(path, headers=headers, stream=True)


def test_unchanged_list_is_a_304_and_a_change_is_not(admin):
    org, _ = make_org(admin)
    for _ in range(3):
        make_project(admin, org, description="x" * 200)
    path = "/api/v1/org/%s/project" % org
    first = admin.get(path)
    assert first.status_code == 200
    etag = first.headers["ETag"]
    assert first.headers["Vary"] == "Accept-Encoding"
    assert first.headers["Cache-Control"] == "private, no-cache"
    again = admin.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["ETag"] == etag
    make_project(admin, org)
    changed = admin.get(path, headers={"If-None-Match": etag})
    assert changed.status_code == 200 and len(changed.json()) == 4
    assert changed.headers["ETag"] != etag


def test_big_answers_are_gzipped_when_the_client_accepts_it(admin):
    org, _ = make_org(admin)
    for _ in range(10):
        make_project(admin, org, description="y" * 200)
    path = "/api/v1/org/%s/project" % org
    packed = raw_get(admin, path, **{"Accept-Encoding": "gzip"})
    assert packed.headers["Content-Encoding"] == "gzip"
    body = packed.raw.read(decode_content=False)
    assert len(body) == int(packed.headers["Content-Length"])
    plain = raw_get(admin, path, **{"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers
    text = plain.raw.read(decode_content=False)
    assert gzip.decompress(body) == text and len(body) < len(text) // 3
    assert packed.headers["ETag"] != plain.headers["ETag"]  # one per representation
    refused = raw_get(admin, path, **{"Accept-Encoding": "gzip;q=0"})
    assert "Content-Encoding" not in refused.headers
    # the 304 works for either representation
    assert admin.get(path, headers={"If-None-Match": packed.headers["ETag"], "Accept-Encoding": "gzip"}).status_code == 304


def test_small_answers_errors_and_writes_are_left_alone(admin, anon):
    small = raw_get(admin, "/api/v1/server/version", **{"Accept-Encoding": "gzip"})
    assert small.status_code == 200 and "Content-Encoding" not in small.headers
    err = anon.get("/api/v1/org/no-such-org-here/project", headers={"Accept-Encoding": "gzip"})
    assert "ETag" not in err.headers
    org, _ = make_org(admin)
    r = admin.post("/api/v1/org/%s/project" % org, json={"name": "negotiated"}, headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and "ETag" not in r.headers
