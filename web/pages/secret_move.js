// The "Rename, owner, move" panel of a secret page: POST /api/v1/org/{org}/secret/{name}
// with only the fields that changed.  A secret protected by a store password needs it for
// a rename or a move (its encryption is bound to its name and organization).
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {go} from '../lib/router.js';
import {busy, errorBox, field, path, select, uid} from '../lib/admin.js';
import {session} from '../lib/session.js';

export function movePanel(org, s) {
  const name = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', value: s.name, 'data-test': 'secret-new-name'});
  const owner = h('input', {type: 'text', autocomplete: 'off', spellcheck: 'false', value: (s.owner && s.owner.username) || '', 'data-test': 'secret-owner'});
  const orgs = ((session.user && session.user.orgs) || []).map((o) => o.name);
  if (!orgs.includes(org)) orgs.unshift(org);
  const target = select({'data-test': 'secret-org'}, orgs, org);
  const password = h('input', {type: 'password', autocomplete: 'off', 'data-test': 'secret-move-password'});
  const box = errorBox('secret-move-result');
  const submit = h('button', {type: 'submit', 'data-test': 'secret-move-save'}, 'Save');
  const titleId = uid('move');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'secret-move-form'},
    h('h2', {id: titleId}, 'Rename, owner, organization'),
    field('Name', name),
    field('Owner', owner, 'A user name. Changing the owner needs the OWNER level on the secret.'),
    field('Organization', target, 'Moving to another organization removes the project restriction and the team rules.'),
    s.encryptedBy === 'PASSWORD' ? field('Store password', password, 'Needed to rename or move a secret protected by a password.') : null,
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const body = {};
      const newName = name.value.trim();
      if (newName !== s.name) body.name = newName;
      if (owner.value.trim() && owner.value.trim() !== ((s.owner && s.owner.username) || '')) body.owner = {username: owner.value.trim()};
      if (target.value !== org) body.orgName = target.value;
      if (!Object.keys(body).length) throw new Error('Nothing changed: edit the name, the owner or the organization first.');
      if (password.value) body.storePassword = password.value;
      await api('POST', '/api/v1/' + path('org', org, 'secret', s.name), {json: body});
      password.value = '';
      const where = body.orgName || org;
      const now = body.name || s.name;
      flash(`Secret saved${body.name ? ` as "${now}"` : ''}${body.orgName ? ` in ${where}` : ''}.`);
      go('#/' + path('org', where, 'secret', now)); // the same address when only the owner changed
    });
  });
  return h('div', {class: 'panel'}, form);
}
