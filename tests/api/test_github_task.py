"""Black-box tests of the flow `github` task against a local HTTP server that answers like
GitHub Enterprise's REST API (/api/v3, GitHub's documented JSON shapes): `accord run` and
`accord serve` run flows that call it, and the tests check the requests it received, the
task's results and messages, and that the token appears in no log line or event."""
import base64
import json
import os
import pathlib
import re
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import ADMIN_KEY, Client, backend_neutral, run_with_secret

neutral = backend_neutral("the github task against a local stand-in of GitHub's API, run by accord run (no "
                          "database); the tests with a server's secrets run on both backends")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.environ.get("ACCORD_BIN") or os.path.join(ROOT, "build", "accord")
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000 ", re.M)
TOKEN = "ghp_test_token_0123456789"
SHA1, SHA2 = "a" * 40, "b" * 40


class GitHubApi(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def handle_any(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n)) if n else None
        s = self.server
        path, _, query = self.path.partition("?")
        with s.lock:
            s.requests.append({"method": self.command, "path": path, "query": query, "body": body,
                               "auth": self.headers.get("Authorization"), "accept": self.headers.get("Accept")})
            busy = s.busy
            if busy:
                s.busy -= 1
        if busy:
            return self.reply(503, {"message": "busy"}, [("Retry-After", "0")])
        if path in ("/repos/acme/repo/installation", "/app/installations/5/access_tokens"):
            return self.app(self.command, path)
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            return self.reply(401, {"message": "Bad credentials"})
        if not path.startswith("/api/v3/"):
            return self.reply(404, {"message": "Not Found"})
        return self.route(self.command, path[len("/api/v3"):], query, body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any

    def route(self, m, p, q, body):
        s = self.server
        base = "http://127.0.0.1:%d/api/v3" % s.server_address[1]
        repo = re.match(r"^/repos/([^/]+)/([^/]+)(/.*)?$", p)
        if m == "POST" and p == "/orgs/acme/repos":
            s.repos.add(body["name"])
            return self.reply(201, {"name": body["name"], "clone_url": "https://gh.example/acme/%s.git" % body["name"],
                                    "url": base + "/repos/acme/" + body["name"]})
        if not repo:
            return self.reply(404, {"message": "Not Found"})
        name, rest = repo.group(2), repo.group(3) or ""
        if rest == "":
            if name not in s.repos:
                return self.reply(404, {"message": "Not Found"})
            if m == "DELETE":
                s.repos.discard(name)
                return self.reply(204)
            return self.reply(200, {"name": name, "clone_url": "https://gh.example/acme/%s.git" % name,
                                    "url": base + "/repos/acme/" + name, "default_branch": "main"})
        if m == "POST" and rest == "/pulls":
            if body["head"] == "broken":
                return self.reply(422, {"message": "Validation Failed",
                                        "errors": [{"resource": "PullRequest", "code": "invalid"}]})
            return self.reply(201, {"number": 7, "title": body["title"]})
        if rest == "/pulls/7":
            if m == "PATCH":
                return self.reply(200, {"number": 7, "state": body["state"]})
            return self.reply(200, {"number": 7, "state": "open", "head": {"sha": SHA1}})
        if rest == "/pulls/7/merge" and m == "PUT":
            return self.reply(200, {"sha": SHA2, "merged": True})
        if rest == "/pulls/7/files":
            return self.reply(200, [{"filename": "a.txt", "status": "added", "patch": "@@"},
                                    {"filename": "b.txt", "status": "modified", "patch": "@@"},
                                    {"filename": "c.txt", "status": "removed"}])
        if rest == "/pulls/7/commits":
            return self.paged(q, base + p, [{"sha": "c%d" % i} for i in range(150)])
        if rest == "/pulls":
            return self.reply(200, [{"number": 7, "state": "closed", "title": "x"}] if "state=closed" in q else [])
        if rest == "/issues/7/comments" and m == "POST":
            return self.reply(201, {"id": 99, "body": body["body"]})
        if rest == "/issues/7/labels" and m == "POST":
            return self.reply(200, [{"name": l} for l in body["labels"]])
        if rest == "/branches":
            return self.paged(q, base + p, [{"name": "b%d" % i, "commit": {"sha": "s%d" % i}} for i in range(120)]
                              + [{"name": "master", "commit": {"sha": SHA1}}])
        if rest == "/commits" and "sha=main" in q:
            return self.paged(q, base + p + "?sha=main", [{"sha": "c%d" % i, "commit": {"message": ("feat: thing %d" if i % 2 == 0
                                                                                      else "fix: bug %d") % i}}
                                            for i in range(9, -1, -1)])
        if rest == "/tags" and name == "barrier":
            try:
                s.barrier.wait()
            except threading.BrokenBarrierError:
                return self.reply(504, {"message": "the other call did not come"})
            return self.reply(200, [{"name": "together"}])
        if rest == "/tags":
            return self.reply(200, [{"name": "v1"}, {"name": "v2"}])
        if rest.startswith("/statuses/"):
            if m == "POST":
                return self.reply(201, dict(body, id=1))
            return self.reply(200, [{"state": "success", "context": "ci"}])
        if rest == "/git/tags" and m == "POST":
            return self.reply(201, {"sha": "t" * 40, "tag": body["tag"]})
        if rest == "/git/refs" and m == "POST":
            return self.reply(201, {"ref": body["ref"], "object": {"sha": body["sha"]}})
        if rest.startswith("/git/refs/") and m == "DELETE":
            return self.reply(204)
        if rest == "/git/ref/tags/v1":
            return self.reply(200, {"ref": "refs/tags/v1", "object": {"type": "tag", "sha": "t" * 40}})
        if rest == "/git/ref/tags/light":
            return self.reply(200, {"ref": "refs/tags/light", "object": {"type": "commit", "sha": SHA1}})
        if rest == "/git/tags/" + "t" * 40:
            return self.reply(200, {"tag": "v1", "message": "rel", "sha": "t" * 40})
        if rest == "/hooks" and m == "GET":
            return self.reply(200, [{"id": 3, "config": {"url": "http://hook/x"}}, {"id": 5, "config": {"url": "o"}}])
        if rest == "/hooks/3" and m == "DELETE":
            return self.reply(204)
        if rest == "/hooks" and m == "POST":
            return self.reply(201, dict(body, id=4))
        if rest == "/commits/" + "a" * 7:
            return self.reply(200, {"sha": "a" * 7 + "f" * 33})
        if rest == "/commits/" + "a" * 8:
            return self.reply(200, {"sha": SHA1})
        if rest.startswith("/commits/a") and rest != "/commits/" + SHA1:
            return self.reply(422, {"message": "No commit found for SHA"})
        if rest == "/git/ref/heads/exists":
            return self.reply(200, {"ref": "refs/heads/exists"})
        if rest.startswith("/git/ref/"):
            return self.reply(404, {"message": "Not Found"})
        if rest == "/merges" and m == "POST":
            return self.reply(201, {"sha": SHA2})
        if rest == "/forks" and m == "POST":
            return self.reply(202, {"full_name": "me/" + name})
        if rest == "/contents/dir/file.txt":
            return self.reply(200, {"name": "file.txt", "path": "dir/file.txt", "encoding": "base64",
                                    "content": base64.encodebytes(b"hello from github\n").decode()})
        if rest == "/commits/" + SHA1:
            return self.reply(200, {"sha": SHA1, "commit": {"message": "first"}})
        return self.reply(404, {"message": "Not Found"})

    def app(self, method, path):
        """A GitHub App's installation: the JWT must be signed with the app's key."""
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Bearer ") or not self.server.verify_jwt(auth[7:]):
            return self.reply(401, {"message": "A JSON web token could not be decoded"})
        if method == "GET" and path.endswith("/installation"):
            return self.reply(200, {"id": 5, "access_tokens_url": "http://127.0.0.1:%d/app/installations/5/access_tokens"
                                    % self.server.server_address[1]})
        if method == "POST" and path.endswith("/access_tokens"):
            return self.reply(201, {"token": TOKEN, "expires_at": "2099-01-01T00:00:00Z"})
        return self.reply(404, {"message": "Not Found"})

    def paged(self, q, url, items):
        page = int((re.search(r"page=(\d+)", q.replace("per_page", "pp")) or [0, 1])[1])
        size = int(re.search(r"per_page=(\d+)", q).group(1))
        chunk = items[(page - 1) * size:page * size]
        headers = []
        if page * size < len(items):
            sep = "&" if "?" in url else "?"
            headers.append(("Link", '<%s%sper_page=%d&page=%d>; rel="next", <%s%spage=9>; rel="last"'
                            % (url, sep, size, page + 1, url, sep)))
        return self.reply(200, chunk, headers)


def b64url(data):
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


@pytest.fixture(scope="module")
def app_key(tmp_path_factory):
    """A GitHub App's RSA key (PKCS#1 PEM, as GitHub hands them out) and its public key."""
    d = tmp_path_factory.mktemp("app")
    subprocess.run(["openssl", "genrsa", "-traditional", "-out", str(d / "key.pem"), "2048"], check=True,
                   capture_output=True)
    subprocess.run(["openssl", "rsa", "-in", str(d / "key.pem"), "-pubout", "-out", str(d / "pub.pem")],
                   check=True, capture_output=True)
    return d


@pytest.fixture(scope="module")
def api(app_key):
    s = ThreadingHTTPServer(("127.0.0.1", 0), GitHubApi)

    def verify_jwt(jwt):
        head, claims, sig = jwt.split(".")
        if json.loads(b64url(head)) != {"alg": "RS256", "typ": "JWT"}:
            return False
        c = json.loads(b64url(claims))
        if c.get("iss") != "Iv1.client" or not c["iat"] < c["exp"] <= c["iat"] + 600:
            return False
        sig_file = app_key / ("sig-%d" % threading.get_ident())
        sig_file.write_bytes(b64url(sig))
        r = subprocess.run(["openssl", "dgst", "-sha256", "-verify", str(app_key / "pub.pem"), "-signature",
                            str(sig_file)], input=("%s.%s" % (head, claims)).encode(), capture_output=True)
        return r.returncode == 0
    s.verify_jwt = verify_jwt
    s.daemon_threads = True
    s.lock = threading.Lock()
    threading.Thread(target=s.serve_forever, daemon=True).start()
    s.url = "http://127.0.0.1:%d" % s.server_address[1]
    yield s
    s.shutdown()
    s.server_close()


@pytest.fixture(autouse=True)
def clear(api):
    api.requests = []
    api.busy = 0
    api.repos = {"repo", "old"}
    api.barrier = threading.Barrier(2, timeout=20)


def run_flow(tmp_path, api, steps, args=(), env=None):
    base = tempfile.mkdtemp(dir=tmp_path)
    d = pathlib.Path(base) / "flow"
    d.mkdir()
    flow = ("configuration:\n  events: {recordTaskOutVars: true}\n"
            "  arguments:\n    gh: {apiUrl: '%s', auth: {accessToken: '%s'}, org: acme, repo: repo}\n"
            "flows:\n  default:\n" % (api.url, TOKEN))
    (d / "concord.yml").write_text(flow + "".join("  " + l + "\n" for l in steps.strip("\n").splitlines()))
    events = os.path.join(base, "events.jsonl")
    proc = subprocess.run([BIN, "run", str(d), "--workdir", os.path.join(base, "work"), "--events", events]
                          + list(args),
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, **(env or {})))
    out = TS.sub("", proc.stdout + proc.stderr)
    ev = open(events).read() if os.path.exists(events) else ""
    return proc.returncode, out, ev


def call(action, extra=""):
    """A github step with the common parameters; extra: more entries of its map, as in
    ", 'key': 'value'"."""
    return "- task: github\n  in: {action: %s, apiUrl: '${gh.apiUrl}', auth: '${gh.auth}', org: acme, repo: repo%s}\n" \
        % (action, extra.replace("'", "\""))


def reqs(api, method=None):
    return [(r["method"], r["path"]) for r in api.requests if method in (None, r["method"])]


@neutral
def test_pull_request_lifecycle(api, tmp_path):
    rc, out, ev = run_flow(tmp_path, api, """
- task: github
  in: {action: createPr, apiUrl: "%s", auth: {accessToken: "%s"}, org: acme, repo: repo, prTitle: T, prBody: B,
       prSourceBranch: feature, prDestinationBranch: master, prLabels: [release]}
  out: pr
- log: "prId=${pr.prId} ok=${pr.ok}"
- task: github
  in: {action: commentPR, apiUrl: "%s", accessToken: "%s", org: acme, repo: repo, prId: "${pr.prId}", prComment: hi}
  out: c
- log: "comment=${c.id}"
- task: github
  in: {action: getPR, apiUrl: "%s", auth: {accessToken: "%s"}, org: acme, repo: repo, prNumber: 7}
  out: got
- log: "head=${got.pr.head.sha}"
- task: github
  in: {action: mergePr, apiUrl: "%s", auth: {accessToken: "%s"}, org: acme, repo: repo, prId: 7, mergeMethod: squash}
- task: github
  in: {action: closePR, apiUrl: "%s", auth: {accessToken: "%s"}, org: acme, repo: repo, prId: 7}
- task: github
  in: {action: getPRCommitList, apiUrl: "%s", auth: {accessToken: "%s"}, org: acme, repo: repo, prId: 7}
  out: commits
- log: "commits=${commits.commits.size()} last=${commits.commits[149].sha}"
- task: github
  in: {action: getPRFiles, apiUrl: "%s", auth: {accessToken: "%s"}, org: acme, repo: repo, prNumber: 7}
  out: files
- log: "added=${files.prFilesAdded} modified=${files.prFilesModified} removed=${files.prFilesRemoved} any=${files.prFilesAny} patch=${files.prFiles[0].containsKey('patch')}"
- task: github
  in: {action: getPRList, apiUrl: "%s", auth: {accessToken: "%s"}, org: acme, repo: repo, state: closed}
  out: prs
- log: "prs=${prs.prList[0].number}"
""" % ((api.url, TOKEN) * 8))
    assert rc == 0, out
    assert "prId=7 ok=true" in out and "comment=99" in out and "head=" + SHA1 in out
    assert "commits=150 last=c149" in out
    assert "added=[a.txt] modified=[b.txt] removed=[c.txt] any=[a.txt, c.txt, b.txt] patch=false" in out
    assert "prs=7" in out
    create = api.requests[0]
    assert create["path"] == "/api/v3/repos/acme/repo/pulls" and create["method"] == "POST"
    assert create["body"] == {"title": "T", "body": "B", "head": "feature", "base": "master"}
    assert create["auth"] == "Bearer " + TOKEN and create["accept"] == "application/vnd.github+json"
    assert api.requests[1]["body"] == {"labels": ["release"]}
    merge = [r for r in api.requests if r["path"].endswith("/merge")][0]
    assert merge["method"] == "PUT" and merge["body"] == {"commit_message": "GitHub PR Merge", "merge_method": "squash"}
    close = [r for r in api.requests if r["method"] == "PATCH"][0]
    assert close["path"] == "/api/v3/repos/acme/repo/pulls/7" and close["body"] == {"state": "closed"}
    pages = [r for r in api.requests if r["path"].endswith("/commits")]
    assert len(pages) == 2 and "per_page=100" in pages[0]["query"]
    assert TOKEN not in out and TOKEN not in ev


@neutral
def test_branches_tags_and_statuses(api, tmp_path):
    rc, out, ev = run_flow(tmp_path, api, call("getBranchList") + """  out: b
- log: "branches=${b.branchList.size()} first=${b.branchList[0]}"
""" + call("getTagList") + """  out: t
- log: "tags=${t.tagList}"
""" + call("getLatestSHA") + """  out: l
- log: "latest=${l.latestCommitSHA}"
""" + call("createTag", ", 'tagVersion': '1.0', 'tagMessage': 'rel', 'tagAuthorName': 'Jane', "
                       "'tagAuthorEmail': 'j@x', 'branch': 'master'") + call("deleteTag", ", 'tagName': 'v0'")
        + call("deleteBranch", ", 'branch': 'old'")
        + call("createBranch", ", 'branchName': 'exists', 'sha': '%s'" % SHA1) + """  out: cb
- log: "exists=${cb.alreadyExists}"
""" + call("createBranch", ", 'branchName': 'new', 'sha': '%s'" % SHA1)
        + call("addStatus", ", 'commitSHA': '%s', 'state': 'Success', 'targetUrl': 'http://ci/1'" % SHA1)
        + call("getStatuses", ", 'commitSHA': '%s'" % SHA1) + """  out: st
- log: "statuses=${st.commitStatuses[0].context}"
""" + call("merge", ", 'base': 'master', 'head': 'feature', 'commitMessage': 'auto'")
        + call("forkRepo", ", 'targetOrg': 'other'"))
    assert rc == 0, out
    assert "branches=121 first=b0" in out and "tags=[v1, v2]" in out and "latest=" + SHA1 in out
    assert "exists=true" in out and "statuses=ci" in out
    tag = [r for r in api.requests if r["path"].endswith("/git/tags")][0]["body"]
    assert tag["tag"] == "1.0" and tag["object"] == SHA1 and tag["type"] == "commit"
    assert tag["tagger"]["name"] == "Jane" and tag["tagger"]["email"] == "j@x"
    refs = [r["body"] for r in api.requests if r["path"].endswith("/git/refs")]
    assert refs == [{"ref": "refs/tags/1.0", "sha": SHA1}, {"ref": "refs/heads/new", "sha": SHA1}]
    assert ("DELETE", "/api/v3/repos/acme/repo/git/refs/tags/v0") in reqs(api)
    assert ("DELETE", "/api/v3/repos/acme/repo/git/refs/heads/old") in reqs(api)
    status = [r for r in api.requests if "/statuses/" in r["path"] and r["method"] == "POST"][0]["body"]
    assert status == {"state": "success", "context": "default", "target_url": "http://ci/1"}
    assert [r["body"] for r in api.requests if r["path"].endswith("/merges")] == [
        {"base": "master", "head": "feature", "commit_message": "auto"}]
    assert [r["body"] for r in api.requests if r["path"].endswith("/forks")] == [{"organization": "other"}]
    assert TOKEN not in out and TOKEN not in ev


@neutral
def test_repositories_are_created_and_deleted_idempotently(api, tmp_path):
    rc, out, _ = run_flow(tmp_path, api, call("createRepo", ", repo: 'fresh'").replace("repo: repo, ", "")
                          + '  out: a\n- log: "new=${a.cloneUrl}"\n'
                          + call("createRepo") + '  out: b\n- log: "existing=${b.cloneUrl}"\n'
                          + call("deleteRepo", ", repo: gone").replace("repo: repo, ", "")
                          + call("deleteRepo", ", repo: old").replace("repo: repo, ", ""))
    assert rc == 0, out
    assert "new=https://gh.example/acme/fresh.git" in out and "existing=https://gh.example/acme/repo.git" in out
    assert [r for r in reqs(api) if r[0] != "GET"] == [("POST", "/api/v3/orgs/acme/repos"),
                                                        ("DELETE", "/api/v3/repos/acme/old")]
    assert "Repository acme/gone does not exist" in out


@neutral
def test_get_content_and_commit(api, tmp_path):
    rc, out, _ = run_flow(tmp_path, api, call("getContent", ", 'path': 'dir/file.txt', 'ref': 'main'") + """  out: c
- log: "content=${c.contents[0].content.trim()} path=${c.contents[0].path}"
""" + call("getCommit", ", 'commitSHA': '%s'" % SHA1) + """  out: g
- log: "commit=${g.commit.commit.message} default=${g.commit.defaultBranch} ok=${g.result.ok}"
""")
    assert rc == 0, out
    assert "content=hello from github path=dir/file.txt" in out
    assert "commit=first default=main ok=true" in out
    get = [r for r in api.requests if "/contents/" in r["path"]][0]
    assert get["path"] == "/api/v3/repos/acme/repo/contents/dir/file.txt" and get["query"] == "ref=main"


@neutral
def test_short_sha_tags_and_hooks(api, tmp_path):
    rc, out, ev = run_flow(tmp_path, api, call("getShortSha", ", 'sha': '%s'" % SHA1) + """  out: short
- log: "short=${short.shortSha}"
""" + call("getTag", ", 'tagName': 'v1'") + """  out: tag
- log: "tag=${tag.tag.message}"
""" + call("createHook", ", 'url': ' http://hook/x ', 'events': ['push'], 'secret': 'hook-secret-77', "
                         "'replace': true") + """  out: hook
- log: "hook=${hook.hook.id} url=${hook.hook.config.url} secret=${hook.hook.config.secret}"
""")
    assert rc == 0, out
    assert "short=" + "a" * 8 in out and "tag=rel" in out
    assert "hook=4 url=http://hook/x secret=******" in out and "hook-secret-77" not in ev
    assert ("DELETE", "/api/v3/repos/acme/repo/hooks/3") in reqs(api)
    assert ("DELETE", "/api/v3/repos/acme/repo/hooks/5") not in reqs(api)
    post = [r for r in api.requests if r["path"].endswith("/hooks") and r["method"] == "POST"][0]["body"]
    assert post == {"name": "web", "active": True, "events": ["push"],
                    "config": {"content_type": "form", "secret": "hook-secret-77", "insecure_ssl": "0",
                               "url": "http://hook/x"}}
    rc, out, _ = run_flow(tmp_path, api, call("getTag", ", 'tagName': 'light'"))
    assert rc == 1 and "Failed to get tag: Not an annotated tag: commit" in out


@neutral
def test_dry_run_skips_what_changes_github(api, tmp_path):
    rc, out, _ = run_flow(tmp_path, api, call("createPr", ", 'prTitle': 'T', 'prBody': 'B', "
                                              "'prSourceBranch': 'f', 'prDestinationBranch': 'master'") + """  out: pr
- log: "prId=${pr.prId}"
""" + call("deleteRepo") + call("getTagList") + """  out: t
- log: "tags=${t.tagList}"
""", args=["--dry-run"])
    assert rc == 0, out
    assert "prId=0" in out and "tags=[v1, v2]" in out
    assert "Dry-run mode enabled: Skipping 'createPr' in acme/repo" in out
    assert reqs(api) == [("GET", "/api/v3/repos/acme/repo/tags")]


@neutral
def test_the_server_default_api_url(api, tmp_path):
    steps = """
- task: github
  in: {action: getTagList, auth: {accessToken: "%s"}, org: acme, repo: repo}
  out: t
- log: "tags=${t.tagList}"
""" % TOKEN
    rc, out, _ = run_flow(tmp_path, api, steps, env={"ACCORD_GITHUB_API_URL": api.url})
    assert rc == 0, out
    assert "Starting 'getTagList' action on API URL: %s/api/v3" % api.url in out and "tags=[v1, v2]" in out
    rc, out, _ = run_flow(tmp_path, api, steps, args=["--github-api-url", api.url])
    assert rc == 0 and "tags=[v1, v2]" in out, out


@neutral
def test_parallel_branches_call_github_together(api, tmp_path):
    """The calls of two parallel branches are in flight at the same time (the task's calls run
    off the flow's thread): the server answers each only when both have arrived, so calls made
    one after the other would fail with 504."""
    branch = """    - block:
        - task: github
          in: {action: getTagList, apiUrl: '${gh.apiUrl}', auth: '${gh.auth}', org: acme, repo: barrier}
          out: %s
        - log: "%s=${%s.tagList}"
"""
    rc, out, _ = run_flow(tmp_path, api, "- parallel:\n" + branch % ("a", "a", "a") + branch % ("b", "b", "b"))
    assert rc == 0, out
    assert "a=[together]" in out and "b=[together]" in out


@neutral
def test_list_commits(api, tmp_path):
    rc, out, _ = run_flow(tmp_path, api, call("listCommits", ", 'sha': 'main', 'fromSha': 'c2', 'toSha': 'c7', "
                                              "'pageSize': 3, 'filter': 'feat: (.*)'") + """  out: a
- log: "a=${a.commits.stream().map(c -> c.sha).toList()} ${a.filterMatches} ${a.searchDepthReached}"
""" + call("listCommits", ", 'sha': 'main', 'fromSha': 'c2', 'toSha': 'c7', 'filter': '(?:fix|feat): (.*)'")
        + """  out: b
- log: "b=${b.filterMatches}"
""" + call("listCommits", ", 'sha': 'main', 'fromSha': 'c0', 'toSha': 'c9', 'searchDepth': 3") + """  out: c
- log: "c=${c.commits.stream().map(c -> c.sha).toList()} ${c.searchDepthReached}"
""")
    assert rc == 0, out
    assert "a=[c6, c4] [thing 6, thing 4] false" in out
    assert "b=[bug 7, thing 6, bug 5, thing 4, bug 3]" in out
    assert "c=[c9, c8, c7] true" in out
    first = [r for r in api.requests if r["path"].endswith("/commits")][0]
    assert "sha=main" in first["query"] and "per_page=3" in first["query"]


@neutral
def test_errors(api, tmp_path):
    rc, out, ev = run_flow(tmp_path, api, call("createPr", ", 'prTitle': 'T', 'prBody': 'B', "
                                           "'prSourceBranch': 'broken', 'prDestinationBranch': 'master'"))
    assert rc == 1
    assert 'Failed to create pull request: GitHub API error: 422 - Validation Failed - ' \
           '[{"resource":"PullRequest","code":"invalid"}]' in out
    assert TOKEN not in out and TOKEN not in ev
    for steps, msg in [
        (call("nope"), "Unknown action: 'nope'. Available actions: [CREATEPR, COMMENTPR, MERGEPR"),
        (call("addStatus", ", 'commitSHA': 'x', 'state': 'weird'"),
         "Unknown state: weird. Expected one of [error, failure, pending, success]"),
        (call("getPRList", ", 'state': 'merged'"), "Invalid PR state 'merged'"),
        (call("createPr"), "Mandatory parameter 'prTitle' is required"),
        ("- task: github\n  in: {action: getTagList, org: o, repo: r, apiUrl: 'http://x', "
         "auth: {accessToken: a, appInstallation: {}}}\n",
         "Invalid 'auth' input. Expected one element, got: [accessToken, appInstallation]"),
        (call("getLatestSHA", ", 'branch': 'missing'"), "Branch 'missing' not found"),
    ]:
        rc, out, _ = run_flow(tmp_path, api, steps)
        assert rc == 1, out
        assert msg in out, (steps, out)


@neutral
def test_busy_answers_are_tried_again(api, tmp_path):
    api.busy = 2
    rc, out, _ = run_flow(tmp_path, api, call("getTagList") + '  out: t\n- log: "tags=${t.tagList}"\n')
    assert rc == 0, out
    assert "tags=[v1, v2]" in out and len(api.requests) == 3
    assert "GitHub returned 503. Retry in 0 s (attempt 1 of 5)" in out


def test_server_token_from_a_secret_and_the_server_api_url(fresh_server, api):
    srv = fresh_server(args=["--github-api-url", api.url]).start()
    admin = Client(srv.url, ADMIN_KEY)
    flow = """
flows:
  default:
  - task: github
    in:
      action: getBranchList
      auth: {accessToken: "${crypto.exportAsString('Default', 'gh-token', null)}"}
      org: acme
      repo: repo
    out: res
  - log: "branches=${res.branchList.size()} ok=${res.ok}"
"""
    p, log = run_with_secret(admin, {"name": "gh-token", "type": "data", "data": TOKEN.encode()}, flow)
    assert p["status"] == "FINISHED", log
    assert "branches=121 ok=true" in log
    assert TOKEN not in log


@neutral
def test_github_app_installation_token(api, app_key, tmp_path):
    pem = (app_key / "key.pem").read_text()
    flow_key = json.dumps(pem)
    rc, out, ev = run_flow(tmp_path, api, """
- task: github
  in:
    action: createAppToken
    apiUrl: "%s"
    auth: {appInstallation: {clientId: Iv1.client, privateKey: %s}}
    org: acme
    repo: repo
  out: t
- log: "token length=${t.token.length()}"
- task: github
  in:
    action: getTagList
    apiUrl: "%s"
    auth: {appInstallation: {clientId: Iv1.client, privateKey: %s}}
    org: acme
    repo: repo
  out: tags
- log: "tags=${tags.tagList}"
""" % (api.url, flow_key, api.url, flow_key))
    assert rc == 0, out
    assert "token length=%d" % len(TOKEN) in out and "tags=[v1, v2]" in out
    paths = [r["path"] for r in api.requests]
    assert paths == ["/repos/acme/repo/installation", "/app/installations/5/access_tokens",
                     "/repos/acme/repo/installation", "/app/installations/5/access_tokens",
                     "/api/v3/repos/acme/repo/tags"]
    assert TOKEN not in out and TOKEN not in ev


@neutral
def test_github_app_with_a_wrong_key_fails(api, tmp_path):
    r = subprocess.run(["openssl", "genrsa", "-traditional", "2048"], check=True, capture_output=True, text=True)
    rc, out, _ = run_flow(tmp_path, api, """
- task: github
  in: {action: getTagList, apiUrl: "%s", auth: {appInstallation: {clientId: Iv1.client, privateKey: %s}},
       org: acme, repo: repo}
""" % (api.url, json.dumps(r.stdout)))
    assert rc == 1
    assert "Failed to generate JWT token: Error retrieving app installation: GitHub API error: 401 - " \
           "A JSON web token could not be decoded" in out
    rc, out, _ = run_flow(tmp_path, api, """
- task: github
  in: {action: getTagList, apiUrl: "%s", auth: {appInstallation: {clientId: Iv1.client, privateKey: "nope"}},
       org: acme, repo: repo}
""" % api.url)
    assert rc == 1
    assert "the GitHub App's privateKey is not an RSA private key in PEM format" in out


def test_server_app_installation_secret(server, admin, api, app_key):
    app = json.dumps({"clientId": "Iv1.client", "privateKey": (app_key / "key.pem").read_text()})
    flow = """
flows:
  default:
  - task: github
    in:
      action: getLatestSHA
      apiUrl: "%s"
      auth: {appInstallationSecret: {org: Default, name: gh-app}}
      org: acme
      repo: repo
    out: res
  - log: "latest=${res.latestCommitSHA}"
""" % api.url
    p, log = run_with_secret(admin, {"name": "gh-app", "type": "data", "data": app.encode()}, flow)
    assert p["status"] == "FINISHED", log
    assert "latest=" + SHA1 in log
    assert TOKEN not in log and "BEGIN RSA PRIVATE KEY" not in log
