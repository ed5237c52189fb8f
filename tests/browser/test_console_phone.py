"""At 390 px wide (a phone), every table of the console becomes stacked cards: the
process list, its children and checkpoints, secrets, projects, teams, members, keys, the
audit log.  Each cell is labelled by its column, the page does not scroll sideways, and no
word is broken inside (a break after a hyphen or slash is a line break, not a broken word:
the issue was "PRI VAT E")."""
from conftest import ADMIN_PASSWORD, navigate, sign_in, start_process, unique, visit, wait_process
from proc_util import make_org, make_project, make_team

PHONE_390 = (390, 844)

PARENT = """
flows:
  default:
    - checkpoint: first
    - task: concord
      in: {action: start, payload: child, sync: true, tags: [a-child-with-tags]}
    - suspend: go
"""

# Every table in main: whether it is drawn as cards (its head hidden, its rows blocks, each
# cell of a named column labelled by it), and the words of its cells drawn on more than one line.
CARDS = r"""
const out = [];
for (const table of document.querySelectorAll('main table')) {
  const head = table.tHead ? table.tHead.getBoundingClientRect().height : 0;
  const rows = [...table.querySelectorAll('tbody:not(.spacer) tr')];
  const blocks = rows.every((tr) => getComputedStyle(tr).display === 'block');
  const heads = table.tHead ? [...table.tHead.rows[0].cells].map((th) => th.textContent.trim()) : [];
  const labelled = rows.every((tr) => [...tr.cells].every((td, i) => getComputedStyle(td).display === 'none' ||
    !td.textContent.trim() || !heads[i] || td.dataset.label === heads[i]));
  const broken = [];
  for (const td of table.querySelectorAll('tbody td')) {
    const walk = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n; (n = walk.nextNode());) {
      const re = /[^\s\-\/]+/g;
      let m;
      while ((m = re.exec(n.data))) {
        const r = document.createRange();
        r.setStart(n, m.index);
        r.setEnd(n, m.index + m[0].length);
        const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0).map((x) => Math.round(x.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  out.push({id: table.id || table.dataset.test, rows: rows.length, head, blocks, labelled, broken});
}
return out;
"""


def test_every_table_is_cards_at_390px(driver, admin, new_user):
    org, _ = make_org(admin)
    project, _ = make_project(admin, org, description="a project with a longish description for a narrow card",
                              rawPayloadMode="EVERYONE")
    for vis in ("PRIVATE", "PUBLIC"):
        r = admin.post("/api/v1/org/%s/secret" % org, files={
            "name": (None, unique("secret-with-a-long-name")), "type": (None, "data"), "visibility": (None, vis),
            "project": (None, project), "data": ("data", b"x")})
        assert r.status_code == 200, r.text
    team = make_team(admin, org, [(new_user(), "MAINTAINER"), (new_user(), "MEMBER")])
    r = admin.post("/api/v1/apikey", json={"username": "admin", "name": unique("a-key-with-a-name")})
    assert r.status_code == 200, r.text
    parent = start_process(admin, PARENT, parts={"org": org, "project": project},
                           files={"child/concord.yml": b'flows:\n  default:\n    - log: "child here"\n'})
    wait_process(admin, parent, ("SUSPENDED",))
    for _ in range(3):
        pid = start_process(admin, 'flows:\n  default:\n    - log: "x"\n', parts={"org": org, "project": project})
    wait_process(admin, pid)

    sign_in(driver, "admin", ADMIN_PASSWORD)
    driver.set_window_size(*PHONE_390)
    pages = [("#/processes", "processes", "process-list"), ("#/org/%s" % org, "org", "projects"),
             ("#/org/%s/secrets" % org, "secrets", "secrets"), ("#/org/%s/teams" % org, "teams", "teams"),
             ("#/org/%s/team/%s" % (org, team), "team", "members"), ("#/audit", "audit", "audit"),
             ("#/profile", "profile", "profile-teams"), ("#/apikeys", "apikeys", "apikeys"),
             ("#/process/%s/children" % parent, "process", "children"),
             ("#/process/%s/checkpoints" % parent, "process", "checkpoints")]
    for hash_path, ready, table in pages:
        if hash_path == pages[0][0]:
            visit(driver, hash_path, ready)
        else:
            navigate(driver, hash_path, ready)
        tables = {t["id"]: t for t in driver.execute_script(CARDS)}
        assert table in tables, (hash_path, list(tables))
        assert tables[table]["rows"] > 0, (hash_path, tables[table])
        for t in tables.values():
            assert t["head"] <= 1, (hash_path, t)  # the column heads are for screen readers only
            assert t["blocks"] and t["labelled"], (hash_path, t)
            assert not t["broken"], (hash_path, t)
        width, inner = driver.execute_script("return [document.documentElement.scrollWidth, innerWidth]")
        assert width <= inner, (hash_path, width, inner)
