"""Black-box tests of the flow `slack` and `slackChannel` tasks against a local HTTP server
that answers like Slack's Web API (chat.postMessage, chat.update, reactions.add,
conversations.create, conversations.archive): `accord run` and `accord serve` run flows
that call it, and the tests check the requests it received, the tasks' results, and that
the token appears in no log line or event."""
import json
import os
import pathlib
import re
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import Server, Client, ADMIN_KEY, backend_neutral, start_process, wait_process, process_log

neutral = backend_neutral("the slack tasks against a local stand-in of Slack's API, run by accord run (no "
                          "database); test_server_hands_slack_defaults_to_processes runs them under the server "
                          "on both backends")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ACCORD_BIN") or os.path.join(ROOT, "build", "accord")
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000 ", re.M)
TOKEN = "xoxb-server-token-0815"
FLOW_TOKEN = "xoxb-flow-token-4242"


class SlackApi(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body, extra=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        s = self.server
        with s.lock:
            s.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                               "type": self.headers.get("Content-Type"), "body": body})
            busy = s.busy
            if busy:
                s.busy -= 1
        if busy:
            return self.reply(429, {"ok": False, "error": "ratelimited"}, [("Retry-After", "0")])
        if self.headers.get("Authorization") not in ("Bearer " + TOKEN, "Bearer " + FLOW_TOKEN):
            return self.reply(200, {"ok": False, "error": "invalid_auth"})
        method = self.path.rsplit("/", 1)[-1]
        if method == "chat.postMessage":
            if body.get("channel") == "C-missing":
                return self.reply(200, {"ok": False, "error": "channel_not_found"})
            if body.get("channel") == "C-broken":
                return self.reply(500, {"ok": False})
            ts = body.get("thread_ts") or "1700000000.000100"
            return self.reply(200, {"ok": True, "channel": "C123", "ts": ts if "thread_ts" in body else ts,
                                    "message": {"text": body.get("text")}})
        if method == "chat.update":
            return self.reply(200, {"ok": True, "channel": body["channel"], "ts": body["ts"]})
        if method == "reactions.add":
            return self.reply(200, {"ok": True})
        if method == "conversations.create":
            if body["name"] == "taken":
                return self.reply(200, {"ok": False, "error": "name_taken"})
            return self.reply(200, {"ok": True, "channel": {"id": "G9" if body.get("is_private") else "C9",
                                                            "name": body["name"]}})
        if method in ("conversations.archive", "channels.archive", "groups.archive"):
            return self.reply(200, {"ok": True})
        if method == "channels.create":  # Slack's retired methods (isLegacy)
            return self.reply(200, {"ok": True, "channel": {"id": "C8", "name": body["name"]}})
        if method == "groups.create":
            return self.reply(200, {"ok": True, "group": {"id": "G8", "name": body["name"]}})
        return self.reply(404, {"ok": False, "error": "unknown_method"})


@pytest.fixture(scope="module")
def api():
    s = ThreadingHTTPServer(("127.0.0.1", 0), SlackApi)
    s.daemon_threads = True
    s.requests = []
    s.busy = 0
    s.lock = threading.Lock()
    threading.Thread(target=s.serve_forever, daemon=True).start()
    s.url = "http://127.0.0.1:%d/api/" % s.server_address[1]
    yield s
    s.shutdown()
    s.server_close()


@pytest.fixture(autouse=True)
def clear(api):
    api.requests.clear()
    api.busy = 0


class Run:
    def __init__(self, proc, workdir, events):
        self.rc = proc.returncode
        self.output = TS.sub("", proc.stdout + proc.stderr)
        self.workdir = workdir
        self.events = open(events).read() if os.path.exists(events) else ""


def run_flow(tmp_path, api, steps, token=TOKEN, args=()):
    base = tempfile.mkdtemp(dir=tmp_path)
    d = pathlib.Path(base) / "flow"
    d.mkdir()
    flow = "configuration:\n  events: {recordTaskInVars: true, recordTaskOutVars: true}\nflows:\n  default:\n"
    (d / "concord.yml").write_text(flow + "".join("  " + l + "\n" for l in steps.strip("\n").splitlines()))
    workdir, events = os.path.join(base, "work"), os.path.join(base, "events.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCORD_SLACK")}
    env["ACCORD_SLACK_API_URL"] = api.url
    if token:
        env["ACCORD_SLACK_TOKEN"] = token
    proc = subprocess.run([BIN, "run", str(d), "--workdir", workdir, "--events", events] + list(args),
                          capture_output=True, text=True, timeout=60, env=env)
    return Run(proc, workdir, events)


@neutral
def test_post_message_then_reply_in_thread_and_react(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: my-channel, text: "Starting ${txId}", username: bot, iconEmoji: ":robot_face:",
       attachments: [{color: good, text: att}], blocks: [{type: section, text: {type: mrkdwn, text: "*b*"}}]}
  out: result
- log: "ok=${result.ok} id=${result.id} ts=${result.ts}"
- task: slack
  in: {channelId: "${result.id}", ts: "${result.ts}", replyBroadcast: true, text: reply}
  out: reply
- log: "reply ok=${reply.ok}"
- task: slack
  in: {action: addReaction, channelId: "${result.id}", ts: "${result.ts}", reaction: thumbsup}
  out: reaction
- log: "reaction ok=${reaction.ok}"
""")
    assert r.rc == 0, r.output
    assert "ok=true id=C123 ts=1700000000.000100" in r.output
    assert "reply ok=true" in r.output and "reaction ok=true" in r.output
    post, reply, react = api.requests
    assert post["path"] == "/api/chat.postMessage" and post["auth"] == "Bearer " + TOKEN
    assert post["type"].startswith("application/json")
    assert post["body"] == {"channel": "my-channel", "text": "Starting " + post["body"]["text"][9:],
                            "username": "bot", "icon_emoji": ":robot_face:",
                            "attachments": [{"color": "good", "text": "att"}],
                            "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*b*"}}]}
    assert reply["body"] == {"channel": "C123", "thread_ts": "1700000000.000100", "reply_broadcast": True,
                             "text": "reply"}
    assert react["path"] == "/api/reactions.add"
    assert react["body"] == {"channel": "C123", "timestamp": "1700000000.000100", "name": "thumbsup"}
    assert TOKEN not in r.output and TOKEN not in r.events


@neutral
def test_update_message_and_raw_json(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {action: updateMessage, channelId: C1, ts: "1.2", text: edited}
- task: slack
  in: {json: '{"channel": "C2", "text": "raw", "unfurl_links": false}'}
""")
    assert r.rc == 0, r.output
    upd, raw = api.requests
    assert upd["path"] == "/api/chat.update" and upd["body"] == {"channel": "C1", "ts": "1.2", "text": "edited"}
    assert raw["path"] == "/api/chat.postMessage"
    assert raw["body"] == {"channel": "C2", "text": "raw", "unfurl_links": False}


@neutral
def test_slack_error_is_a_result_not_a_failure(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C-missing, text: x}
  out: result
- log: "ok=${result.ok} error=${result.error}"
""")
    assert r.rc == 0, r.output
    assert "Error sending a Slack message: channel_not_found" in r.output
    assert "ok=false error=channel_not_found" in r.output


@neutral
def test_rate_limit_is_retried_after_retry_after(api, tmp_path):
    api.busy = 2
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C1, text: x}
  out: result
- log: "ok=${result.ok}"
""")
    assert r.rc == 0, r.output
    assert "ok=true" in r.output
    assert len(api.requests) == 3


@neutral
def test_non_200_after_retries(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C-broken, text: x, retryCount: 0}
  out: result
- log: "ok=${result.ok} error=${result.error}"
""")
    assert r.rc == 0, r.output
    assert "ok=false error=Slack request not successful after 0 retries. Last response code: 500" in r.output
    assert len(api.requests) == 1


@neutral
def test_unreachable_api_fails_unless_ignore_errors(api, tmp_path):
    steps = """
- task: slack
  in: {channelId: C1, text: x, apiToken: "%s", apiUrl: "http://127.0.0.1:1/api/", ignoreErrors: %s}
  out: result
- log: "ok=${result.ok} error=${result.error}"
"""
    r = run_flow(tmp_path, api, steps % (FLOW_TOKEN, "true"))
    assert r.rc == 0, r.output
    assert "ok=false error=slack task error: POST http://127.0.0.1:1/api/chat.postMessage failed" in r.output
    r = run_flow(tmp_path, api, steps % (FLOW_TOKEN, "false"))
    assert r.rc == 1
    assert "slack task error: POST http://127.0.0.1:1/api/chat.postMessage failed" in r.output
    assert FLOW_TOKEN not in r.output and FLOW_TOKEN not in r.events


@neutral
def test_flow_token_overrides_and_is_masked(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C1, text: x, apiToken: "%s"}
- log: "the token is %s"
""" % (FLOW_TOKEN, FLOW_TOKEN))
    assert r.rc == 0, r.output
    assert api.requests[0]["auth"] == "Bearer " + FLOW_TOKEN
    assert "the token is ******" in r.output
    assert FLOW_TOKEN not in r.output and FLOW_TOKEN not in r.events


@neutral
def test_server_token_never_goes_to_a_url_the_flow_chose(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C1, text: x, apiUrl: "http://127.0.0.1:1/api/"}
""")
    assert r.rc == 1
    assert "slack: 'apiUrl' may be given only with the flow's own 'apiToken'" in r.output
    assert api.requests == []


@neutral
@pytest.mark.parametrize("params,message", [
    ("{text: x}", "'channelId' is required"),
    ("{action: addReaction, channelId: C1, ts: '1.2'}", "'reaction' is required"),
    ("{action: dance, channelId: C1}", "Unsupported action type: dance"),
    ("{channelId: C1, attachments: nope}", "'attachments' must be a list, got java.lang.String"),
    ("{json: 'not json'}", "'json' must be the text of a JSON object"),
    ("{channelId: C1, proxyAddress: proxy.example.com}", "'proxyPort' is required with 'proxyAddress'"),
])
def test_bad_input_fails_clearly(api, tmp_path, params, message):
    r = run_flow(tmp_path, api, "- task: slack\n  in: %s\n" % params)
    assert r.rc == 1
    assert message in r.output
    assert api.requests == []


@neutral
def test_no_token_anywhere(api, tmp_path):
    r = run_flow(tmp_path, api, "- task: slack\n  in: {channelId: C1, text: x}\n", token=None)
    assert r.rc == 1
    assert "slack: no Slack API token: give 'apiToken', or start the server with ACCORD_SLACK_TOKEN" in r.output


@neutral
def test_slack_channel_create_archive_and_groups(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slackChannel
  in: {action: create, channelName: releases}
  out: ch
- task: slackChannel
  in: {action: createGroup, channelName: secret}
  out: grp
- log: "channel=${ch.slackChannelId} group=${grp.slackChannelId}"
- task: slackChannel
  in: {action: archive, channelId: "${ch.slackChannelId}"}
- task: slackChannel
  in: {action: archiveGroup, channelId: "${grp.slackChannelId}"}
""")
    assert r.rc == 0, r.output
    assert "channel=C9 group=G9" in r.output
    assert [(q["path"], q["body"]) for q in api.requests] == [
        ("/api/conversations.create", {"name": "releases", "is_private": False}),
        ("/api/conversations.create", {"name": "secret", "is_private": True}),
        ("/api/conversations.archive", {"channel": "C9"}),
        ("/api/conversations.archive", {"channel": "G9"})]
    assert "Slack channel created: releases -> C9 (stored as 'slackChannelId' variable)" in r.output
    assert "Slack group created: secret -> G9 (stored as 'slackChannelId' variable)" in r.output


@neutral
def test_slack_channel_legacy_methods(api, tmp_path):
    # Concord's isLegacy: the channels.* and groups.* methods its client calls
    r = run_flow(tmp_path, api, """
- task: slackChannel
  in: {action: create, channelName: releases, isLegacy: true}
  out: ch
- task: slackChannel
  in: {action: createGroup, channelName: secret, isLegacy: true}
  out: grp
- log: "channel=${ch.slackChannelId} group=${grp.slackChannelId}"
- task: slackChannel
  in: {action: archive, channelId: "${ch.slackChannelId}", isLegacy: true}
- task: slackChannel
  in: {action: archiveGroup, channelId: "${grp.slackChannelId}", isLegacy: true}
""")
    assert r.rc == 0, r.output
    assert "channel=C8 group=G8" in r.output
    assert "Slack group created: secret -> G8" in r.output
    assert [(q["path"], q["body"]) for q in api.requests] == [
        ("/api/channels.create", {"name": "releases"}), ("/api/groups.create", {"name": "secret"}),
        ("/api/channels.archive", {"channel": "C8"}), ("/api/groups.archive", {"channel": "G8"})]


@neutral
def test_legacy_messages_are_posted_as_user(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C1, text: one, isLegacy: true}
- task: slack
  in: {channelId: C1, text: two, isLegacy: true, username: bot}
- task: slack
  in: {channelId: C1, text: three}
""")
    assert r.rc == 0, r.output
    assert [q["body"].get("as_user") for q in api.requests] == [True, False, None]


@neutral
def test_reaction_is_logged(api, tmp_path):
    r = run_flow(tmp_path, api, "- task: slack\n  in: {action: addReaction, channelId: C1, ts: '1.5', reaction: tada}\n")
    assert r.rc == 0, r.output
    assert "Reaction 'tada' added to the Slack message '1.5'" in r.output


@neutral
def test_slack_channel_errors_fail_the_step(api, tmp_path):
    r = run_flow(tmp_path, api, "- task: slackChannel\n  in: {action: create, channelName: taken}\n")
    assert r.rc == 1
    assert "CREATE error (channel: 'taken'): name_taken" in r.output
    r = run_flow(tmp_path, api, "- task: slackChannel\n  in: {action: archive}\n")
    assert r.rc == 1 and "'channelId' is required" in r.output


def test_server_hands_slack_defaults_to_processes(api):
    srv = Server(env={"ACCORD_SLACK_API_URL": api.url, "ACCORD_SLACK_TOKEN": TOKEN}).start()
    try:
        client = Client(srv.url, ADMIN_KEY)
        flow = """configuration:
  events: {recordTaskInVars: true, recordTaskOutVars: true}
flows:
  default:
  - task: slack
    in: {channelId: C1, text: "from ${txId}"}
    out: result
  - log: "ok=${result.ok} ts=${result.ts}"
"""
        pid = start_process(client, flow)
        p = wait_process(client, pid)
        log = process_log(client, pid)
        assert p["status"] == "FINISHED", log
        assert "ok=true ts=1700000000.000100" in log
        [req] = api.requests
        assert req["auth"] == "Bearer " + TOKEN and req["body"]["text"] == "from " + pid
        events = client.get("/api/v1/process/%s/event" % pid)
        assert events.status_code == 200 and TOKEN not in events.text
        assert TOKEN not in log and TOKEN not in srv.read_log()
        for f in pathlib.Path(srv.data_dir).rglob("*"):
            if f.is_file():
                assert TOKEN.encode() not in f.read_bytes(), f
    finally:
        srv.cleanup()


@neutral
def test_recorded_task_inputs_mask_tokens_and_nested_passwords(api, tmp_path):
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C1, text: x, authToken: "%s", extra: {password: nested-pw-1}}
""" % FLOW_TOKEN)
    assert r.rc == 0, r.output
    assert api.requests[0]["auth"] == "Bearer " + FLOW_TOKEN
    [pre] = [e["data"] for e in map(json.loads, r.events.splitlines())
             if e["data"].get("name") == "slack" and e["data"].get("phase") == "pre"]
    assert pre["in"]["authToken"] == "***" and pre["in"]["extra"] == {"password": "***"}
    assert FLOW_TOKEN not in r.events and "nested-pw-1" not in r.events


@neutral
def test_send_method_in_an_expression(api, tmp_path):
    r = run_flow(tmp_path, api, """
- set:
    r: "${slack.send('C7', 'from an expression')}"
- log: "ok=${r.ok} ts=${r.ts}"
""")
    assert r.rc == 0, r.output
    assert "ok=true ts=1700000000.000100" in r.output
    [req] = api.requests
    assert req["path"] == "/api/chat.postMessage" and req["auth"] == "Bearer " + TOKEN
    assert req["body"] == {"channel": "C7", "text": "from an expression"}


@neutral
def test_send_json_method_in_an_expression(api, tmp_path):
    # SlackTaskV2.sendJson(context, slackCfg, json, ignoreErrors): the first two are ignored
    r = run_flow(tmp_path, api, """
- set:
    r: "${slack.sendJson(null, null, '{\\"channel\\": \\"C5\\", \\"text\\": \\"raw\\"}', false)}"
    m: "${slack.sendJson(null, null, '{\\"channel\\": \\"C-missing\\"}', true)}"
- log: "ok=${r.ok} ts=${r.ts} missing=${m.ok} ${m.error}"
""")
    assert r.rc == 0, r.output
    assert "ok=true ts=1700000000.000100 missing=false channel_not_found" in r.output
    assert [(q["path"], q["body"]) for q in api.requests] == [
        ("/api/chat.postMessage", {"channel": "C5", "text": "raw"}),
        ("/api/chat.postMessage", {"channel": "C-missing"})]


@neutral
def test_calls_go_through_the_proxy(api, tmp_path):
    # A proxy that does not answer: the call fails (it did not go around the proxy), and
    # with ignoreErrors the step gives {ok: false}, as Concord's tests expect.
    r = run_flow(tmp_path, api, "- task: slack\n  in: {channelId: C1, text: x}\n", args=["--slack-proxy", "127.0.0.1:1"])
    assert r.rc == 1
    assert "slack task error: POST %schat.postMessage failed" % api.url in r.output
    r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C1, text: x, proxyAddress: 127.0.0.1, proxyPort: 1, ignoreErrors: true}
  out: result
- log: "ok=${result.ok}"
""")
    assert r.rc == 0, r.output
    assert "ok=false" in r.output
    assert api.requests == []


class ConnectProxy:
    """An HTTP proxy that only tunnels (CONNECT host:port), and records what it was asked."""

    def __init__(self):
        import socket
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.seen = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.tunnel, args=(c,), daemon=True).start()

    def tunnel(self, c):
        import socket
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = c.recv(4096)
            if not chunk:
                return c.close()
            head += chunk
        first = head.split(b"\r\n", 1)[0].decode()
        self.seen.append(head.decode(errors="replace"))
        method, target, _ = first.split(" ", 2)
        if method != "CONNECT":
            c.sendall(b"HTTP/1.1 405 Tunnel only\r\nContent-Length: 0\r\n\r\n")
            return c.close()
        host, port = target.rsplit(":", 1)
        up = socket.create_connection((host, int(port)))
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")

        def pipe(a, b):
            try:
                while True:
                    d = a.recv(65536)
                    if not d:
                        break
                    b.sendall(d)
            except OSError:
                pass
            for s in (a, b):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

        threading.Thread(target=pipe, args=(up, c), daemon=True).start()
        pipe(c, up)

    def close(self):
        self.sock.close()


@neutral
def test_proxy_tunnels_and_never_sees_the_token(api, tmp_path):
    proxy = ConnectProxy()
    try:
        r = run_flow(tmp_path, api, """
- task: slack
  in: {channelId: C1, text: via proxy}
  out: result
- log: "ok=${result.ok}"
""", args=["--slack-proxy", "127.0.0.1:%d" % proxy.port])
        assert r.rc == 0, r.output
        assert "ok=true" in r.output
        assert api.requests[0]["auth"] == "Bearer " + TOKEN
        assert len(proxy.seen) == 1 and proxy.seen[0].startswith("CONNECT 127.0.0.1:%d " % int(api.url.split(":")[2].split("/")[0]))
        assert TOKEN not in proxy.seen[0]
    finally:
        proxy.close()


@neutral
@pytest.mark.parametrize("args,message", [
    (["--slack-proxy", "no-port"], "--slack-proxy must be host:port, got 'no-port'"),
    (["--smtp-port=0"], "--smtp-port must be between 1 and 65535, got '0'"),
])
def test_bad_settings_are_usage_errors(api, tmp_path, args, message):
    r = run_flow(tmp_path, api, "- log: never\n", args=args)
    assert r.rc == 2
    assert message in r.output and "never" not in r.output
