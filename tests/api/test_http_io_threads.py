"""--http-io-threads (docs/operations.md "Threads"): libmicrohttpd's event loops, one per CPU
by default.  Every count serves the same answers, quick requests on the event loops and
slow ones on the workers, and a count out of range stops the start with a clear message."""
import concurrent.futures
import os

import pytest

from conftest import ADMIN_KEY, Client, backend_neutral

pytestmark = backend_neutral("the HTTP event-loop threads' setting and scheduling: the database takes no part")


@pytest.mark.parametrize("threads", ["1", "3"])
def test_any_count_serves_quick_and_slow_requests(fresh_server, threads):
    s = fresh_server(args=["--http-io-threads", threads]).start()
    assert "http_io_threads=%s" % threads in s.read_log()
    admin = Client(s.url, ADMIN_KEY)

    def quick(_):
        return admin.get("/api/v1/apikey").status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:  # connections spread over the loops
        assert set(pool.map(quick, range(64))) == {200}
    r = admin.post("/api/v1/org", json={"name": "io-threads-" + threads})  # a write: on a worker
    assert r.status_code == 200, r.text


def test_default_is_one_per_cpu(server):
    assert "http_io_threads=%d" % os.sysconf("SC_NPROCESSORS_ONLN") in server.read_log()


def test_out_of_range_is_refused_at_start(fresh_server):
    s = fresh_server(args=["--http-io-threads", "65"])
    with pytest.raises(RuntimeError) as e:
        s.start()
    assert "--http-io-threads must be between 0 and 64, got '65'" in str(e.value)
