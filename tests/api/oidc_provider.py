"""An OpenID Connect provider for the tests (tests/api/test_oidc.py, tests/browser): discovery,
keys (JWKS), an authorization endpoint that consents at once and redirects with a code, a
token endpoint that checks the client's secret, the redirect URI and the PKCE verifier, and
signs real RS256 ID tokens (python3-cryptography), and a userinfo endpoint that answers for
the opaque access tokens it issued (`opaque()` issues one for the current user without a
login; `revoke(token)` forgets one).  Knobs: `user` (the claims of whoever
logs in next), `next_token` (changes to the next ID token: claims to override, "tamper",
"kid"), `rotate()` (a new signing key), `down` (every request answered by closing)."""
import base64
import hashlib
import http.server
import json
import secrets
import threading
import time
import urllib.parse

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_int(n):
    return b64url(n.to_bytes((n.bit_length() + 7) // 8, "big"))


class Provider:
    def __init__(self, client_id="accord", client_secret="s3cret-client"):
        self.client_id = client_id
        self.client_secret = client_secret
        self.keys = []  # (kid, private key), newest last; the newest signs
        self.rotate()
        self.user = {"email": "alice@example.org", "name": "Alice Liddell", "groups": []}
        self.next_token = {}
        self.codes = {}
        self.down = False
        self.jwks_requests = 0
        self.token_requests = []
        self.access_tokens = {}  # opaque access token -> the claims its userinfo answers
        self.userinfo_requests = 0
        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = "http://127.0.0.1:%d" % self.srv.server_address[1]
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()

    def rotate(self, keep_old=True):
        kid = "k%d-%s" % (len(self.keys) + 1, secrets.token_hex(4))
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.keys = (self.keys if keep_old else []) + [(kid, key)]
        return kid

    def jwks(self):
        out = []
        for kid, key in self.keys:
            pub = key.public_key().public_numbers()
            out.append({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid, "n": b64url_int(pub.n),
                        "e": b64url_int(pub.e)})
        return {"keys": out}

    def sign(self, claims, kid=None, key=None, tamper=False):
        kid = kid or self.keys[-1][0]
        key = key or self.keys[-1][1]
        header = {"alg": "RS256", "typ": "JWT", "kid": kid}
        signing_input = b64url(json.dumps(header).encode()) + "." + b64url(json.dumps(claims).encode())
        sig = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        if tamper:
            sig = bytes([sig[0] ^ 1]) + sig[1:]
        return signing_input + "." + b64url(sig)

    def claims(self, nonce=None, **over):
        now = int(time.time())
        c = {"iss": self.url, "sub": "sub-" + self.user.get("email", "x"), "aud": self.client_id, "iat": now,
             "exp": now + 300}
        if nonce is not None:
            c["nonce"] = nonce
        c.update(self.user)
        c.update(over)
        return c

    def token(self, nonce=None, **over):
        """A signed ID token for the current user, as the token endpoint makes it."""
        return self.sign(self.claims(nonce, **over))

    def opaque(self, **over):
        """An opaque access token (no JWT) whose userinfo is the current user's claims."""
        t = secrets.token_urlsafe(24)
        c = {"sub": "sub-" + self.user.get("email", "x")}
        c.update(self.user)
        c.update(over)
        self.access_tokens[t] = c
        return t

    def revoke(self, token):
        self.access_tokens.pop(token, None)

    def _id_token(self, nonce):
        nxt, self.next_token = self.next_token, {}
        over = dict(nxt.get("claims", {}))
        claims = self.claims(over.pop("nonce", nonce), **over)
        key = None
        if "key" in nxt:
            key = nxt["key"]
        return self.sign(claims, kid=nxt.get("kid"), key=key, tamper=nxt.get("tamper", False))

    def _handler(self):
        provider = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def answer(self, status, body=None, headers=()):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if provider.down:
                    self.close_connection = True
                    return
                u = urllib.parse.urlparse(self.path)
                q = dict(urllib.parse.parse_qsl(u.query))
                if u.path == "/.well-known/openid-configuration":
                    return self.answer(200, {
                        "issuer": provider.url, "authorization_endpoint": provider.url + "/authorize",
                        "token_endpoint": provider.url + "/token", "jwks_uri": provider.url + "/jwks",
                        "userinfo_endpoint": provider.url + "/userinfo",
                        "end_session_endpoint": provider.url + "/logout",
                        "code_challenge_methods_supported": ["S256"]})
                if u.path == "/jwks":
                    provider.jwks_requests += 1
                    return self.answer(200, provider.jwks())
                if u.path == "/authorize":
                    return self.authorize(q)
                if u.path == "/userinfo":
                    return self.userinfo()
                if u.path == "/logout":
                    return self.answer(302, None, [("Location", q.get("post_logout_redirect_uri", "/"))])
                self.answer(404, {"error": "not_found"})

            def userinfo(self):
                provider.userinfo_requests += 1
                auth = self.headers.get("Authorization", "")
                claims = provider.access_tokens.get(auth[7:]) if auth.startswith("Bearer ") else None
                if claims is None:
                    return self.answer(401, {"error": "invalid_token"},
                                       [("WWW-Authenticate", 'Bearer error="invalid_token"')])
                self.answer(200, claims)

            def authorize(self, q):
                if (q.get("response_type") != "code" or q.get("client_id") != provider.client_id or
                        q.get("code_challenge_method") != "S256" or "openid" not in q.get("scope", "").split()):
                    return self.answer(400, {"error": "invalid_request", "got": q})
                code = secrets.token_urlsafe(16)
                provider.codes[code] = q
                loc = q["redirect_uri"] + "?" + urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
                self.answer(302, None, [("Location", loc)])

            def do_POST(self):
                if provider.down:
                    self.close_connection = True
                    return
                n = int(self.headers.get("Content-Length", "0"))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(n).decode()))
                if self.path != "/token":
                    return self.answer(404, {"error": "not_found"})
                provider.token_requests.append(form)
                expected = "Basic " + base64.b64encode(
                    ("%s:%s" % (provider.client_id, provider.client_secret)).encode()).decode()
                if self.headers.get("Authorization") != expected:
                    return self.answer(401, {"error": "invalid_client"})
                q = provider.codes.pop(form.get("code", ""), None)
                if not q or form.get("grant_type") != "authorization_code" or \
                        form.get("redirect_uri") != q["redirect_uri"]:
                    return self.answer(400, {"error": "invalid_grant"})
                challenge = b64url(hashlib.sha256(form.get("code_verifier", "").encode()).digest())
                if challenge != q.get("code_challenge"):
                    return self.answer(400, {"error": "invalid_grant", "error_description": "PKCE verifier"})
                self.answer(200, {"access_token": provider.opaque(), "token_type": "Bearer",
                                  "id_token": provider._id_token(q.get("nonce")), "expires_in": 300})

        return Handler
