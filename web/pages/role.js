// #/role/{name} — one role (administrators): its permissions (saved at once with Save), the
// LDAP groups whose members hold it (Save groups replaces the list) and a delete with
// confirmation, not offered for the built-in roles.  The server's refusals are shown as it
// said them.
import {api} from '../lib/api.js';
import {h, mount} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {busy, crumbs, deletePanel, details, errorBox, field, loadPage, path, table} from '../lib/admin.js';
import {permissionBoxes} from '../lib/roles.js';

export async function render(main, params) {
  const {name} = params;
  const apiBase = '/api/v1/' + path('role', name);
  await loadPage(main, 'role', `${name} · roles`, async () => {
    main.append(crumbs(['Roles', '#/roles'], [name]), h('h1', {}, name));
    const [role, groups] = await Promise.all([api('GET', apiBase), api('GET', apiBase + '/ldapGroups')]);
    main.append(details('role-details', [['Built in', role.builtin ? 'yes: it cannot be renamed or deleted' : 'no']]),
      permissionsForm(role), groupsForm(apiBase, groups));
    if (!role.builtin)
      main.append(deletePanel('role-delete', 'Delete role', `Delete the role "${name}"? Its users and linked groups lose it.`, async () => {
        await api('DELETE', apiBase);
        flash(`Role "${name}" deleted.`);
        location.hash = '#/roles';
      }));
  });
}

function permissionsForm(role) {
  const perms = permissionBoxes('Permissions', role.permissions);
  const box = errorBox('role-save-result');
  const submit = h('button', {type: 'submit', 'data-test': 'role-save'}, 'Save permissions');
  const form = h('form', {class: 'panel', 'data-test': 'role-permissions-form'}, perms, box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      await api('POST', '/api/v1/role', {json: {id: role.id, name: role.name, permissions: perms.value()}});
      box.ok('Permissions saved.');
    });
  });
  return form;
}

// The linked groups as a list and a text box of DNs, one a line; saving replaces them all.
function groupsForm(apiBase, groups) {
  const list = h('div', {});
  const draw = (gs) => mount(list, table('role-groups', ['LDAP group'], gs.map((g) => [h('code', {}, g)]),
    'No LDAP group gives this role.'));
  draw(groups);
  const text = h('textarea', {rows: 4, class: 'mono', spellcheck: 'false', 'data-test': 'role-groups-text'});
  text.value = groups.join('\n');
  const box = errorBox('role-groups-result');
  const submit = h('button', {type: 'submit', 'data-test': 'role-groups-save'}, 'Save groups');
  const form = h('form', {'data-test': 'role-groups-form'},
    field('Groups (distinguished names, one a line)', text,
      'Every user of the LDAP realm who is in one of these groups (nested groups count) holds the role. An empty box unlinks them all.'),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const dns = text.value.split('\n').map((s) => s.trim()).filter(Boolean);
      await api('PUT', apiBase + '/ldapGroups?replace=true', {json: dns});
      draw(await api('GET', apiBase + '/ldapGroups'));
      box.ok(dns.length ? `${dns.length} group(s) linked.` : 'No group gives this role now.');
    });
  });
  return h('div', {class: 'panel'}, h('h2', {}, 'LDAP groups'), list, form);
}
