"""Per-process limits enforced by the supervisor."""
from conftest import ADMIN_KEY, Client, process_log, start_process, wait_process

NOISY = """
flows:
  default:
    - call: say
      withItems: "${range}"
  say:
    - log: "line ${item} ................................................................"
"""


def test_log_limit_stops_the_process(fresh_server):
    srv = fresh_server(args=["--limit-process-log-bytes", "4k"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    pid = start_process(admin, NOISY, files={"request": (b'{"arguments": {"range": %s}}' % str(list(range(2000))).encode(),
                                           "application/json")})
    p = wait_process(admin, pid, timeout=60)
    assert p["status"] == "FAILED"
    log = process_log(admin, pid)
    assert "Maximum log size reached" in log
    # what was kept is the first 4 KiB of the flow's output plus the server's lines
    assert len(log.encode()) < 4096 + 1024
    assert "line 0 " in log


def test_runner_environment_is_clean(admin):
    flow = """
flows:
  default:
    - log: "home=${env.get('HOME')} tmp=${env.get('TMPDIR')} key=${env.getOrDefault('ACCORD_ADMIN_API_KEY', 'none')}"
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    assert "key=none" in log
    assert "home=$WORK_DIR" in log and "tmp=$WORK_DIR" in log
