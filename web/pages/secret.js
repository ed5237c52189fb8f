// #/org/{org}/secret/{name} — one secret: its metadata, its public key (key pairs
// encrypted by the server's key), its visibility and project, its team access rules, and
// a delete with confirmation.  The value itself is never asked for.
import {api, qs} from '../lib/api.js';
import {h, mount, when} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {busy, copyable, crumbs, deletePanel, details, errorBox, field, loadPage, path, select, uid} from '../lib/admin.js';

const LEVELS = ['READER', 'WRITER', 'OWNER'];

export async function render(main, params) {
  const {org, name} = params;
  const apiBase = '/api/v1/' + path('org', org, 'secret', name);
  await loadPage(main, 'secret', `${name} · secrets of ${org}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)],
      ['Secrets', '#/' + path('org', org, 'secrets')], [name]), h('h1', {}, name));
    const s = await api('GET', apiBase);
    const detailsHolder = h('div', {}, secretDetails(s));
    main.append(detailsHolder);
    if (s.type === 'KEY_PAIR' && s.encryptedBy !== 'PASSWORD') {
      const pk = await api('GET', apiBase + '/public');
      main.append(h('div', {class: 'panel'}, copyable('Public key', pk.publicKey, 'public-key')));
    }
    const [projects, teams, rules] = await Promise.all([
      api('GET', '/api/v1/' + path('org', org, 'project') + qs({limit: 1000})),
      api('GET', '/api/v1/' + path('org', org, 'team')).catch(() => []), // non-members of the org see no teams
      api('GET', apiBase + '/access'),
    ]);
    const saved = async () => mount(detailsHolder, secretDetails(await api('GET', apiBase)));
    main.append(settingsForm(apiBase, s, projects, saved), rulesForm(apiBase, teams, rules),
      deletePanel('secret-delete', 'Delete secret', `Delete the secret "${name}"? Processes using it will fail.`, async () => {
        await api('DELETE', apiBase);
        flash(`Secret "${name}" deleted.`);
        location.hash = '#/' + path('org', org, 'secrets');
      }));
  });
}

function secretDetails(s) {
  return details('secret-details', [
    ['Type', s.type],
    ['Visibility', s.visibility],
    ['Projects', projectNames(s)],
    ['Owner', s.owner && s.owner.username],
    ['Encrypted by', s.encryptedBy === 'PASSWORD' ? 'a store password' : "the server's key"],
    ['Created', when(s.createdAt)],
    ['Value changed', when(s.lastUpdatedAt)],
  ]);
}

// The projects a secret is restricted to, by name ('' when none).
function projectNames(s) {
  return (s.projects || []).map((p) => p.name).join(', ');
}

// Visibility and project restriction: POST /api/v1/org/{org}/secret/{name} (JSON).  A
// secret restricted to several projects keeps them unless another choice is made.
function settingsForm(apiBase, s, projects, saved) {
  const visibility = select({'data-test': 'secret-visibility'}, ['PUBLIC', 'PRIVATE'], s.visibility);
  const several = (s.projects || []).length > 1;
  const initial = several ? '*' : (s.projectName || '');
  const choices = [['', '(any project)'], ...projects.map((p) => p.name)];
  if (several) choices.unshift(['*', projectNames(s)]);
  const project = select({'data-test': 'secret-project'}, choices, initial);
  const box = errorBox('settings-result');
  const submit = h('button', {type: 'submit', 'data-test': 'settings-save'}, 'Save');
  const titleId = uid('settings');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'settings-form'},
    h('h2', {id: titleId}, 'Settings'),
    field('Visibility', visibility, 'Public: every member of the organization may read it. Private: its owner and teams with a rule.'),
    field('Restrict to project', project),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = {visibility: visibility.value};
      if (project.value !== initial) body.projectName = project.value;
      await api('POST', apiBase, {json: body});
      box.ok('Saved.');
      await saved();
    });
  });
  return h('div', {class: 'panel'}, form);
}

// The team rules as rows of team and level; Save replaces them all (…/access/bulk).
function rulesForm(apiBase, teams, rules) {
  const rows = h('div', {'data-test': 'rules-rows'});
  const none = h('p', {class: 'hint', 'data-test': 'rules-none'}, 'No team rules yet.');
  const sayNone = () => (none.hidden = rows.children.length > 0);
  const teamOptions = [['', '(choose a team)'], ...teams.map((t) => t.name)];
  const addRow = (team, level) => {
    const n = uid('rule');
    const teamSel = select({id: n + '-team', 'data-test': 'rule-team'}, teamOptions, team || '');
    const levelSel = select({id: n + '-level', 'data-test': 'rule-level'}, LEVELS, level || 'READER');
    const remove = h('button', {type: 'button', class: 'secondary', 'data-test': 'rule-remove', 'aria-label': 'Remove this rule'}, 'Remove');
    const row = h('div', {class: 'row rule-row', 'data-test': 'rule-row'}, field('Team', teamSel), field('Level', levelSel), remove);
    remove.addEventListener('click', () => {
      row.remove();
      sayNone();
      add.focus();
    });
    rows.append(row);
    sayNone();
    return teamSel;
  };
  const add = h('button', {type: 'button', class: 'secondary', 'data-test': 'rule-add'}, 'Add rule');
  add.addEventListener('click', () => addRow().focus());
  for (const r of rules) addRow(r.teamName, r.level);
  sayNone();

  const box = errorBox('rules-result');
  const submit = h('button', {type: 'submit', 'data-test': 'rules-save'}, 'Save rules');
  const titleId = uid('rules');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'rules-form'},
    h('h2', {id: titleId}, 'Access rules'),
    h('p', {class: 'hint'}, 'Reader: see it and use it. Writer: also change it. Owner: also delete it and change these rules.'),
    teams.length ? null : h('p', {class: 'hint'}, 'This organization has no team.'),
    none, rows, h('p', {}, add), box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = [];
      for (const row of rows.querySelectorAll('[data-test="rule-row"]')) {
        const teamName = row.querySelector('[data-test="rule-team"]').value;
        if (!teamName) throw new Error('Choose a team for every rule (or remove the rule).');
        body.push({teamName, level: row.querySelector('[data-test="rule-level"]').value});
      }
      await api('POST', apiBase + '/access/bulk', {json: body});
      box.ok(body.length ? `Saved ${body.length} rule${body.length > 1 ? 's' : ''}.` : 'Saved: no rules.');
    });
  });
  return h('div', {class: 'panel'}, form);
}
