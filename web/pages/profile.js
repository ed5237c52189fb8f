// #/profile — the user's own page: who the server says they are (name, realm, global
// roles), their organizations, the teams they are in with their role, their API keys
// (managed on #/apikeys) and their console sessions (each can be ended).
import {api, enc} from '../lib/api.js';
import {h, mount, when} from '../lib/dom.js';
import {busy, crumbs, details, errorBox, loadPage, path, table} from '../lib/admin.js';

const REALMS = {local: 'a password', apikey: 'an API key', session: 'a console session', sessionkey: "a process's session token"};

export async function render(main) {
  await loadPage(main, 'profile', 'Your profile', async () => {
    const me = await api('GET', '/api/service/console/whoami');
    main.append(crumbs(['Your profile']), h('h1', {}, me.displayName || me.username));
    main.append(details('profile-details', [
      ['User name', me.username],
      ['Domain', me.userDomain],
      ['Display name', me.displayName],
      ['Signed in with', REALMS[me.realm] || me.realm],
      ['Global roles', (me.roles || []).join(', ') || 'none'],
    ]));
    main.append(h('h2', {}, 'Teams'), await teamsTable(me));
    main.append(h('h2', {}, 'API keys'), await keysTable());
    main.append(h('h2', {}, 'Sessions'), await sessionsPanel());
  });
}

// The user's console sessions (GET /api/service/console/session): when each began and was
// last used, this browser's marked; **End** logs that browser out (this one: to the login).
async function sessionsPanel() {
  const holder = h('div', {});
  const box = errorBox('session-result');
  async function draw() {
    const list = await api('GET', '/api/service/console/session');
    const rows = list.map((s) => {
      const end = h('button', {type: 'button', class: 'secondary small', 'data-test': 'session-end', 'data-session': s.id,
        'aria-label': s.current ? 'End this session (log out here)' : `End the session last used ${s.lastSeenAt}`},
      s.current ? 'End (log out here)' : 'End');
      end.addEventListener('click', () => busy(end, box, async () => {
        await api('DELETE', '/api/service/console/session/' + enc(s.id));
        if (s.current) {
          location.hash = '#/login?from=' + encodeURIComponent('#/profile');
          return;
        }
        await draw();
        box.ok('Session ended: that browser has to log in again.');
      }));
      return [when(s.createdAt), when(s.lastSeenAt),
        s.current ? h('strong', {'data-test': 'session-current'}, 'this browser') : '', end];
    });
    mount(holder, table('sessions', ['Signed in', 'Last used', '', ''], rows,
      'No console session: you are signed in with an API key or a password for this request only.'));
  }
  await draw();
  return h('div', {}, h('p', {class: 'hint'}, 'Where you are logged in to the console. A session ends when you log out, ' +
    'when it is unused for a while, or when you end it here.'), holder, box.el);
}

// The teams of every org the user is in where the user is a member (GET …/team/{t}/users
// is the only place memberships are listed).
async function teamsTable(me) {
  const rows = [];
  for (const org of me.orgs || []) {
    const teams = await api('GET', '/api/v1/' + path('org', org.name, 'team')).catch(() => []);
    const members = await Promise.all(teams.map((t) =>
      api('GET', '/api/v1/' + path('org', org.name, 'team', t.name, 'users')).catch(() => [])));
    teams.forEach((t, i) => {
      const mine = members[i].find((u) => u.username === me.username && (u.userDomain || '') === (me.userDomain || ''));
      if (mine) rows.push([
        h('a', {href: '#/' + path('org', org.name)}, org.name),
        h('a', {href: '#/' + path('org', org.name, 'team', t.name), 'data-test': 'profile-team'}, t.name),
        h('span', {'data-test': 'profile-team-role'}, mine.role)]);
    });
  }
  return table('profile-teams', ['Organization', 'Team', 'Role'], rows,
    'You are in no team: an owner or maintainer of a team adds you to it.');
}

async function keysTable() {
  const keys = await api('GET', '/api/v1/apikey');
  const rows = keys.map((k) => [h('span', {'data-test': 'profile-key'}, k.name), k.expiredAt ? when(k.expiredAt) : 'never']);
  return h('div', {},
    table('profile-keys', ['Name', 'Expires'], rows, 'You have no API key.'),
    h('p', {}, h('a', {href: '#/apikeys', class: 'btn secondary', 'data-test': 'profile-apikeys'}, 'Manage API keys')));
}

