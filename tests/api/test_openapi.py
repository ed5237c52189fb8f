"""The OpenAPI document (issue 12 part 2): GET /api/openapi.json, public, built from the
route tables; valid for a standard validator (@apidevtools/swagger-parser, installed by
scripts/npm-deps); every documented operation exists on the server and every path
parameter is declared.  tests/unit/test_openapi.c walks the route table itself and fails
for a route without documentation."""
import json
import os
import re
import subprocess

import pytest

from conftest import ROOT

VALIDATOR = os.path.join(ROOT, "tests", "openapi")
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


@pytest.fixture(scope="module")
def doc(server):
    import requests

    r = requests.get(server.url + "/api/openapi.json", timeout=30)  # no credentials
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json")
    return r.json()


def operations(doc):
    for path, item in doc["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield path, method, op


def test_served_publicly(doc):
    assert doc["openapi"] == "3.1.0"
    assert doc["info"]["title"] and doc["info"]["version"]
    for path in ("/api/openapi.json", "/api/v1/audit", "/api/v1/process", "/api/v1/org/{org}/secret/{name}",
                 "/api/v1/org/{org}/inventory/{inv}/data/{path}", "/metrics"):
        assert path in doc["paths"], path
    schemes = doc["components"]["securitySchemes"]
    assert schemes["basic"] == {"type": "http", "scheme": "basic", "description": schemes["basic"]["description"]}
    assert schemes["apiKey"]["in"] == "header" and schemes["apiKey"]["name"] == "Authorization"
    assert schemes["session"]["in"] == "cookie"
    assert schemes["processSession"]["name"] == "X-Concord-SessionToken"


def test_validates_with_a_standard_validator(doc):
    if subprocess.run([os.path.join(ROOT, "scripts", "npm-deps")]).returncode != 0:
        pytest.fail("scripts/npm-deps could not install the validator (needs npm: scripts/deps)")
    r = subprocess.run(["node", os.path.join(VALIDATOR, "validate.js"), "-"], input=json.dumps(doc).encode(),
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode() + r.stdout.decode()
    assert b"valid: OpenAPI 3.1.0" in r.stdout


def test_validator_refuses_a_broken_document(doc):
    """The validator is not a rubber stamp: an answer without description is refused."""
    broken = json.loads(json.dumps(doc))
    del broken["paths"]["/api/v1/audit"]["get"]["responses"]["200"]["description"]
    r = subprocess.run(["node", os.path.join(VALIDATOR, "validate.js"), "-"], input=json.dumps(broken).encode(),
                       capture_output=True, timeout=120)
    assert r.returncode == 1 and b"invalid" in r.stderr


def test_path_parameters_declared(doc):
    for path, method, op in operations(doc):
        in_path = set(re.findall(r"{([^}]+)}", path))
        declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
        assert in_path == declared, (method, path, in_path, declared)
        assert all(p["required"] for p in op.get("parameters", []) if p["in"] == "path")
        ids = [p["name"] for p in op.get("parameters", [])]
        assert len(ids) == len(set(ids)), (method, path, ids)


def test_errors_and_security(doc):
    error = doc["components"]["schemas"]["Error"]
    assert error["required"] == ["ok", "message"] and error["properties"]["ok"] == {"enum": [False]}
    seen_ids = set()
    for path, method, op in operations(doc):
        assert op["summary"], (method, path)
        assert op["operationId"] not in seen_ids
        seen_ids.add(op["operationId"])
        responses = op["responses"]
        assert "500" in responses, (method, path)
        if op.get("security") != []:  # protected: 401 without credentials
            assert "401" in responses, (method, path)
        for status, resp in responses.items():
            if status >= "400":
                assert resp == {"$ref": "#/components/responses/Error%s" % status}, (method, path, status)
                assert "Error" + status in doc["components"]["responses"]


def test_every_operation_is_a_route_of_the_server(doc, server):
    """Each documented operation reaches a route: without credentials a protected one is
    answered 401 (never 404 "no such endpoint" or 405)."""
    import requests

    for path, method, op in operations(doc):
        if op.get("security") == []:
            continue
        url = server.url + re.sub(r"{[^}]+}", "x-1", path)
        r = requests.request(method.upper(), url, timeout=30)
        assert r.status_code == 401, (method, path, r.status_code, r.text)


def test_audit_and_bodies_documented(doc):
    audit = doc["paths"]["/api/v1/audit"]["get"]
    names = {p["name"] for p in audit["parameters"]}
    assert {"object", "action", "username", "after", "before", "limit", "offset"} <= names
    item = audit["responses"]["200"]["content"]["application/json"]["schema"]["items"]
    assert {"entryDate", "action", "object", "details"} <= set(item["properties"])
    start = doc["paths"]["/api/v1/process"]["post"]
    assert "multipart/form-data" in start["requestBody"]["content"]
    org = doc["paths"]["/api/v1/org"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert "name" in org["properties"]
    assert "204" in doc["paths"]["/api/v1/process/{id}"]["delete"]["responses"]
