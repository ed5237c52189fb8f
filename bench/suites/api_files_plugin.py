"""A pytest plugin for bench/suites/api-files (loaded with -p api_files_plugin): charges the
CPU of each process pytest starts through subprocess to its program, read from /proc when it
has ended and before subprocess reaps it (waitid WNOWAIT), and writes the sums with pytest's
own CPU to $API_FILES_OUT as JSON at the end."""
import json
import os
import resource
import subprocess

TICK = os.sysconf("SC_CLK_TCK")
_sums = {}
_names = {}


def _program(args):
    args = [args] if isinstance(args, (str, bytes)) else list(args)
    first = os.path.basename(str(args[0])) if args else "?"
    if first == "accord":
        return "serve" if len(args) > 1 and args[1] == "serve" else "accord"
    return "git" if first == "git" else "other"


def _charge(pid):
    """The CPU of pid (ended, not reaped) and of the children it reaped, once."""
    if pid not in _names:
        return
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return
    cpu = sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime
    name = _names.pop(pid)
    _sums[name] = _sums.get(name, 0.0) + cpu


def _ended(pid, block):
    try:
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | (0 if block else os.WNOHANG))
    except ChildProcessError:
        return
    if info is not None:
        _charge(pid)


_init = subprocess.Popen.__init__
_try_wait = subprocess.Popen._try_wait
_internal_poll = subprocess.Popen._internal_poll


def _init_hook(self, args, *a, **kw):
    _init(self, args, *a, **kw)
    _names[self.pid] = _program(args)


def _try_wait_hook(self, wait_flags):
    _ended(self.pid, not wait_flags & os.WNOHANG)
    return _try_wait(self, wait_flags)


def _internal_poll_hook(self, *a, **kw):
    if self.returncode is None:
        _ended(self.pid, False)
    return _internal_poll(self, *a, **kw)


subprocess.Popen.__init__ = _init_hook
subprocess.Popen._try_wait = _try_wait_hook
subprocess.Popen._internal_poll = _internal_poll_hook


def pytest_unconfigure(config):
    out = os.environ.get("API_FILES_OUT")
    if not out:
        return
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out, "w") as f:
        json.dump(dict(_sums, self=me.ru_utime + me.ru_stime, children=kids.ru_utime + kids.ru_stime), f)
