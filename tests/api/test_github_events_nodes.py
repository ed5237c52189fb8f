"""GitHub events on two `accord serve` nodes of one PostgreSQL database (issue 26 part 3):
a trigger stored through one node fires for a delivery to the other; one delivery sent to
both nodes at once (GitHub retries a delivery it thinks failed, and a load balancer may
send the retry elsewhere) starts one process; a push delivered to one node runs the pushed
commit wherever its process runs.

Runs only against PostgreSQL ($ACCORD_TEST_DB), as test_nodes.py, whose fixtures it uses."""
import threading
import uuid

from conftest import ADMIN_KEY, Client, process_log, wait_process
from test_github_events import SECRET, GhRepo, deliver, flow, push_payload, started
from test_nodes import nodes, pytestmark  # noqa: F401 (fixture, skip mark)
from test_triggers import Project

TRIGGER = "- github:\n    version: 2\n    entryPoint: onEvent\n    conditions:\n      type: push\n"
ARGS = ["--repo-fetch-max-age", "0"]


def test_deliveries_across_two_nodes(nodes, monkeypatch):  # noqa: F811
    monkeypatch.setenv("ACCORD_GITHUB_SECRET", SECRET)  # both nodes' environment
    a, b, _ = nodes(ARGS, ARGS)
    b.start()
    admin_a, admin_b = Client(a.url, ADMIN_KEY), Client(b.url, ADMIN_KEY)
    repo = GhRepo({"concord.yml": flow("pushed", TRIGGER)})
    try:
        p = Project(admin_a)
        p.add_repo(repo, name="widgets")
        # stored through A, delivered to B
        assert deliver(b, "push", push_payload(repo)).status_code == 200
        first = started(p, 1)[0]["instanceId"]
        assert wait_process(admin_b, first)["status"] == "FINISHED"

        # one delivery to both nodes at once: acted on once
        delivery = str(uuid.uuid4())
        payload = push_payload(repo)
        answers = []
        threads = [threading.Thread(target=lambda n=n: answers.append(deliver(n, "push", payload, delivery=delivery)))
                   for n in (a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(r.status_code for r in answers) == [200, 200], [r.text for r in answers]
        procs = started(p, 2)
        for x in procs:
            wait_process(admin_a, x["instanceId"])
        assert len(p.processes()) == 2, p.processes()

        # a push delivered to A runs the pushed commit (the repository refreshed in the
        # database both nodes read), wherever the process runs
        repo.commit({"concord.yml": flow("second", TRIGGER)})
        assert deliver(a, "push", push_payload(repo)).status_code == 200
        procs = started(p, 3)
        logs = [process_log(admin_b, x["instanceId"]) for x in procs
                if wait_process(admin_b, x["instanceId"])["status"] == "FINISHED"]
        assert sum("second push" in log for log in logs) == 1, logs
    finally:
        repo.cleanup()
