"""GET /metrics: the Prometheus text format (checked with promtool), values that move as
processes run, who may read it (--metrics), and switching it off (docs/operations.md)."""
import re
import shutil
import socket
import subprocess

import pytest
import requests

from conftest import ADMIN_KEY, Client, start_process, wait_process
from proc_util import wait_for

HELLO = 'flows:\n  default:\n    - log: "metrics"\n'


def scrape(url, **kw):
    r = requests.get(url + "/metrics", timeout=30, **kw)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    return r.text


def value(text, series):
    """The value of one series, e.g. 'accord_process_starts_total' or
    'accord_process_finished_total{status="FINISHED"}'."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return 0.0


def test_promtool_accepts_the_output(fresh_server):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: scripts/deps installs Debian's prometheus package"
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    wait_process(admin, start_process(admin, HELLO))
    admin.get("/api/v1/org/nope")  # a 404 and an unmatched route in the series
    admin.get("/no/such/route")
    text = scrape(srv.url)
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr + "\n" + text


def test_counters_move_as_processes_run(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    before = scrape(srv.url)
    ids = [start_process(admin, HELLO) for _ in range(10)]
    for i in ids:
        assert wait_process(admin, i)["status"] == "FINISHED"
    failed = start_process(admin, 'flows:\n  default:\n    - throw: "boom"\n')
    assert wait_process(admin, failed)["status"] == "FAILED"
    # The counters of an end move just after its status is stored (the finished counter
    # last, queue/end/ended.c): wait for all eleven ends to be counted.
    ends = ['accord_process_finished_total{status="FINISHED"}', 'accord_process_finished_total{status="FAILED"}']

    def counted():
        t = scrape(srv.url)
        return t if sum(value(t, s) - value(before, s) for s in ends) >= 11 else None

    after = wait_for(counted)

    def delta(series):
        return value(after, series) - value(before, series)

    assert delta("accord_process_starts_total") == 11
    assert delta('accord_process_finished_total{status="FINISHED"}') == 10
    assert delta('accord_process_finished_total{status="FAILED"}') == 1
    assert delta('accord_http_requests_total{method="POST",route="/api/v1/process",status="2xx"}') == 11
    assert delta("accord_process_start_to_running_seconds_count") == 11
    assert delta("accord_process_running_to_final_seconds_count") == 11
    assert delta("accord_process_log_bytes_total") > 0
    assert delta("accord_store_transaction_seconds_count") >= 11
    assert value(after, "accord_runner_peak_rss_bytes") > 100 * 1024
    assert value(after, "accord_workers_slots") >= 1
    assert value(after, 'accord_processes{status="RUNNING"}') == 0
    assert value(after, "accord_queue_depth") == 0
    # a latency histogram per route pattern, with buckets in seconds
    assert re.search(r'accord_http_request_duration_seconds_bucket\{method="POST",route="/api/v1/process",'
                     r'le="\+Inf"\} \d+', after)


def test_queue_gauges_see_waiting_processes(fresh_server):
    # one worker busy with a long sleep: the next two wait in the queue
    srv = fresh_server(args=["--workers", "1"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    sleeper = start_process(admin, "flows:\n  default:\n    - expr: ${sleep.ms(3000)}\n")
    wait_process(admin, sleeper, statuses=("RUNNING",))
    queued = [start_process(admin, HELLO) for _ in range(2)]
    text = scrape(srv.url)
    assert value(text, 'accord_processes{status="RUNNING"}') == 1
    assert value(text, "accord_queue_depth") == 2
    assert value(text, "accord_workers_busy") == 1
    assert value(text, "accord_queue_oldest_age_seconds") >= 0
    for i in [sleeper] + queued:
        assert wait_process(admin, i)["status"] == "FINISHED"


def test_secret_decryption_and_inventory_refusals_are_counted(fresh_server):
    srv = fresh_server().start()
    admin = Client(srv.url, ADMIN_KEY)
    before = scrape(srv.url)
    r = admin.post("/api/v1/org/Default/secret", files={"name": (None, "met1"), "type": (None, "data"),
                                                        "data": ("d", b"payload", "application/octet-stream")})
    assert r.status_code == 200, r.text
    r = admin.post("/api/v1/org/Default/secret/met1/data")
    assert r.status_code == 200 and r.content == b"payload"
    r = admin.post("/api/v1/org/Default/inventory", json={"name": "inv"})
    assert r.status_code == 200, r.text
    q = "/api/v1/org/Default/inventory/inv/query/all"
    r = admin.post(q, data="select item_data from inventory_data", headers={"Content-Type": "text/plain"})
    assert r.status_code == 200, r.text
    assert admin.post(q + "/exec", json={}).status_code == 200
    r = admin.post(q + "/exec", data="{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    after = scrape(srv.url)
    assert value(after, "accord_secrets_decrypted_total") - value(before, "accord_secrets_decrypted_total") >= 1
    assert value(after, "accord_inventory_query_refused_total") == 1
    assert value(after, "accord_inventory_query_seconds_count") == 1
    assert "payload" not in after


def test_authenticated_mode_needs_an_admin_or_system_reader(fresh_server):
    srv = fresh_server(args=["--metrics", "authenticated"]).start()
    admin = Client(srv.url, ADMIN_KEY)
    r = requests.get(srv.url + "/metrics", timeout=30)
    assert r.status_code == 401, r.text
    for roles, expect in ((None, 403), (["concordSystemReader"], 200)):
        body = {"username": "m-%s" % (roles[0] if roles else "plain"), "type": "LOCAL"}
        if roles:
            body["roles"] = roles
        assert admin.post("/api/v1/user", json=body).status_code == 200
        key = admin.post("/api/v1/apikey", json={"username": body["username"]}).json()["key"]
        r = requests.get(srv.url + "/metrics", headers={"Authorization": key}, timeout=30)
        assert r.status_code == expect, r.text
    assert requests.get(srv.url + "/metrics", headers={"Authorization": ADMIN_KEY}, timeout=30).status_code == 200


def own_address():
    """A non-loopback address of this host, or None."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        ip = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if ip.startswith("127.") else ip


def test_loopback_mode_asks_remote_clients_for_credentials(fresh_server):
    ip = own_address()
    if not ip:
        pytest.skip("this host has no non-loopback IPv4 address to connect from")
    srv = fresh_server(args=["--listen", "0.0.0.0:0"]).start()
    port = srv.url.rsplit(":", 1)[1]
    assert requests.get("http://127.0.0.1:%s/metrics" % port, timeout=30).status_code == 200
    remote = "http://%s:%s/metrics" % (ip, port)
    assert requests.get(remote, timeout=30).status_code == 401
    assert requests.get(remote, headers={"Authorization": ADMIN_KEY}, timeout=30).status_code == 200


def test_public_and_off(fresh_server):
    srv = fresh_server(args=["--metrics", "public"]).start()
    scrape(srv.url)
    srv.stop()
    off = fresh_server(args=["--metrics", "off"]).start()
    r = requests.get(off.url + "/metrics", timeout=30)
    assert r.status_code == 404 and "--metrics=off" in r.json()["message"]


def test_a_bad_setting_is_refused_at_start(fresh_server):
    srv = fresh_server(args=["--metrics", "sometimes"])
    with pytest.raises(RuntimeError, match="not one of loopback, authenticated, public, off"):
        srv.start()
