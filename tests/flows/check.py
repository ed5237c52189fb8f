"""What a flow fixture expects, checked against what a run showed: shared by `accord run`
mode (tests/flows/run) and server mode (tests/flows/server.py)."""
import json
import re

TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000 ")


def log_lines(text):
    """The lines of a log or of `accord run`'s output, time stamps removed."""
    return [TS.sub("", l) for l in text.splitlines()]


def matches(pattern, line):
    if pattern.startswith("re:"):
        return re.search(pattern[3:], line) is not None
    return pattern in line


def subset(want, have):
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and subset(v, have[k]) for k, v in want.items())
    return want == have


def in_order(wants, got, found):
    """The first of wants not found (found(want, item)) in got after the previous one's
    place, or None when each is."""
    pos = 0
    for want in wants:
        while pos < len(got) and not found(want, got[pos]):
            pos += 1
        if pos == len(got):
            return want
        pos += 1
    return None


def check_lines(spec, lines, errors):
    """log (in order), forbid and stdout fragments against lines."""
    missing = in_order(spec.get("log", []), lines, matches)
    if missing is not None:
        errors.append("log line not found (in order): %r" % missing)
    for frag in spec.get("forbid", []):
        for l in lines:
            if matches(frag, l):
                errors.append("forbidden line present: %r" % l)
    for frag in spec.get("stdout", []):
        if not any(matches(frag, l) for l in lines):
            errors.append("output line not found: %r" % frag)


def error_ids(err, path="lastError"):
    """Where the engine's internal "@id" shows in an error and the errors inside it (a
    payload the flow threw with is the flow's own and may hold anything)."""
    if not isinstance(err, dict):
        return []
    found = [path] if "@id" in err else []
    found += error_ids(err.get("cause"), path + ".cause")
    for i, x in enumerate(err.get("exceptions") or []):
        found += error_ids(x, "%s.exceptions[%d]" % (path, i))
    return found


def check_out(spec, out, errors):
    """out (exact) and out_has (a subset) against the out variables (None: no out.json);
    in every out.json, lastError without the engine's "@id"."""
    for where in error_ids((out or {}).get("lastError")):
        errors.append("out.json: %s holds the engine's internal @id" % where)
    if "out" in spec and out != spec["out"]:
        errors.append("out.json is %s, expected %s" % (json.dumps(out), json.dumps(spec["out"])))
    if "out_has" in spec and not subset(spec["out_has"], out):
        errors.append("out.json %s lacks %s" % (json.dumps(out), json.dumps(spec["out_has"])))


def check_events(spec, got, errors):
    """events (dict subsets, in order) against the data of the ELEMENT events in got."""
    missing = in_order(spec.get("events", []), got, subset)
    if missing is not None:
        errors.append("event not found (in order): %s" % json.dumps(missing))
