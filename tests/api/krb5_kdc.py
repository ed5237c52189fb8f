"""A throwaway Kerberos realm for the tests (Debian's krb5-kdc and krb5-admin-server):
its database, stash, kdc.conf and krb5.conf in a temporary folder (KRB5_CONFIG,
KRB5_KDC_PROFILE: the machine's /etc/krb5.conf and /etc/krb5kdc are never read or
changed), principals with passwords added by kadmin.local, and krb5kdc in the foreground
on a loopback port."""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

KDB5_UTIL = "/usr/sbin/kdb5_util"
KADMIN_LOCAL = "/usr/sbin/kadmin.local"
KRB5KDC = "/usr/sbin/krb5kdc"
PROGRAMS = (KDB5_UTIL, KADMIN_LOCAL, KRB5KDC)


def installed():
    return all(os.access(p, os.X_OK) for p in PROGRAMS)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Kdc:
    """A realm; max_life: the longest ticket it issues (kdc.conf's syntax, e.g. "20s")."""

    def __init__(self, realm="TEST.REALM", max_life="1h"):
        self.realm = realm
        self.dir = tempfile.mkdtemp(prefix="accord-kdc-")
        self.port = _free_port()
        self.krb5_conf = os.path.join(self.dir, "krb5.conf")
        with open(self.krb5_conf, "w") as f:
            f.write("[libdefaults]\n default_realm = %s\n dns_lookup_kdc = false\n dns_lookup_realm = false\n"
                    " rdns = false\n[realms]\n %s = {\n  kdc = 127.0.0.1:%d\n }\n" % (realm, realm, self.port))
        self.kdc_conf = os.path.join(self.dir, "kdc.conf")
        with open(self.kdc_conf, "w") as f:
            f.write("[kdcdefaults]\n kdc_listen = 127.0.0.1:{p}\n kdc_tcp_listen = 127.0.0.1:{p}\n"
                    "[realms]\n {r} = {{\n  database_name = {d}/principal\n  key_stash_file = {d}/stash\n"
                    "  acl_file = {d}/kadm5.acl\n  max_life = {m}\n }}\n[logging]\n kdc = FILE:{d}/kdc.log\n"
                    .format(p=self.port, r=realm, d=self.dir, m=max_life))
        self.env = dict(os.environ, KRB5_CONFIG=self.krb5_conf, KRB5_KDC_PROFILE=self.kdc_conf)
        self.proc = None

    def _run(self, *args):
        r = subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, "%s: %s%s" % (args[0], r.stdout, r.stderr)

    def start(self):
        self._run(KDB5_UTIL, "create", "-s", "-r", self.realm, "-P", "master-" + os.urandom(8).hex())
        self.proc = subprocess.Popen([KRB5KDC, "-n", "-r", self.realm], env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.time() + 20
        while True:  # ready once its TCP port takes a connection
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                assert self.proc.poll() is None, "krb5kdc ended: " + self.proc.stderr.read().decode()
                assert time.time() < deadline, "krb5kdc did not listen on %d" % self.port
                time.sleep(0.1)

    def add_principal(self, name, password):
        """name@realm with that password."""
        self._run(KADMIN_LOCAL, "-r", self.realm, "-q", "addprinc -pw %s %s@%s" % (password, name, self.realm))
        return "%s@%s" % (name, self.realm)

    def change_password(self, name, password):
        self._run(KADMIN_LOCAL, "-r", self.realm, "-q", "cpw -pw %s %s@%s" % (password, name, self.realm))

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)
