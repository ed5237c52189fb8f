# Accord's Python script helper: runs `script: python` steps for one process on CPython 3,
# speaking the script protocol (docs/flows.md "Scripts") on fd 3: one JSON object per line.
# Started by the runner (src/runner/script_host.c) as `python3 -I -S -B -c <this file>`.
import builtins
import json
import math
import os
import sys
import types

FD = 3
_pending = b""


def send(msg):
    data = (json.dumps(msg, separators=(",", ":")) + "\n").encode("utf-8")
    while data:
        data = data[os.write(FD, data):]


def receive():
    global _pending
    while True:
        nl = _pending.find(b"\n")
        if nl >= 0:
            line, _pending = _pending[:nl], _pending[nl + 1:]
            return json.loads(line.decode("utf-8"))
        chunk = os.read(FD, 65536)
        if not chunk:
            os._exit(0)
        _pending += chunk


def text(v):
    """A value printed the way Concord prints it: {k=v, n=[1, 2]}."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        return "{" + ", ".join("%s=%s" % (k, text(x)) for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(text(x) for x in v) + "]"
    return str(v)


class HashMap(dict):
    """java.util.HashMap for scripts written for Concord: a dict with the Java methods."""

    def get(self, k, d=None):
        return dict.get(self, k, d)

    def put(self, k, v):
        old = dict.get(self, k)
        self[k] = v
        return old

    def putAll(self, m):
        self.update(m)

    def containsKey(self, k):
        return k in self

    def remove(self, k):
        return self.pop(k, None)

    def size(self):
        return len(self)

    def isEmpty(self):
        return len(self) == 0

    def keySet(self):
        return ArrayList(self.keys())

    def getOrDefault(self, k, d):
        return dict.get(self, k, d)

    def __str__(self):
        return text(self)


class ArrayList(list):
    """java.util.ArrayList for scripts written for Concord: a list with the Java methods."""

    def add(self, a, *b):
        if b:
            self.insert(a, b[0])
        else:
            self.append(a)
        return True

    def addAll(self, c):
        self.extend(c)
        return True

    def get(self, i):
        return self[i]

    def set(self, i, v):
        old = self[i]
        self[i] = v
        return old

    def size(self):
        return len(self)

    def isEmpty(self):
        return len(self) == 0

    def contains(self, x):
        return x in self

    def __str__(self):
        return text(self)


def wrap(v):
    if isinstance(v, dict):
        return HashMap((k, wrap(x)) for k, x in v.items())
    if isinstance(v, list):
        return ArrayList(wrap(x) for x in v)
    return v


def plain(v, what, seen=()):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if id(v) in seen:
        raise TypeError("Can't set a non-serializable %s -> a value that contains itself" % what)
    seen = seen + (id(v),)
    if isinstance(v, dict):
        return {str(k): plain(x, what, seen) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [plain(x, what, seen) for x in v]
    raise TypeError(
        "Can't set a non-serializable %s -> a Python %s (use dicts, lists, strings, numbers, booleans or None)"
        % (what, type(v).__name__))


class LogWriter:
    """sys.stdout while a script runs: every line becomes a process log line."""

    def __init__(self, level):
        self.level = level
        self.buf = ""

    def write(self, s):
        self.buf += str(s)
        while "\n" in self.buf:
            line, self.buf = self.buf.split("\n", 1)
            send({"op": "log", "level": self.level, "msg": line})
        return len(s)

    def flush(self):
        if self.buf:
            send({"op": "log", "level": self.level, "msg": self.buf})
            self.buf = ""


def _java_modules():
    java = types.ModuleType("java")
    util = types.ModuleType("java.util")
    lang = types.ModuleType("java.lang")
    for n in ("HashMap", "LinkedHashMap", "TreeMap", "Map"):
        setattr(util, n, HashMap)
    for n in ("ArrayList", "LinkedList", "List"):
        setattr(util, n, ArrayList)

    class System:
        class out:
            @staticmethod
            def println(*a):
                print(*a)

            print = println

    lang.System = System
    java.util, java.lang = util, lang
    sys.modules.update({"java": java, "java.util": util, "java.lang": lang})


_java_modules()

_TYPES = {"String": (str, "java.lang.String"), "Int": (int, "java.lang.Integer"),
          "Long": (int, "java.lang.Long"), "Number": ((int, float), "java.lang.Number"),
          "Boolean": (bool, "java.lang.Boolean"), "Map": (dict, "java.util.Map"),
          "List": (list, "java.util.List"), "Collection": (list, "java.util.Collection")}


def _type_name(v):
    for t, (py, java) in _TYPES.items():
        if isinstance(v, py) and not (t in ("Int", "Long", "Number") and isinstance(v, bool)):
            return java
    return type(v).__name__


class Variables:
    def __init__(self, vars):
        self._v = vars
        for kind, (py, java) in _TYPES.items():
            setattr(self, "get" + kind, self._getter(kind, py, java))
            setattr(self, "assert" + kind, self._asserter(getattr(self, "get" + kind)))

    def _getter(self, kind, py, java):
        def get(name, default=None):
            v = self._v.get(name)
            if v is None:
                return default
            if not isinstance(v, py) or (kind in ("Int", "Long", "Number") and isinstance(v, bool)):
                raise ValueError("Invalid variable '%s' type, expected: %s, got: %s" % (name, java, _type_name(v)))
            return v
        return get

    @staticmethod
    def _asserter(get):
        def check(name):
            v = get(name)
            if v is None:
                raise ValueError("Mandatory variable '%s' is required" % name)
            return v
        return check

    def get(self, name, default=None):
        return self._v[name] if name in self._v else default

    def set(self, name, value):
        value = plain(value, "local variable: %s" % name)
        send({"op": "set", "name": str(name), "value": value})
        self._v[name] = wrap(value)

    def has(self, name):
        return name in self._v

    def remove(self, name):
        self.set(name, None)
        self._v.pop(name, None)

    def toMap(self):
        return HashMap(self._v)


class Context:
    def __init__(self, m, variables):
        self._m = m
        self._vars = variables

    def variables(self):
        return self._vars

    def getVariable(self, name):
        return self._vars.get(name)

    def setVariable(self, name, value):
        self._vars.set(name, value)

    def hasVariable(self, name):
        return self._vars.has(name)

    def removeVariable(self, name):
        self._vars.remove(name)

    def getVariables(self):
        return self._vars.toMap()

    def processInstanceId(self):
        return self._m.get("instanceId")

    getProcessInstanceId = processInstanceId

    def workingDirectory(self):
        return self._m.get("workDir")

    def __str__(self):
        return "Context"


class Task:
    def __init__(self, name, ctx):
        self._name, self._ctx = name, ctx

    def __getattr__(self, method):
        if method.startswith("__"):
            raise AttributeError(method)

        def call(*args):
            args = [plain(a, "argument %d of %s.%s()" % (i + 1, self._name, method))
                    for i, a in enumerate(a for a in args if a is not self._ctx)]
            send({"op": "task", "task": self._name, "method": method, "args": args})
            while True:
                m = receive()
                if m.get("op") == "reply":
                    break
            if not m.get("ok"):
                raise RuntimeError(m.get("error"))
            return wrap(m.get("value"))
        return call


class Tasks:
    def __init__(self, ctx):
        self._ctx = ctx

    def get(self, name):
        return Task(str(name), self._ctx)


def _format(fmt, args):
    parts = str(fmt).split("{}")
    out = parts[0]
    for i, p in enumerate(parts[1:]):
        out += (text(args[i]) if i < len(args) else "{}") + p
    return out


class Log:
    def _at(level):
        return lambda self, fmt, *args: send({"op": "log", "level": level, "msg": _format(fmt, args)})

    info, warn, error, debug, trace = _at("INFO"), _at("WARN"), _at("ERROR"), _at("DEBUG"), _at("DEBUG")
    warning = warn


class Result:
    def __init__(self):
        self.items = {}

    def set(self, k, v):
        self.items[k] = plain(v, "result value: %s" % k)
        return self


PY2_HINTS = ("Missing parentheses in call to", "multiple exception types must be parenthesized",
             "invalid hexadecimal literal", "leading zeros in decimal integer literals are not permitted")
PY2_NAMES = ("unicode", "xrange", "basestring", "raw_input", "unichr", "long", "execfile", "reload", "cmp")


def error_text(e, name, tb):
    import traceback  # only when a script fails: it costs the first step's start-up
    where = ""
    line = None
    if isinstance(e, SyntaxError) and e.filename == name:
        line = e.lineno
    for fr in traceback.extract_tb(tb):
        if fr.filename == name:
            line = fr.lineno
    if line is not None:
        where = " (%sline %d)" % ("" if name == "script" else name + ", ", line)
    msg = "%s: %s" % (type(e).__name__, e.msg if isinstance(e, SyntaxError) else e)
    py2 = (isinstance(e, SyntaxError) and any(h in str(e.msg) for h in PY2_HINTS)) or (
        isinstance(e, NameError) and getattr(e, "name", None) in PY2_NAMES)
    if py2:
        return "Python 2 syntax is not supported: scripts run on Python 3 (python3). " + msg + where
    return msg + where


def run(m):
    name = m.get("name") or "script"
    vars = {k: wrap(v) for k, v in (m.get("vars") or {}).items()}
    variables = Variables(vars)
    ctx = Context(m, variables)
    result = Result()
    g = dict(vars)
    g.update({"__name__": "__script__", "__builtins__": builtins, "execution": ctx, "context": ctx,
              "tasks": Tasks(ctx), "log": Log(), "result": result, "isDryRun": bool(m.get("dryRun"))})
    out, err = LogWriter("INFO"), LogWriter("ERROR")
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        exec(compile(m["body"], name, "exec"), g)
        reply = {"op": "done", "result": result.items}
    except BaseException as e:  # the script's own errors, SystemExit included
        reply = {"op": "error", "message": error_text(e, name, e.__traceback__)}
    finally:
        sys.stdout, sys.stderr = saved
        out.flush()
        err.flush()
    send(reply)


def main():
    os.dup2(2, 1)  # nothing a script prints past sys.stdout can reach the protocol
    while True:
        m = receive()
        if m.get("op") == "run":
            run(m)


main()
