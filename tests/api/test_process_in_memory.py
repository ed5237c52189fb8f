"""A start whose parts all came in the request is held in memory (queue/start_staged.h):
no staging folder, no concord.yml or _main.json written by the server, the payload handed
to the runner in its start frame, and the working directory written by the runner only
before a step that may read it (flow/host.h `files`).  A flow that reads or lists its
folder sees exactly the files a folder start (an archive) gives it."""
import os

from conftest import process_log, start_process, wait_process
from proc_util import wait_for, zip_bytes

DATA = {"data/in.txt": b"payload bytes\n", "notes.md": b"# notes\n"}

LISTS = """
flows:
  default:
    - script: python
      body: |
        import hashlib, os
        for root, dirs, files in os.walk('.'):
            dirs.sort()
            for name in sorted(files):
                p = os.path.join(root, name)[2:]
                if p.startswith('_attachments'):
                    continue
                st = os.stat(p)
                with open(p, 'rb') as f:
                    h = hashlib.sha256(f.read()).hexdigest()[:16]
                print('entry %s %o %d %s' % (p, st.st_mode & 0o777, st.st_size, h))
    - log: "read: ${resource.asString('data/in.txt')}"
"""


def entries(log):
    return sorted(l.split("] entry ", 1)[1] for l in log.splitlines() if "] entry " in l)


def finished_log(client, pid):
    p = wait_process(client, pid)
    log = process_log(client, pid)
    assert p["status"] == "FINISHED", log
    return log


def test_a_flow_lists_and_reads_the_same_files_as_after_a_folder_start(admin):
    in_memory = start_process(admin, LISTS, files=DATA)
    files = dict(DATA)
    files["concord.yml"] = LISTS.encode()
    folder = start_process(admin, files={"archive": (zip_bytes(files), "application/zip")})
    mem_log, dir_log = finished_log(admin, in_memory), finished_log(admin, folder)
    listed = entries(mem_log)
    names = [e.split()[0] for e in listed]
    assert names == ["_main.json", "concord.yml", "data/in.txt", "notes.md"], mem_log
    assert all(e.split()[1] == "600" for e in listed), listed
    # the same names, modes, sizes and bytes (the archive's concord.yml is the same text)
    assert listed == entries(dir_log), (mem_log, dir_log)
    assert "read: payload bytes" in mem_log


def test_a_script_step_reads_a_file_of_the_payload(admin):
    flow = """
flows:
  default:
    - script: js
      body: |
        const fs = require('fs');
        log.info('js read: {}', fs.readFileSync('data/in.txt', 'utf8').trim());
        log.info('js main: {}', JSON.parse(fs.readFileSync('_main.json', 'utf8')).arguments.who);
"""
    pid = start_process(admin, flow, parts={"arguments.who": "me"}, files=DATA)
    log = finished_log(admin, pid)
    assert "js read: payload bytes" in log, log
    assert "js main: me" in log, log


def test_a_suspended_process_keeps_its_files_and_resumes_with_them(admin):
    flow = """
flows:
  default:
    - log: "before: ${resource.asString('notes.md')}"
    - suspend: go
    - log: "after: ${resource.asString('data/in.txt')} ${resource.asString('written.txt')}"
"""
    untouched = """
flows:
  default:
    - suspend: go
    - log: "after: ${resource.asString('data/in.txt')}"
"""
    pid = start_process(admin, flow, files=dict(DATA, **{"written.txt": b"kept"}))
    # a flow that touched nothing before its suspend: the suspend writes the folder
    quiet = start_process(admin, untouched, files=DATA)
    for p in (pid, quiet):
        assert wait_process(admin, p, ("SUSPENDED", "FINISHED", "FAILED"))["status"] == "SUSPENDED", \
            process_log(admin, p)
        r = admin.post("/api/v1/process/%s/resume/go" % p, json={})
        assert r.status_code == 200, r.text
    log = finished_log(admin, pid)
    assert "before: # notes" in log and "after: payload bytes\n kept" in log, log
    assert "after: payload bytes" in finished_log(admin, quiet)


def listing(path):
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def test_a_hello_world_writes_no_file_while_it_runs(server, admin):
    flow = """
flows:
  default:
    - log: "waiting"
    - task: sleep
      in:
        duration: 120
"""
    pid = start_process(admin, flow)
    wait_for(lambda: "waiting" in process_log(admin, pid), timeout=30)
    work = os.path.join(server.data_dir, "work", pid)
    try:
        assert os.path.isdir(work)  # the runner's current directory: made, left empty
        assert listing(work) == []
        assert [n for n in listing(os.path.join(server.data_dir, "tmp")) if not n.startswith(".")] == []
        assert listing(os.path.join(server.data_dir, "ready")) == []
    finally:
        r = admin.delete("/api/v1/process/%s" % pid)
        assert r.status_code in (200, 204), r.text
    assert wait_process(admin, pid)["status"] == "CANCELLED"


def test_a_start_with_imports_or_a_large_file_still_runs_from_a_folder(admin):
    flow = """
imports:
  - dir:
      src: lib
      dest: concord
flows:
  default:
    - call: fromLib
"""
    lib = b"flows:\n  fromLib:\n    - log: \"from lib: ${resource.asString('data/in.txt')}\"\n"
    pid = start_process(admin, flow, files=dict(DATA, **{"lib/extra.concord.yml": lib}))
    assert "from lib: payload bytes" in finished_log(admin, pid)
    big = b"x" * (300 * 1024)
    pid = start_process(admin, LISTS, files=dict(DATA, **{"big.bin": big}))
    log = finished_log(admin, pid)
    assert any(e.startswith("big.bin 600 307200 ") for e in entries(log)), log


def test_an_untouched_folder_serves_the_next_process_a_touched_one_never(server, admin):
    hello = 'flows:\n  default:\n    - log: "hello"\n'
    writes = """
flows:
  default:
    - script: python
      body: |
        open('left.txt', 'w').write('from an earlier process')
"""
    for flow in (hello, hello, writes, hello):
        finished_log(admin, start_process(admin, flow))
    work = os.path.join(server.data_dir, "work")
    # ended processes leave only empty folders kept for the next ones (the folder set aside
    # at an end is removed right after it is stored)
    wait_for(lambda: listing(work) and all(n.startswith(".free-") for n in listing(work)))
    assert all(listing(os.path.join(work, n)) == [] for n in listing(work))
    log = finished_log(admin, start_process(admin, LISTS, files=DATA))
    assert [e.split()[0] for e in entries(log)] == ["_main.json", "concord.yml", "data/in.txt", "notes.md"], log


def test_extra_definition_files_and_profiles_load_from_memory(admin):
    root = """
configuration:
  arguments:
    who: "root"
flows:
  default:
    - call: fromExtra
profiles:
  other:
    configuration:
      arguments:
        who: "profile"
"""
    extra = b'flows:\n  fromExtra:\n    - log: "extra says ${who}"\n'
    custom = b'flows:\n  fromCustom:\n    - log: "custom says ${who}"\n'
    pid = start_process(admin, root, files={"concord/more.concord.yml": extra})
    assert "extra says root" in finished_log(admin, pid)
    pid = start_process(admin, root, parts={"activeProfiles": "other"}, files={"concord/more.concord.yml": extra})
    assert "extra says profile" in finished_log(admin, pid)
    # resources.concord names other files (instead of concord/): as from a folder
    patterned = root.replace("flows:", "resources:\n  concord:\n    - \"glob:more/*.yml\"\nflows:", 1)
    pid = start_process(admin, patterned.replace("fromExtra", "fromCustom"), files={"more/c.yml": custom})
    assert "custom says root" in finished_log(admin, pid)
    files = {"more/c.yml": custom, "concord/more.concord.yml": extra}
    mem = start_process(admin, patterned, files=files)
    folder = start_process(admin, files={"archive": (zip_bytes(dict(files, **{"concord.yml": patterned})),
                                                     "application/zip")})
    outcome = [wait_process(admin, p)["status"] for p in (mem, folder)]
    assert outcome == ["FAILED", "FAILED"], (process_log(admin, mem), process_log(admin, folder))


def test_a_fork_gets_the_parents_payload_as_it_started(admin):
    """A fork's folder is the parent's stored payload (held in memory when small), not
    what the parent wrote since, with _main.json of its own."""
    flow = """
flows:
  default:
    - script: python
      body: |
        import os
        os.makedirs('_attachments', exist_ok=True)
        open('_attachments/parent.txt', 'w').write('the parent keeps it')
        open('made-by-parent.txt', 'w').write('for the fork')
    - task: concord
      in:
        action: fork
        entryPoint: child
        arguments: {who: "fork"}
        sync: true
  child:
    - script: python
      body: |
        import json, os
        for root, dirs, files in os.walk('.'):
            for name in files:
                print('entry %s' % os.path.join(root, name)[2:])
        print('who %s' % json.load(open('_main.json'))['arguments']['who'])
"""
    pid = start_process(admin, flow, files=DATA)
    finished_log(admin, pid)
    r = admin.get("/api/v1/process/%s/subprocess" % pid)
    assert r.status_code == 200, r.text
    kids = [k["instanceId"] for k in r.json()]
    assert len(kids) == 1
    log = finished_log(admin, kids[0])
    names = sorted(l.split("] entry ", 1)[1] for l in log.splitlines() if "] entry " in l)
    assert names == ["_main.json", "concord.yml", "data/in.txt", "notes.md"], log
    assert "who fork" in log, log
