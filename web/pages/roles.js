// #/roles — the roles (administrators only: the server answers 403 to anyone else): name,
// permissions, whether built in, and a form creating one (docs/api.md "Roles").
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {busy, errorBox, field, loadPage, path, table, uid} from '../lib/admin.js';
import {permissionBoxes} from '../lib/roles.js';

export async function render(main) {
  await loadPage(main, 'roles', 'Roles', async () => {
    main.append(h('h1', {}, 'Roles'),
      h('p', {class: 'hint'}, 'A role is a set of permissions, held by users directly or through the LDAP groups linked to it. Only administrators see and change roles.'));
    const roles = await api('GET', '/api/v1/role');
    const rows = roles.map((r) => [
      h('a', {href: '#/' + path('role', r.name), 'data-test': 'role-link'}, r.name),
      h('span', {'data-test': 'role-permissions-text'}, (r.permissions || []).join(', ') || '(none)'),
      r.builtin ? 'built in' : '',
    ]);
    main.append(table('roles', ['Name', 'Permissions', ''], rows, 'No role yet. Create one below.'), createForm());
  });
}

function createForm() {
  const name = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', maxlength: 128, 'data-test': 'role-name'});
  const perms = permissionBoxes('Permissions', []);
  const box = errorBox('role-create-error');
  const submit = h('button', {type: 'submit', 'data-test': 'role-create'}, 'Create role');
  const titleId = uid('create-role');
  const form = h('form', {'data-test': 'role-form', 'aria-labelledby': titleId},
    h('h2', {id: titleId}, 'New role'), field('Name', name), perms, box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const n = name.value.trim();
      const existing = await api('GET', '/api/v1/' + path('role', n)).catch(() => null);
      // the API's create also updates: a taken name would silently change that role
      if (existing) throw new Error(`A role named "${n}" exists already: open it to change it.`);
      await api('POST', '/api/v1/role', {json: {name: n, permissions: perms.value()}});
      flash(`Role "${n}" created.`);
      location.hash = '#/' + path('role', n);
    });
  });
  return h('div', {class: 'panel'}, form);
}
