"""Git repositories and git servers for black-box tests (issue 13), on loopback only.

Repositories (the git CLI; author "Test Author <test@example.com>"):
  make_repo(path, files, branch="main", message="Initial commit") -> commit id
      a new repository at path (created) with files {relative path: str | bytes}
  commit(path, files, message="Update", branch=None) -> commit id
      writes files (None as content deletes the file) and commits, on branch when given
      (created from the current commit when it does not exist)
  rev(path, ref="HEAD") -> commit id

Servers (context managers; start() in __enter__, stop() in __exit__):
  HttpsGitServer(root, username="git-user", password=<random>)
      `git http-backend` as a CGI behind Python's http.server + ssl, in a thread of the test
      process, with Basic auth required on every request.  Serves every repository under
      root: url(name) -> "https://127.0.0.1:<port>/<name>" (name relative to root).
      ca_file: the PEM of its self-signed certificate (give it as --git-ca-file, or as the
      fetch child's --ca-file).  requests: count of answered requests.
  SshGitServer(root)
      an `sshd` (own host key, own config, own authorized_keys) as a child process on a
      loopback port; start() raises SshUnavailable("<reason>") when sshd is missing or
      cannot run (tests skip with the reason).  url(name) -> "ssh://<user>@127.0.0.1:<port>
      <root>/<name>".  public_key / private_key: an ed25519 key pair (OpenSSH text) it
      accepts; known_hosts: a known_hosts line for its host key; known_hosts_file(dir)
      writes it to a file and returns its path.

The fetch child (`accord git-fetch`):
  credentials(kind=None, a="", b="") -> bytes
      the credentials frame for stdin: kind None (nothing), "password" (a username, b
      password) or "key" (a public key, may be "", b private key); see src/repo/internal.h
  git_fetch(binary, dir, url, creds=None, ca_file=None, known_hosts=None, timeout=60)
      -> FetchResult(returncode, result (the JSON line as a dict, or None), stdout, stderr)
"""
import base64
import collections
import http.server
import json
import os
import secrets
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": tempfile.gettempdir(),
}


def _git(path, *args):
    env = dict(os.environ)
    env.update(GIT_ENV)
    return subprocess.run(["git", "-C", path] + list(args), check=True, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout.decode().strip()


def _write(path, files):
    for rel, content in files.items():
        full = os.path.join(path, rel)
        if content is None:
            if os.path.exists(full):
                os.remove(full)
            continue
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)


def make_repo(path, files, branch="main", message="Initial commit"):
    os.makedirs(path, exist_ok=True)
    _git(path, "init", "-q", "-b", branch)
    _git(path, "config", "user.name", GIT_ENV["GIT_AUTHOR_NAME"])
    _git(path, "config", "user.email", GIT_ENV["GIT_AUTHOR_EMAIL"])
    _write(path, files)
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "--allow-empty", "-m", message)
    return rev(path)


def commit(path, files, message="Update", branch=None):
    if branch:
        existing = _git(path, "branch", "--list", branch)
        _git(path, "checkout", "-q", *([branch] if existing else ["-b", branch]))
    _write(path, files)
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "--allow-empty", "-m", message)
    return rev(path)


def rev(path, ref="HEAD"):
    return _git(path, "rev-parse", ref + "^{commit}")


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---- HTTPS ---------------------------------------------------------------------------------

def _self_signed(folder):
    key, cert = os.path.join(folder, "key.pem"), os.path.join(folder, "cert.pem")
    # mbedTLS (libgit2's TLS) matches the host against dNSName entries only: 127.0.0.1 is
    # given as one as well as as an address.
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                    "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=DNS:127.0.0.1,DNS:localhost,IP:127.0.0.1",
                    "-addext", "basicConstraints=critical,CA:TRUE"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return key, cert


class _GitHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._serve()

    def do_POST(self):
        self._serve()

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _reply(self, status, headers, body):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _serve(self):
        srv = self.server.git
        body = self._body()
        if getattr(srv, "gate", None) is not None:
            srv.arrived.append(self.path)
            srv.gate.wait()
        want = "Basic " + base64.b64encode(("%s:%s" % (srv.username, srv.password)).encode()).decode()
        if srv.username is not None and self.headers.get("Authorization") != want:
            srv.rejected += 1
            self._reply(401, [("WWW-Authenticate", 'Basic realm="git"')], b"")
            return
        path, _, query = self.path.partition("?")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": srv.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": srv.username or "anonymous",
            "REMOTE_ADDR": "127.0.0.1",
            "HOME": tempfile.gettempdir(),
        }
        if self.headers.get("Content-Encoding"):
            env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        p = subprocess.run(["git", "http-backend"], input=body, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        head, _, out = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = p.stdout.partition(b"\n\n")
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                status = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        srv.requests += 1
        self._reply(status, headers, out)


class _Managed:
    """start() on entering, stop() on leaving; _dir is the server's own temporary folder."""
    _dir = None

    def _remove_dir(self):
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # clients that refuse the certificate hang up mid-handshake: not news


class HttpsGitServer(_Managed):
    def __init__(self, root, username="git-user", password=None):
        self.root = os.path.abspath(root)
        self.username = username
        self.password = password or "pw-" + secrets.token_hex(12)
        self.requests = 0
        self.rejected = 0
        self._dir = None
        self._httpd = None

    def start(self):
        self._dir = tempfile.mkdtemp(prefix="accord-https-git-")
        key, self.ca_file = _self_signed(self._dir)
        self._httpd = _Server(("127.0.0.1", 0), _GitHandler)
        self._httpd.git = self
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(self.ca_file, key)
        self._httpd.socket = ctx.wrap_socket(self._httpd.socket, server_side=True)
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def url(self, name):
        return "https://127.0.0.1:%d/%s" % (self.port, name)

    def stop(self):
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        self._remove_dir()


class SlowHttpGitServer(_Managed):
    """A plain-http smart git server without authentication that holds every request until
    release() (hold() closes it again); `arrived` lists the paths of the requests it got,
    in order, as they arrive."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.username = None
        self.password = None
        self.requests = 0
        self.rejected = 0
        self.arrived = []
        self.gate = threading.Event()
        self.gate.set()
        self._httpd = None

    def start(self):
        self._httpd = _Server(("127.0.0.1", 0), _GitHandler)
        self._httpd.git = self
        self.port = self._httpd.server_address[1]
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def hold(self):
        self.gate.clear()

    def release(self):
        self.gate.set()

    def fetches(self, name):
        """How many fetches of repository `name` arrived (each starts with info/refs)."""
        return sum(1 for p in list(self.arrived) if p.startswith("/%s/info/refs" % name))

    def url(self, name):
        return "http://127.0.0.1:%d/%s" % (self.port, name)

    def stop(self):
        self.release()
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None


# ---- SSH ---------------------------------------------------------------------------------------

class SshUnavailable(Exception):
    pass


class SshGitServer(_Managed):
    SSHD = "/usr/sbin/sshd"

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self._dir = None
        self._proc = None

    def start(self):
        if not os.path.exists(self.SSHD) or not shutil.which("ssh-keygen"):
            raise SshUnavailable("sshd or ssh-keygen is not installed (openssh-server, scripts/deps)")
        self._dir = tempfile.mkdtemp(prefix="accord-sshd-")
        d = self._dir
        host_key, user_key = os.path.join(d, "host_ed25519"), os.path.join(d, "user_ed25519")
        for k in (host_key, user_key):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "accord-test", "-f", k], check=True)
        with open(user_key) as f:
            self.private_key = f.read()
        with open(user_key + ".pub") as f:
            self.public_key = f.read()
        with open(host_key + ".pub") as f:
            host_pub = f.read().split()
        authorized = os.path.join(d, "authorized_keys")
        with open(authorized, "w") as f:
            f.write(self.public_key)
        os.chmod(authorized, 0o600)
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.user = _user()
        self.port = _free_port()
        cfg = os.path.join(d, "sshd_config")
        with open(cfg, "w") as f:
            f.write("\n".join([
                "Port %d" % self.port, "ListenAddress 127.0.0.1", "HostKey %s" % host_key,
                "PidFile %s" % os.path.join(d, "sshd.pid"), "AuthorizedKeysFile %s" % authorized,
                "UsePAM no", "StrictModes no", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                "PubkeyAuthentication yes", "PermitRootLogin yes", "LogLevel ERROR", "PrintMotd no",
                "AllowUsers %s" % self.user, "",
            ]))
        self._log = open(os.path.join(d, "sshd.log"), "w+")
        self._proc = subprocess.Popen([self.SSHD, "-D", "-e", "-f", cfg], stdout=self._log, stderr=self._log)
        deadline = time.time() + 10
        while time.time() < deadline:
            if self._proc.poll() is not None:
                self._log.seek(0)
                reason = self._log.read().strip() or "exit status %s" % self._proc.returncode
                self.stop()
                raise SshUnavailable("sshd cannot run: " + reason)
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            self.stop()
            raise SshUnavailable("sshd did not listen on 127.0.0.1:%d" % self.port)
        self.known_hosts = "[127.0.0.1]:%d %s %s\n" % (self.port, host_pub[0], host_pub[1])
        return self

    def known_hosts_file(self, folder):
        path = os.path.join(folder, "known_hosts")
        with open(path, "w") as f:
            f.write(self.known_hosts)
        return path

    def url(self, name):
        return "ssh://%s@127.0.0.1:%d%s/%s" % (self.user, self.port, self.root, name)

    def stop(self):
        if self._proc and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        self._proc = None
        self._remove_dir()


def _user():
    import pwd
    return pwd.getpwuid(os.geteuid()).pw_name


# ---- the fetch child ------------------------------------------------------------------------

FetchResult = collections.namedtuple("FetchResult", "returncode result stdout stderr")


def credentials(kind=None, a="", b=""):
    if kind is None:
        return b"\0"
    t = {"password": 1, "key": 2}[kind]
    a = a.encode() if isinstance(a, str) else a
    b = b.encode() if isinstance(b, str) else b
    return bytes([t]) + struct.pack(">I", len(a)) + a + struct.pack(">I", len(b)) + b


def git_fetch(binary, dir, url, creds=None, ca_file=None, known_hosts=None, timeout=60):
    args = [binary, "git-fetch"]
    if ca_file:
        args += ["--ca-file", ca_file]
    if known_hosts:
        args += ["--known-hosts", known_hosts]
    home = tempfile.mkdtemp(prefix="accord-git-home-")
    env = {"HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin"}
    for k in ("ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"):
        if k in os.environ:
            env[k] = os.environ[k]
    try:
        p = subprocess.run(args + [dir, url], input=creds if creds is not None else credentials(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    try:
        result = json.loads(out.splitlines()[0]) if out.strip() else None
    except ValueError:
        result = None
    return FetchResult(p.returncode, result, out, err)
