"""SQLite's write-ahead log stays bounded (issue 28, server side: it grew to 3.27 GB beside a
146 MB database under load and kept that size once idle): at every heartbeat a log past
--limit-wal-bytes is checkpointed and truncated, and /metrics shows its size."""
import os
import threading
import time

import requests

from conftest import ADMIN_KEY, Client, sqlite_only, start_process, wait_process

GROW = "".join('    - set: {s: "${s.concat(s)}"}\n' for _ in range(12))  # 64 KiB
LOUD = 'flows:\n  default:\n    - set: {s: "0123456789abcdef"}\n' + GROW + '    - log: "${s}"\n    - log: "${s}"\n'


@sqlite_only
def test_the_wal_is_truncated_under_load_and_once_idle(fresh_server):
    srv = fresh_server(args=["--limit-wal-bytes", "1M", "--node-heartbeat", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    wal = os.path.join(srv.data_dir, "accord.db-wal")
    stop = threading.Event()

    def poll():  # readers all along, as a console or a dashboard
        while not stop.is_set():
            requests.get(srv.url + "/api/v2/process", params={"limit": 50},
                         headers={"Authorization": ADMIN_KEY}, timeout=30)

    readers = [threading.Thread(target=poll) for _ in range(2)]
    for t in readers:
        t.start()
    try:
        grew = 0
        ids = []
        for _ in range(40):
            ids.append(start_process(admin, LOUD))
            grew = max(grew, os.path.getsize(wal) if os.path.exists(wal) else 0)
        for pid in ids:
            assert wait_process(admin, pid, timeout=120)["status"] == "FINISHED"
            grew = max(grew, os.path.getsize(wal) if os.path.exists(wal) else 0)
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert grew > 1024 * 1024, "the test wrote too little to check anything: %d bytes" % grew
    deadline = time.time() + 60
    while time.time() < deadline and os.path.getsize(wal) > 1024 * 1024:
        time.sleep(0.2)
    assert os.path.getsize(wal) <= 1024 * 1024, "the idle log kept %d bytes" % os.path.getsize(wal)
    text = requests.get(srv.url + "/metrics", timeout=30).text
    assert "accord_store_wal_bytes " in text
