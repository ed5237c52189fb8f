"""The backend rule of conftest.py's docstring, held to the test modules' code (read, not
run): a test marked backend_neutral runs on one backend only (SQLite; PostgreSQL for
conftest's NEUTRAL_ON_POSTGRESQL when scripts/run-suites runs both suites), so

* every mark says why (a reason of some words), and is put where this check sees it: as a
  decorator (`@backend_neutral("…")`, or a module-level name bound to one), or in a
  module's `pytestmark`;
* a neutral test (its body, and the module's own helpers and fixtures it uses, followed
  through) names none of FORBIDDEN: what would make the database part of its subject;
* each family of FAMILIES (a task or tool, a realm, the HTTP layer) keeps at least one test
  that is not neutral, so that PostgreSQL still runs it end to end.
"""
import ast
import functools
import glob
import importlib
import io
import os
import re

from conftest import backend_neutral

pytestmark = backend_neutral("reads the test modules' source: no server, no database")

HERE = os.path.dirname(os.path.abspath(__file__))

# pattern -> why a test that names it is never neutral
FORBIDDEN = {
    r"/ansible/": "Concord's ansible views (lists, filters and counts of the stored events)",
    r"/(inventory|jsonstore)\b(?!\.)": "inventories and JSON stores (queries on the backend)",
    r"/audit": "the audit log (a store-backed list)",
    r"get\([^)]*/api/v[12]/process[\"?]": "process lists and their filters",
    r"\bdb_util\b|\bpsql\b": "it looks into the database",
    r"\bTEST_DB\b|\bsqlite_only\b|\bpg_url\b": "it asks which backend it is on",
    r"\bdata_dir=": "a restart on the same data (recovery)",
    r"\bSIGKILL\b": "a kill the store recovers from",
    r"def \w+\([^)]*\bnodes\b": "several nodes on one database (the nodes fixture)",
}

# family -> its modules: at least one test of them stays on both backends
FAMILIES = {
    "ansible": ["test_ansible.py", "test_ansible_params.py", "test_ansible_policy.py", "test_ansible_krb5.py",
                "test_concord_it_ansible.py", "test_concord_it_ansible_projects.py"],
    "docker": ["test_docker_task.py"],
    "script steps": ["test_script_steps.py"],
    "http task": ["test_http_task.py"],
    "smtp task": ["test_smtp_task.py", "test_smtp_tls.py"],
    "slack task": ["test_slack_task.py"],
    "github task": ["test_github_task.py"],
    "git task and fetch": ["test_git_task.py", "test_git_fetch.py"],
    "ldap task": ["test_ldap_task.py", "test_ldap_task_srv.py"],
    "LDAP realm": ["test_ldap.py", "test_ldap_pool.py", "test_ldap_forms.py"],
    "OIDC realm": ["test_oidc.py", "test_oidc_mapping.py", "test_oidc_opaque.py"],
    "imports": ["test_imports.py"],
    "HTTP layer": ["test_http_hardening.py", "test_http_io_threads.py", "test_json_negotiation.py"],
    "runners": ["test_process_zygote.py", "test_runner_identity.py", "test_work_dir.py"],
    "start-up": ["test_startup.py", "test_first_run.py"],
}


def is_neutral_call(node):
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "backend_neutral"


class Module:
    """One test module: its functions, its neutral names and whether the whole module is."""

    def __init__(self, name):
        self.name = name
        with open(os.path.join(HERE, name)) as f:
            self.src = f.read()
        # split once: ast.get_source_segment splits the whole source at each call (12 CPU-s
        # of the suite's, bench/RESULTS.md); the same lines (\n, \r\n, \r), ends kept
        self.lines = io.StringIO(self.src, newline="").readlines()
        self.tree = ast.parse(self.src)
        self.funcs = {n.name: n for n in self.tree.body if isinstance(n, ast.FunctionDef)}
        self.marks = []  # the backend_neutral(...) calls, wherever they are
        self.names = set()  # module-level names bound to a mark
        self.whole = False
        self.misplaced = []
        self.imports_pytestmark_from = None
        self.read_marks()

    def read_marks(self):
        placed = set()
        for n in self.tree.body:
            if isinstance(n, ast.ImportFrom) and any(a.name == "pytestmark" for a in n.names):
                self.imports_pytestmark_from = n.module + ".py"
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
                target = n.targets[0].id
                values = n.value.elts if isinstance(n.value, (ast.List, ast.Tuple)) else [n.value]
                for v in values:
                    if is_neutral_call(v):
                        placed.add(id(v))
                        if target == "pytestmark":
                            self.whole = True
                        else:
                            self.names.add(target)
            if isinstance(n, ast.FunctionDef):
                placed.update(id(d) for d in n.decorator_list if is_neutral_call(d))
        for node in ast.walk(self.tree):
            if is_neutral_call(node):
                self.marks.append(node)
                if id(node) not in placed:
                    self.misplaced.append(node.lineno)

    def neutral(self, fn, modules):
        if self.whole:
            return True
        if self.imports_pytestmark_from and modules[self.imports_pytestmark_from].whole:
            return True
        return any(is_neutral_call(d) or (isinstance(d, ast.Name) and d.id in self.names)
                   for d in fn.decorator_list)

    def tests(self):
        return [f for name, f in self.funcs.items() if name.startswith("test_")]

    def reach(self, fn):
        """fn's source and that of the module's functions (helpers, fixtures) it reaches."""
        seen, todo = {fn.name}, [fn]
        while todo:
            f = todo.pop()
            used = {a.arg for a in f.args.args} | {n.id for n in ast.walk(f) if isinstance(n, ast.Name)}
            for name in used:
                if name in self.funcs and name not in seen:
                    seen.add(name)
                    todo.append(self.funcs[name])
        return "\n".join(self.segment(self.funcs[n]) for n in sorted(seen))

    def segment(self, node):
        """node's source, as ast.get_source_segment gives it (its offsets count UTF-8 bytes)."""
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            return self.lines[first].encode()[node.col_offset:node.end_col_offset].decode()
        return "".join([self.lines[first].encode()[node.col_offset:].decode()] + self.lines[first + 1:last] +
                       [self.lines[last].encode()[:node.end_col_offset].decode()])


@functools.lru_cache(maxsize=None)
def modules():
    """Every test module, read once per pytest process (the tests here only read them)."""
    return {os.path.basename(p): Module(os.path.basename(p)) for p in sorted(glob.glob(os.path.join(HERE, "test_*.py")))}


def test_every_mark_is_placed_where_it_is_seen_and_says_why():
    ms = modules()
    bad = []
    for m in ms.values():
        bad += ["%s:%d: backend_neutral(...) outside a decorator, a mark name or pytestmark" % (m.name, line)
                for line in m.misplaced]
        for call in m.marks:
            reason = call.args[0] if len(call.args) == 1 and not call.keywords else None
            text = reason.value if isinstance(reason, ast.Constant) and isinstance(reason.value, str) else ""
            if len(text.split()) < 4:
                bad.append("%s:%d: backend_neutral needs one reason, a string of some words" % (m.name, call.lineno))
        if "pytest.mark.backend_neutral" in m.src and m.name != os.path.basename(__file__):
            bad.append("%s: the mark is conftest.backend_neutral(reason), not pytest.mark.backend_neutral" % m.name)
    assert not bad, "\n".join(bad)


def test_a_neutral_test_names_nothing_that_makes_the_database_its_subject():
    ms = modules()
    bad = []
    for m in ms.values():
        for fn in m.tests():
            if not m.neutral(fn, ms):
                continue
            text = m.reach(fn)
            bad += ["%s::%s names %r: %s" % (m.name, fn.name, re.search(p, text).group(0), why)
                    for p, why in FORBIDDEN.items() if re.search(p, text)]
    assert not bad, "\n".join(bad)


def test_every_family_keeps_a_test_on_both_backends():
    ms = modules()
    bad = []
    for family, names in FAMILIES.items():
        missing = [n for n in names if n not in ms]
        assert not missing, "FAMILIES names modules that are gone: %s" % missing
        if all(ms[n].neutral(fn, ms) for n in names for fn in ms[n].tests()):
            bad.append("%s (%s): every test is backend_neutral" % (family, ", ".join(names)))
    assert not bad, "\n".join(bad)


def marks_of(obj):
    marks = getattr(obj, "pytestmark", [])
    return marks if isinstance(marks, list) else [marks]


def test_the_check_sees_the_marks_pytest_sees():
    """What this reading counts as neutral is what pytest deselects: the marks pytest reads
    (the functions' and the modules' pytestmark) of every test, imported."""
    ms = modules()
    differ = []
    for m in ms.values():
        mod = importlib.import_module(m.name[:-3])
        whole = any(k.name == "backend_neutral" for k in marks_of(mod))
        for fn in m.tests():
            pytest_sees = whole or any(k.name == "backend_neutral" for k in marks_of(getattr(mod, fn.name)))
            if pytest_sees != m.neutral(fn, ms):
                differ.append("%s::%s: pytest %s, this check %s" % (m.name, fn.name, pytest_sees, not pytest_sees))
    assert not differ, "\n".join(differ)


def test_conftest_defines_each_function_once():
    """A second `def pytest_collection_modifyitems` in conftest.py silently replaced the
    first (a merge did it: the neutral tests then ran on PostgreSQL again, unnoticed); every
    module-level function of conftest.py is defined once."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "conftest.py")) as f:
        tree = ast.parse(f.read())
    names = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert sorted(set(n for n in names if names.count(n) > 1)) == []
