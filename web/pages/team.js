// #/org/{org}/team/{team} — one team: its members and their roles (change a role, remove a
// member, add members), and a delete with confirmation.  What the user may not do, the
// server refuses with its reason (403), shown next to the form.
import {api} from '../lib/api.js';
import {h, mount} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {busy, crumbs, deletePanel, details, errorBox, field, loadPage, path, select, table} from '../lib/admin.js';

const ROLES = [
  ['MEMBER', 'Member'],
  ['MAINTAINER', 'Maintainer: manages the members'],
  ['OWNER', 'Owner: owns the organization'],
];

export async function render(main, params) {
  const {org, team} = params;
  const apiBase = '/api/v1/' + path('org', org, 'team', team);
  await loadPage(main, 'team', `${team} · teams of ${org}`, async () => {
    main.append(crumbs(['Organizations', '#/orgs'], [org, '#/' + path('org', org)],
      ['Teams', '#/' + path('org', org, 'teams')], [team]), h('h1', {}, team));
    const t = await api('GET', apiBase);
    main.append(details('team-details', [['Description', t.description]]));
    const members = h('div', {'data-test': 'members-holder'});
    const box = errorBox('members-result');
    const reload = async () => mount(members, membersTable(apiBase, await api('GET', apiBase + '/users'), box, reload));
    await reload();
    main.append(h('h2', {}, 'Members'), members, box.el, addForm(apiBase, reload),
      deletePanel('team-delete', 'Delete team', `Delete the team "${team}"? Its members lose the access it gave them.`, async () => {
        await api('DELETE', apiBase);
        flash(`Team "${team}" deleted.`);
        location.hash = '#/' + path('org', org, 'teams');
      }));
  });
}

// One row per member: the role as a drop-down saved on change, and a remove button.
function membersTable(apiBase, users, box, reload) {
  const rows = users.map((u) => {
    const role = select({'data-test': 'member-role', 'aria-label': `Role of ${u.username}`}, ROLES, u.role);
    role.addEventListener('change', () => busy(role, box, async () => {
      const entry = {username: u.username, role: role.value};
      if (u.userDomain) entry.userDomain = u.userDomain;
      try {
        await api('PUT', apiBase + '/users', {json: [entry]});
      } catch (e) {
        role.value = u.role;
        throw e;
      }
      u.role = role.value;
      box.ok(`${u.username} is now ${role.value.toLowerCase()}.`);
    }));
    const remove = h('button', {type: 'button', class: 'secondary', 'data-test': 'member-remove', 'aria-label': `Remove ${u.username}`}, 'Remove');
    remove.addEventListener('click', () => busy(remove, box, async () => {
      await api('DELETE', apiBase + '/users', {json: [u.username]});
      await reload();
      box.ok(`${u.username} removed from the team.`);
    }));
    return [h('span', {'data-test': 'member-name'}, u.username), u.displayName || '', role, remove];
  });
  return table('members', ['User', 'Name', 'Role', ''], rows, 'No members yet. Add users below.');
}

// Adds users (comma- or space-separated names) with one role: all or nothing.
function addForm(apiBase, reload) {
  const names = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'data-test': 'member-add-names'});
  const role = select({'data-test': 'member-add-role'}, ROLES, 'MEMBER');
  const box = errorBox('member-add-error');
  const submit = h('button', {type: 'submit', 'data-test': 'member-add'}, 'Add');
  const form = h('form', {'data-test': 'member-add-form'},
    field('Users', names, 'User names, separated by commas or spaces. An unknown name adds nobody.'),
    field('Role', role), box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, box, async () => {
      const list = names.value.split(/[\s,]+/).filter(Boolean);
      if (!list.length) throw new Error('Name at least one user.');
      await api('PUT', apiBase + '/users', {json: list.map((username) => ({username, role: role.value}))});
      names.value = '';
      await reload();
      box.ok(`Added ${list.join(', ')}.`);
    });
  });
  return h('div', {class: 'panel'}, h('h2', {}, 'Add members'), form);
}
