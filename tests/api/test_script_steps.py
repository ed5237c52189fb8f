"""`script:` steps under the server: the helper processes live inside the runner's
confinement, are reused by the steps of a process and end with it."""
import os
import uuid

import pytest
from conftest import backend_neutral, process_log, start_process, wait_process

neutral = backend_neutral("the script helpers' confinement, timeout and names in the runner: the database takes"
                          " no part; the helpers' reuse and their calls of server tasks run on both backends")


def gone(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def wait_gone(pid, timeout=20):
    import time
    end = time.time() + timeout
    while time.time() < end:
        if gone(pid):
            return True
        time.sleep(0.05)
    return False


def pids(log, tag):
    return [int(l.split(tag)[1].split()[0]) for l in log.splitlines() if tag in l]


@neutral
def test_scripts_cannot_escape_the_working_directory(server, admin):
    if "landlock ABI" not in server.read_log():
        pytest.skip("no Landlock on this kernel: scripts are confined by it only")
    secret = os.path.join(server.data_dir, "outside-%s.txt" % uuid.uuid4().hex)
    with open(secret, "w") as f:
        f.write("the server's")
    planted = {lang: os.path.join(server.data_dir, "escape-%s-%s" % (lang, uuid.uuid4().hex))
               for lang in ("js", "py", "rb")}
    flow = """
flows:
  default:
    - script: js
      body: |
        const fs = require('fs');
        for (const [what, f] of [['read', () => fs.readFileSync('%(secret)s', 'utf8')],
                                 ['write', () => fs.writeFileSync('%(js)s', 'x')],
                                 ['list', () => fs.readdirSync('%(data)s')]]) {
          try { log.info('js {}: {}', what, f()); } catch (e) { log.info('js {} refused: {}', what, e.code); }
        }
        fs.writeFileSync('inside.txt', 'ok');
        log.info('js inside: {}', fs.readFileSync('inside.txt', 'utf8'));
    - script: python
      body: |
        import os
        for what, f in (('read', lambda: open('%(secret)s').read()),
                        ('write', lambda: open('%(py)s', 'w').write('x')),
                        ('list', lambda: os.listdir('%(data)s'))):
            try:
                print('py %%s: %%s' %% (what, f()))
            except PermissionError:
                print('py %%s refused' %% what)
    - script: ruby
      body: |
        [['read', -> { File.read('%(secret)s') }], ['write', -> { File.write('%(rb)s', 'x') }],
         ['list', -> { Dir.children('%(data)s') }]].each do |what, f|
          begin
            puts "rb #{what}: #{f.call}"
          rescue Errno::EACCES
            puts "rb #{what} refused"
          end
        end
""" % {"secret": secret, "js": planted["js"], "py": planted["py"], "rb": planted["rb"], "data": server.data_dir}
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    for what in ("read", "write", "list"):
        assert "js %s refused: EACCES" % what in log, log
        assert "py %s refused" % what in log, log
        assert "rb %s refused" % what in log, log
    assert "js inside: ok" in log
    assert "the server's" not in log
    assert not any(os.path.exists(f) for f in planted.values())


@neutral
def test_a_script_that_loops_forever_is_stopped_by_the_process_timeout(admin):
    for lang, body in (("js", "log.info('helper ' + process.pid); for (;;) {}"),
                       ("python", "import os\nlog.info('helper ' + str(os.getpid()))\nwhile True:\n    pass")):
        flow = """
configuration:
  processTimeout: "PT2S"
flows:
  default:
    - script: %s
      body: |
%s
""" % (lang, "\n".join("        " + l for l in body.splitlines()))
        pid = start_process(admin, flow)
        p = wait_process(admin, pid, timeout=60)
        log = process_log(admin, pid)
        assert p["status"] == "TIMED_OUT", log
        helper = pids(log, "helper ")
        assert len(helper) == 1, log
        assert wait_gone(helper[0]), "the %s helper outlived its process" % lang


def test_one_helper_per_engine_reused_and_ended_with_the_process(admin):
    flow = """
flows:
  default:
    - script: js
      body: "log.info('js helper ' + process.pid)"
    - script: python
      body: |
        import os
        log.info('python helper {}', os.getpid())
    - script: js
      body: "log.info('js helper ' + process.pid)"
      loop:
        items: [1, 2]
    - script: python
      body: |
        import os
        log.info('python helper {}', os.getpid())
"""
    pid = start_process(admin, flow)
    p = wait_process(admin, pid)
    log = process_log(admin, pid)
    assert p["status"] == "FINISHED", log
    js, py = pids(log, "js helper "), pids(log, "python helper ")
    assert len(js) == 3 and len(set(js)) == 1, log
    assert len(py) == 2 and len(set(py)) == 1, log
    assert js[0] != py[0]
    assert wait_gone(js[0]) and wait_gone(py[0])


@neutral
def test_the_server_names_its_script_engines(server):
    import subprocess
    from conftest import BIN
    assert "script engines: js (/usr/bin/node" in server.read_log() or "missing: js" in server.read_log()
    out = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True).stdout
    assert "Script engines of `script:` steps on this node: " in out
    assert "python (/usr/bin/python3)" in out


def test_scripts_call_server_tasks_with_the_process_rights(admin, new_user):
    """tasks.get(…) reaches the server's tasks as the process's initiator: kv in the
    process's project, a secret the initiator may read (masked wherever the script prints
    it), and not one of a project the initiator has no part in."""
    import sys
    sys.path.insert(0, os.path.dirname(__file__))
    from proc_util import make_org, make_project, make_team
    from test_server_tasks import create_secret
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    other, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    user = new_user()
    make_team(admin, org, [(user, "MEMBER")], project=proj, level="WRITER")
    value = "s3cr3t-" + uuid.uuid4().hex[:8]
    create_secret(admin, org, name="pub", type="data", data=value, visibility="PUBLIC")
    create_secret(admin, org, name="theirs", type="data", data="not-yours", visibility="PUBLIC", project=other)
    flow = """
flows:
  default:
    - script: js
      body: |
        const kv = tasks.get('kv');
        kv.putString('greeting', 'hello from js');
        log.info('kv: {}', kv.getString('greeting'));
        const crypto = tasks.get('crypto');
        const v = crypto.exportAsString('%(org)s', 'pub', null);
        log.info('secret: {} length {}', v, v.length);
        try {
          crypto.exportAsString('%(org)s', 'theirs', null);
          log.info('read theirs');
        } catch (e) {
          log.info('theirs refused');
        }
    - script: python
      body: |
        print('python kv:', tasks.get('kv').getString('greeting'))
""" % {"org": org}
    pid = start_process(user, flow, parts={"org": org, "project": proj})
    p = wait_process(user, pid)
    log = process_log(user, pid)
    assert p["status"] == "FINISHED", log
    assert "kv: hello from js" in log and "python kv: hello from js" in log
    assert "secret: ****** length %d" % len(value) in log
    assert "theirs refused" in log and "read theirs" not in log
    assert value not in log and "not-yours" not in log
