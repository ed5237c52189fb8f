// #/policies — the policies (administrators and global readers; the server refuses anyone
// else): name, parent and where each is linked, and for administrators a form creating
// one with its rules document, validated by the server (docs/api.md "Policies").
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {session} from '../lib/session.js';
import {busy, errorBox, field, loadPage, path, table, uid} from '../lib/admin.js';
import {isAdmin} from '../lib/roles.js';
import {parentSelect, placeText, rulesBox} from '../lib/policy_parts.js';

export async function render(main) {
  await loadPage(main, 'policies', 'Policies', async () => {
    main.append(h('h1', {}, 'Policies'),
      h('p', {class: 'hint'}, 'Rules that govern processes and what users may create, linked to the server, an organization, a project or a user. The most specific link applies.'));
    const policies = await api('GET', '/api/v2/policy');
    const names = Object.fromEntries(policies.map((p) => [p.id, p.name]));
    const rows = policies.map((p) => [
      h('a', {href: '#/' + path('policy', p.name), 'data-test': 'policy-link'}, p.name),
      names[p.parentId] || '',
      h('span', {'data-test': 'policy-links-text'}, (p.links || []).map(placeText).join('; ') || 'not linked'),
    ]);
    main.append(table('policies', ['Name', 'Parent', 'Linked to'], rows,
      isAdmin(session.user) ? 'No policy yet. Create one below.' : 'No policy yet.'));
    if (isAdmin(session.user)) main.append(createForm(policies));
    else main.append(h('p', {class: 'hint', 'data-test': 'policy-read-only'}, 'Only administrators create and change policies.'));
  });
}

function createForm(policies) {
  const name = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', maxlength: 128, 'data-test': 'policy-name'});
  const parent = parentSelect(policies, null, '');
  const rules = rulesBox({});
  const box = errorBox('policy-create-error');
  const submit = h('button', {type: 'submit', 'data-test': 'policy-create'}, 'Create policy');
  const titleId = uid('create-policy');
  const form = h('form', {'data-test': 'policy-form', 'aria-labelledby': titleId},
    h('h2', {id: titleId}, 'New policy'), field('Name', name), parent, rules, box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const n = name.value.trim();
      // the API's create also updates: a taken name would silently replace that policy
      if (policies.some((p) => p.name === n)) throw new Error(`A policy named "${n}" exists already: open it to change it.`);
      const body = {name: n, rules: rules.rules()};
      const parentId = parent.querySelector('select').value;
      if (parentId) body.parentId = parentId;
      await api('POST', '/api/v2/policy', {json: body});
      flash(`Policy "${n}" created.`);
      location.hash = '#/' + path('policy', n);
    });
  });
  return h('div', {class: 'panel'}, form);
}
