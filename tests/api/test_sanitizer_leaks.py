"""LeakSanitizer in the runners of the sanitizer build (docs/operations.md "The sanitizers
in the tests"): a leak that runner code makes is reported by the check that a forked runner
runs before `_exit` (base/sanitizer.h, runner/zygote.c); the report is in the process's log,
after its result, the runner exits with the sanitizer status (23), the server logs that, and
the test server's cleanup fails on the line, so the suite fails on any runner's leak."""
import time

import pytest

from conftest import ADMIN_KEY, BIN, Client, Server, backend_neutral, process_log, start_process, wait_process

HELLO = 'flows:\n  default:\n    - log: "hello"\n'
LEAK_BYTES = 4242  # SANITIZER_TEST_LEAK_BYTES
STOPPED = "a sanitizer stopped it"


def sanitizer_build():
    with open(BIN, "rb") as f:
        return b"__lsan_default_options" in f.read()


pytestmark = [
    pytest.mark.skipif(not sanitizer_build(), reason="LeakSanitizer is in the sanitizer build only"),
    backend_neutral("the runner's leak check at its exit: the database takes no part"),
]


def wait_log(srv, text, seconds=30):
    deadline = time.time() + seconds
    while text not in srv.read_log():
        assert time.time() < deadline, "no %r in the server log:\n%s" % (text, srv.read_log()[-4000:])
        time.sleep(0.05)


def test_a_runner_leak_is_reported_and_fails_the_server_cleanup():
    srv = Server(env={"ACCORD_TEST_RUNNER_LEAK": "1"}).start()
    try:
        admin = Client(srv.url, ADMIN_KEY)
        iid = start_process(admin, HELLO)
        # the flow's result stands: the check runs after the runner reported it
        assert wait_process(admin, iid)["status"] == "FINISHED"
        wait_log(srv, STOPPED)
        log = process_log(admin, iid)
        assert "ERROR: LeakSanitizer" in log, log
        assert "Direct leak of %d byte(s) in 1 object(s)" % LEAK_BYTES in log, log
        # only the planted block: nothing else of the runner is reported
        assert log.count("leak of") == 1, log
        assert "exit status 23" in srv.read_log()
    finally:
        with pytest.raises(AssertionError, match=STOPPED):
            srv.cleanup()


def test_a_runner_without_a_leak_passes(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    ids = [start_process(admin, HELLO) for _ in range(3)]
    for iid in ids:
        assert wait_process(admin, iid)["status"] == "FINISHED"
        assert "Sanitizer" not in process_log(admin, iid)
    assert srv.stop() == 0
    assert STOPPED not in srv.read_log()
