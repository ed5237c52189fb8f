"""Trigger processes and issue 24: a trigger may start only a public flow when the
definition declares publicFlows (the server log says why it started nothing), and its
process gets the project's cfg and the repository's _main.json below the trigger's own
arguments."""
import json

from conftest import unique, wait_process
from test_triggers import Project, log_of, repos  # noqa: F401  (repos is a fixture)

FLOW = """
publicFlows:
  - onPublic
flows:
  onPublic:
    - log: "PUBLIC ran a=${a} b=${b} c=${c} d=${d}"
  onHidden:
    - log: "HIDDEN ran"
triggers:
  - %(src)s:
      version: 2
      entryPoint: onHidden
      conditions: {kind: "go"}
  - %(src)s:
      version: 2
      entryPoint: onPublic
      arguments: {d: trigger}
      conditions: {kind: "go"}
"""


def test_triggers_start_public_flows_only_with_the_project_cfg(admin, repos, server):
    p = Project(admin)
    src = unique("ev")
    r = admin.put("/api/v1/org/%s/project/%s/cfg" % (p.org, p.name),
                  json={"arguments": {"a": "project", "b": "project", "c": "project", "d": "project"}})
    assert r.status_code == 200, r.text
    main_json = json.dumps({"arguments": {"b": "workspace", "c": "workspace", "d": "workspace"}})
    flow = FLOW % {"src": src}
    repo = repos({"concord.yml": flow, "_main.json": main_json})
    p.add_repo(repo)
    r = admin.post("/api/v1/events/%s" % src, json={"kind": "go"})
    assert r.status_code == 200, r.text
    ids = r.json()["instanceIds"]
    assert len(ids) == 1, ids
    proc = wait_process(admin, ids[0])
    log = log_of(admin, ids[0])
    assert proc["status"] == "FINISHED", log
    assert "PUBLIC ran a=project b=workspace c=workspace d=trigger" in log, log
    assert [x["instanceId"] for x in p.processes()] == ids
    assert "entryPoint 'onHidden' is not a public flow" in server.read_log()
