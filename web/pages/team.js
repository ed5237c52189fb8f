// #/org/{org}/team/{team} — one team: its members and their roles (change a role, remove a
// member, add members), and a delete with confirmation.  Only what the user may do is
// offered, from the team's `yourRole` (the server's rule, auth/rbac.h): a maintainer
// manages members but not owners, an owner everything, anyone else reads.  What the server
// still refuses is shown next to the form.
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
    const may = rights(t.yourRole);
    main.append(details('team-details', [['Description', t.description], ['Your role', ROLE_NAMES[t.yourRole] || t.yourRole]]));
    const members = h('div', {'data-test': 'members-holder'});
    const box = errorBox('members-result');
    const reload = async () => mount(members, membersTable(apiBase, await api('GET', apiBase + '/users'), box, reload, may));
    await reload();
    main.append(h('h2', {}, 'Members'), members, box.el);
    if (!may.manage) {
      main.append(h('p', {class: 'hint', 'data-test': 'team-read-only'},
        `Changing the members needs the maintainer or owner role in this team (or owning the organization); you are ${
          (ROLE_NAMES[t.yourRole] || 'not in it').toLowerCase()}.`));
      return;
    }
    main.append(addForm(apiBase, reload, may));
    if (may.own)
      main.append(deletePanel('team-delete', 'Delete team', `Delete the team "${team}"? Its members lose the access it gave them.`, async () => {
        await api('DELETE', apiBase);
        flash(`Team "${team}" deleted.`);
        location.hash = '#/' + path('org', org, 'teams');
      }));
  });
}

const ROLE_NAMES = {OWNER: 'Owner', MAINTAINER: 'Maintainer', MEMBER: 'Member', NONE: 'Not in this team'};

// What yourRole allows: maintainers manage members but not owners (nor make one), owners
// (and organization owners, admins) everything.
function rights(role) {
  const own = role === 'OWNER';
  return {own, manage: own || role === 'MAINTAINER', roles: own ? ROLES : ROLES.filter(([r]) => r !== 'OWNER')};
}

// One row per member: for those who may change it, the role as a drop-down saved on change
// and a remove button; for the others, the role as text.
function membersTable(apiBase, users, box, reload, may) {
  const rows = users.map((u) => {
    const name = h('span', {'data-test': 'member-name'}, u.username);
    if (!may.manage || (u.role === 'OWNER' && !may.own))
      return [name, u.displayName || '', h('span', {'data-test': 'member-role-text'}, ROLE_NAMES[u.role] || u.role), ''];
    const role = select({'data-test': 'member-role', 'aria-label': `Role of ${u.username}`}, may.roles, u.role);
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
    return [name, u.displayName || '', role, remove];
  });
  return table('members', ['User', 'Name', 'Role', ''], rows, 'No members yet. Add users below.');
}

// Adds users (comma- or space-separated names) with one role: all or nothing.
function addForm(apiBase, reload, may) {
  const names = h('input', {type: 'text', required: true, autocomplete: 'off', spellcheck: 'false', 'data-test': 'member-add-names'});
  const role = select({'data-test': 'member-add-role'}, may.roles, 'MEMBER');
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
