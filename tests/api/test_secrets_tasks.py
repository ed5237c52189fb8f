"""Tasks that manage secrets and API keys from a flow (issue 29 item 6), as the process's
initiator: the `crypto` task's `action: create` (Concord's CryptoTaskV2), the `concord`
task's createApiKey/createOrUpdateApiKey (ConcordTaskCommon) and `concordSecrets`
(SecretsTaskV2)."""
from conftest import process_log, start_process, unique, wait_process
from proc_util import make_org, make_project

API = "/api/v1/org/%s/secret"


def run(client, flow, parts, expect="FINISHED", files=None):
    pid = start_process(client, flow, parts=parts, files=files)
    p = wait_process(client, pid)
    log = process_log(client, pid)
    assert p["status"] == expect, log
    return log


def export(client, org, name, password=None):
    files = {"storePassword": (None, password)} if password else None
    return client.post(API % org + "/" + name + "/data", files=files)


def test_crypto_create_every_kind(admin):
    org, _ = make_org(admin)
    proj, pid = make_project(admin, org, rawPayloadMode="EVERYONE")
    s_str, s_file, s_kp, s_up = (unique("s") for _ in range(4))
    flow = """
flows:
  default:
    - task: crypto
      in:
        action: create
        secretName: %(s_str)s
        stringValue: "str-value-1"
        visibility: PRIVATE
    - task: crypto
      in:
        action: "  Create "
        org: %(org)s
        secretName: %(s_file)s
        data: files/value.bin
        generatePassword: true
        project: %(proj)s
      out: made
    - log: "password given: ${made.password != null && made.password.length() == 12}"
    - task: crypto
      in:
        action: create
        secretName: %(s_kp)s
        keyPair:
          public: files/id.pub
          private: files/id
    - task: crypto
      in:
        action: create
        secretName: %(s_up)s
        usernamePassword:
          username: bob
          password: "bob-pass-1"
        storePassword: "Str0ngPass9"
      out: up
    - log: "echoed: ${up.password == 'Str0ngPass9'}"
""" % dict(s_str=s_str, s_file=s_file, s_kp=s_kp, s_up=s_up, org=org, proj=proj)
    log = run(admin, flow, {"org": org, "project": proj},
              files={"files/value.bin": b"\x00\x01file-bytes", "files/id.pub": b"ssh-ed25519 AAAAq k",
                     "files/id": b"PRIVATE-KEY"})
    assert "password given: true" in log and "echoed: true" in log
    assert "Str0ngPass9" not in log
    meta = admin.get(API % org + "/" + s_str).json()
    assert meta["type"] == "DATA" and meta["visibility"] == "PRIVATE" and meta["owner"]["username"] == "admin"
    assert export(admin, org, s_str).content == b"str-value-1"
    meta = admin.get(API % org + "/" + s_file).json()
    assert meta["encryptedBy"] == "PASSWORD" and [p["name"] for p in meta["projects"]] == [proj]
    assert admin.get(API % org + "/" + s_kp + "/public").json()["publicKey"] == "ssh-ed25519 AAAAq k"
    assert admin.get(API % org + "/" + s_up).json()["type"] == "USERNAME_PASSWORD"
    assert export(admin, org, s_up, "Str0ngPass9").status_code == 200


def test_crypto_create_refusals(admin, new_user):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    taken = unique("s")
    r = admin.post(API % org, files={"name": (None, taken), "type": (None, "data"), "data": (None, "x")})
    assert r.status_code == 200, r.text
    cases = [
        ("action: delete\n        secretName: xx1\n        stringValue: v", "Unknown action: 'delete'"),
        ("action: create\n        stringValue: v", "'secretName' is required"),
        ("action: create\n        secretName: xx2", "One of 'data', 'stringValue', 'keyPair' or 'usernamePassword'"),
        ("action: create\n        secretName: xx3\n        stringValue: v\n        data: f", "mutually exclusive"),
        ("action: create\n        secretName: xx4\n        data: ../../etc/passwd", "can't create the secret"),
        ("action: create\n        secretName: %s\n        stringValue: v" % taken, "already exists"),
        ("action: create\n        secretName: xx5\n        stringValue: v\n        storePassword: weak",
         "Invalid password"),
        ("action: create\n        secretName: xx6\n        stringValue: v\n        project: nope", "Project not found"),
    ]
    for body, fragment in cases:
        flow = "flows:\n  default:\n    - task: crypto\n      in:\n        %s\n" % body
        log = run(admin, flow, {"org": org, "project": proj}, expect="FAILED")
        assert fragment in log, (body, log)
    for name in ("xx1", "xx2", "xx3", "xx4", "xx5", "xx6"):
        assert admin.get(API % org + "/" + name).status_code == 404
    # the initiator must be a member of the organization
    outsider = new_user()
    flow = """
flows:
  default:
    - task: crypto
      in:
        action: create
        org: %s
        secretName: xx7
        stringValue: v
""" % org
    log = run(outsider, flow, {"org": "Default"}, expect="FAILED")
    assert "xx7" not in [x["name"] for x in admin.get(API % org).json()]
    assert outsider.username in log or "member" in log.lower(), log


def test_crypto_create_in_dry_run_creates_nothing(admin):
    org, _ = make_org(admin)
    name = unique("s")
    flow = """
flows:
  default:
    - task: crypto
      in:
        action: create
        secretName: %s
        stringValue: v
      out: made
    - log: "ok=${made.ok}"
""" % name
    log = run(admin, flow, {"org": org, "dryRun": "true"})
    assert "ok=true" in log
    assert admin.get(API % org + "/" + name).status_code == 404


def test_concord_create_api_key(admin, new_user):
    """Concord's ConcordTaskCommon.createApiKey / createOrUpdateApiKey, as the initiator."""
    user = new_user()
    name = unique("k")
    flow = """
flows:
  default:
    - task: concord
      in:
        action: createApiKey
        username: %(u)s
        name: %(n)s
      out: made
    - log: "made ${made.name} ${made.key.length() > 20} ${made.key}"
    - task: concord
      in:
        action: createApiKey
        username: %(u)s
        name: %(n)s
        ignoreExisting: true
      out: again
    - log: "again ${again.id == made.id} ${again.key == null}"
    - task: concord
      in:
        action: createOrUpdateApiKey
        userId: %(uid)s
        name: %(n)s
      out: upd
    - log: "updated ${upd.result} ${upd.id == made.id} ${upd.key != made.key}"
    - task: concord
      in:
        action: createOrUpdateApiKey
        username: %(u)s
        name: %(n)s-2
      out: fresh
    - log: "fresh ${fresh.result}"
""" % dict(u=user.username, uid=user.user_id, n=name)
    log = run(admin, flow, {"org": "Default"})
    assert "made %s true ******" % name in log, log
    assert "again true true" in log and "updated UPDATED true true" in log and "fresh CREATED" in log
    keys = {k["name"]: k for k in user.get("/api/v1/apikey").json()}
    assert name in keys and name + "-2" in keys
    # a duplicate without ignoreExisting fails; a user makes keys for themselves only
    flow = """
flows:
  default:
    - task: concord
      in:
        action: createApiKey
        username: %s
        name: %s
""" % (user.username, name)
    assert "API key '%s' already exists." % name in run(admin, flow, {"org": "Default"}, expect="FAILED")
    flow = """
flows:
  default:
    - task: concord
      in:
        action: createApiKey
        username: admin
        name: stolen
"""
    assert "only admins can create keys for other users" in run(user, flow, {"org": "Default"}, expect="FAILED")
    assert "stolen" not in [k["name"] for k in admin.get("/api/v1/apikey").json()]
    own = unique("own")
    flow = """
flows:
  default:
    - task: concord
      in:
        action: createApiKey
        username: %s
        name: %s
      out: k
    - log: "own ${k.name}"
""" % (user.username, own)
    assert "own " + own in run(user, flow, {"org": "Default"})


def test_concord_api_key_works(admin, new_user):
    """The key a flow made authenticates as its user."""
    from conftest import Client
    user = new_user()
    flow = """
flows:
  default:
    - task: concord
      in:
        action: createApiKey
        username: %s
        key: QUJDREVGR0hJSktMTU5PUFFSU1RVVldY
      out: k
""" % user.username
    run(admin, flow, {"org": "Default"})
    r = Client(admin.url, "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY").get("/api/v1/apikey")
    assert r.status_code == 200, r.text


def test_concord_secrets_task(admin):
    """Concord's SecretsTaskV2: create, getAsString, update, delete, ignoreErrors."""
    org, _ = make_org(admin)
    proj, pid = make_project(admin, org, rawPayloadMode="EVERYONE")
    other, other_id = make_project(admin, org)
    name, up = unique("s"), unique("u")
    flow = """
flows:
  default:
    - task: concordSecrets
      in:
        action: create
        name: %(name)s
        data: "first-value"
        storePassword: "Str0ngPass9"
    - task: concordSecrets
      in:
        name: %(name)s
        storePassword: "Str0ngPass9"
      out: got
    - log: "got ${got.ok} ${got.status} ${got.data.length()}"
    - task: concordSecrets
      in:
        action: update
        name: %(name)s
        data: "second-value-2"
        storePassword: "Str0ngPass9"
        newStorePassword: "N3wPassword"
        projectIds: ["%(pid)s", "%(other_id)s"]
    - task: concordSecrets
      in:
        action: getAsString
        name: %(name)s
        storePassword: "N3wPassword"
      out: got2
    - log: "got2 ${got2.data.length()}"
    - task: concordSecrets
      in:
        action: create
        name: %(up)s
        type: username_password
        username: bob
        password: "bob-pw"
        project: %(proj)s
    - task: concordSecrets
      in:
        action: update
        name: missing-%(up)s
        createIfMissing: true
        data: "made"
    - task: concordSecrets
      in:
        action: delete
        name: %(up)s
    - task: concordSecrets
      in:
        name: %(up)s
        ignoreErrors: true
      out: gone
    - log: "gone ${gone.ok} ${gone.status}"
""" % dict(name=name, up=up, pid=pid, other_id=other_id, proj=proj)
    log = run(admin, flow, {"org": org, "project": proj})
    assert "got true OK 11" in log and "got2 14" in log and "gone false NOT_FOUND" in log, log
    assert "first-value" not in log and "N3wPassword" not in log
    meta = admin.get(API % org + "/" + name).json()
    assert sorted(p["name"] for p in meta["projects"]) == sorted([proj, other])
    r = admin.post(API % org + "/" + name + "/data", files={"storePassword": (None, "N3wPassword")})
    assert r.content == b"second-value-2"
    assert admin.get(API % org + "/" + up).status_code == 404
    assert export(admin, org, "missing-" + up).content == b"made"
    # without ignoreErrors a missing secret fails the step
    flow = "flows:\n  default:\n    - task: concordSecrets\n      in:\n        name: nope-%s\n" % up
    assert "Secret not found" in run(admin, flow, {"org": org, "project": proj}, expect="FAILED")


def test_concord_secrets_acts_as_the_initiator(admin, new_user):
    org, _ = make_org(admin)
    proj, _ = make_project(admin, org, rawPayloadMode="EVERYONE")
    name = unique("s")
    r = admin.post(API % org, files={"name": (None, name), "type": (None, "data"), "data": (None, "x"),
                                     "visibility": (None, "PRIVATE")})
    assert r.status_code == 200, r.text
    user = new_user()
    flow = """
flows:
  default:
    - task: concordSecrets
      in:
        org: %s
        action: delete
        name: %s
        ignoreErrors: true
      out: r
    - log: "r ${r.ok} ${r.status}"
""" % (org, name)
    log = run(user, flow, {"org": "Default"})
    assert "r false ACCESS_DENIED" in log or "r false NOT_FOUND" in log, log
    assert admin.get(API % org + "/" + name).status_code == 200
