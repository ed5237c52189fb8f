"""initiator.usernameSignature (issue 29 item 7, Concord's process.signingKeyPath): with a
signing key, a flow's initiator and currentUser carry the Base64 SHA256withRSA signature of
the username, which the key's public half verifies; without one, no signature."""
import base64
import os
import re
import subprocess
import tempfile

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from conftest import BIN, Client, ADMIN_KEY, process_log, start_process, wait_process

FLOW = """
flows:
  default:
    - log: "SIG=${initiator.usernameSignature}"
    - log: "CUR=${currentUser.usernameSignature}"
    - log: "NAME=${initiator.username}"
"""


def key_file(private_key):
    fd, path = tempfile.mkstemp(prefix="accord-signing-", suffix=".pem")
    with os.fdopen(fd, "wb") as f:
        f.write(private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return path


def admin_of(srv):
    return Client(srv.url, ADMIN_KEY, "admin", "230c5c9c-d9a7-11e6-bcfd-bb681c07b26c", ADMIN_KEY)


def test_initiator_username_is_signed_with_the_configured_key(fresh_server, new_user):
    private_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = key_file(private_key)
    try:
        srv = fresh_server(args=["--process-signing-key", path]).start()
        admin = admin_of(srv)
        pid = start_process(admin, FLOW)
        assert wait_process(admin, pid)["status"] == "FINISHED"
        log = process_log(admin, pid)
    finally:
        os.unlink(path)
    sig = re.search(r"SIG=(\S+)", log).group(1)
    assert re.search(r"CUR=(\S+)", log).group(1) == sig
    assert re.search(r"NAME=(\S+)", log).group(1) == "admin"
    private_key.public_key().verify(base64.b64decode(sig), b"admin", padding.PKCS1v15(), hashes.SHA256())
    # the signature is of the initiator's own name, not a constant
    srv_log = srv.read_log()
    assert sig not in srv_log and "PRIVATE KEY" not in srv_log


def test_no_signing_key_no_signature(admin):
    pid = start_process(admin, "flows:\n  default:\n    - log: \"HAS=${initiator.containsKey('usernameSignature')}\"\n")
    assert wait_process(admin, pid)["status"] == "FINISHED"
    assert "HAS=false" in process_log(admin, pid)


def test_a_bad_signing_key_stops_the_server_with_a_clear_message(tmp_path):
    bad = tmp_path / "bad.pem"
    bad.write_text("-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n")
    for path in (str(bad), str(tmp_path / "missing.pem")):
        r = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--data", str(tmp_path / "data"),
                            "--process-signing-key", path], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, r.stderr
        assert "--process-signing-key %s" % path in r.stderr
        assert "bm90IGEga2V5" not in r.stderr
