// #/org/{org}/secret/{name} — one secret: its metadata, its public key (key pairs
// encrypted by the server's key), its visibility and project, its team access rules, its
// name, owner and organization (secret_move.js), and a delete with confirmation.  The value
// itself is never asked for.
import {api, qs} from '../lib/api.js';
import {h, mount, when} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {allows, notAllowed, rulesForm, rulesList} from '../lib/access_rules.js';
import {movePanel} from './secret_move.js';
import {busy, copyable, crumbs, deletePanel, details, errorBox, field, loadPage, path, select, uid} from '../lib/admin.js';

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
    // only what the server says the user may do (yourAccess) is offered
    const have = s.yourAccess;
    if (!allows(have, 'WRITER'))
      main.append(notAllowed('secret-not-allowed', 'Changing this secret', 'WRITER', have));
    else main.append(settingsForm(apiBase, s, projects, saved), movePanel(org, s));
    if (!allows(have, 'OWNER')) {
      main.append(h('div', {class: 'panel'}, h('h2', {}, 'Access rules'), rulesList(rules),
        notAllowed('rules-not-allowed', 'Changing the access rules or deleting the secret', 'OWNER', have)));
      return;
    }
    main.append(rulesForm(apiBase, teams, rules),
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
