// The console's entry: the route table, the session check, the header and the footer.
import {api} from './lib/api.js';
import {takeFlash} from './lib/flash.js';
import {h, mount, notice, redrawTimes} from './lib/dom.js';
import {route, render, parse} from './lib/router.js';
import {session} from './lib/session.js';
import {onZone, zonePicker} from './lib/zone.js';

// Pages, loaded on first use; the first pattern that matches wins.  {public: true} pages
// need no session.
route('/login', () => import('./pages/login.js'), {public: true});
route('/processes', () => import('./pages/processes.js'));
route('/process/{id}', () => import('./pages/process.js'));
route('/process/{id}/wizard', () => import('./pages/wizard.js'));
route('/process/{id}/{tab}', () => import('./pages/process.js'));
route('/process/{id}/form/{form}', () => import('./pages/form.js'));
route('/orgs', () => import('./pages/orgs.js'));
route('/org/{org}', () => import('./pages/org.js'));
route('/org/{org}/new-project', () => import('./pages/project_new.js'));
route('/org/{org}/teams', () => import('./pages/teams.js'));
route('/org/{org}/team/{team}', () => import('./pages/team.js'));
route('/audit', () => import('./pages/audit.js'));
route('/profile', () => import('./pages/profile.js'));
route('/org/{org}/project/{project}', () => import('./pages/project.js'));
route('/org/{org}/project/{project}/repo/{repo}', () => import('./pages/repo.js'));
route('/org/{org}/secrets', () => import('./pages/secrets.js'));
route('/org/{org}/secret/{name}', () => import('./pages/secret.js'));
route('/org/{org}/jsonstores', () => import('./pages/jsonstores.js'));
route('/org/{org}/jsonstore/{store}', () => import('./pages/jsonstore.js'));
route('/org/{org}/jsonstore/{store}/item', () => import('./pages/jsonstore_item.js'));
route('/org/{org}/jsonstore/{store}/query/{query}', () => import('./pages/jsonstore_query.js'));
route('/apikeys', () => import('./pages/apikeys.js'));
route('/roles', () => import('./pages/roles.js'));
route('/role/{name}', () => import('./pages/role.js'));
route('/policies', () => import('./pages/policies.js'));
route('/policy/{name}', () => import('./pages/policy.js'));

// Asks the server who we are (the cookie is HttpOnly); false when not logged in.
export async function refreshSession() {
  try {
    session.set(await api('GET', '/api/service/console/whoami', {noLoginRedirect: true}));
  } catch (e) {
    session.clear();
  }
  return !!session.user;
}

// The header's user box follows the session (login, logout, expiry).
// The navigation is for users who are logged in: without a session the header shows the
// name alone.
function drawWho() {
  const el = document.getElementById('who');
  document.getElementById('nav').hidden = !session.user;
  // the audit log is for admins: offered only when the server says the user is one
  const roles = (session.user && session.user.roles) || [];
  document.getElementById('nav-audit').hidden = !roles.includes('concordAdmin');
  // roles are for admins; policies are read by global readers too (the server decides)
  document.getElementById('nav-roles').hidden = !roles.includes('concordAdmin');
  document.getElementById('nav-policies').hidden = !roles.includes('concordAdmin') && !roles.includes('concordSystemReader');
  if (!session.user) {
    mount(el);
    return;
  }
  mount(el, zonePicker(h, 'zone'),
    h('a', {href: '#/profile', class: 'username', id: 'current-user', title: 'Your profile'}, session.user.displayName || session.user.username),
    h('button', {type: 'button', class: 'link', id: 'logout', onclick: logout}, 'Log out'));
}

async function logout() {
  try {
    await api('POST', '/api/service/console/logout', {noLoginRedirect: true});
  } catch (e) {
    console.error(e);
  }
  session.clear();
  location.hash = '#/login';
}

// Before a page that needs a session: ask whoami once; without a session, go to login
// with a return address.
async function guard(opts, path, query) {
  if (opts.public || session.user) return true;
  if (await refreshSession()) return true;
  const back = location.hash || '#/processes';
  location.hash = '#/login?from=' + encodeURIComponent(back);
  return false;
}

function markNav() {
  const {path} = parse(location.hash);
  for (const a of document.querySelectorAll('#nav a')) {
    const target = a.getAttribute('href').slice(1);
    // a list's items live under its singular: /orgs → /org/x, /roles → /role/x, /policies → /policy/x
    const item = {'/orgs': '/org/', '/roles': '/role/', '/policies': '/policy/'}[target];
    if (path === target || path.startsWith(target + '/') || (item && path.startsWith(item)))
      a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

async function show() {
  markNav();
  await render(guard);
  // what the last page's action did, on the page it led to
  const done = takeFlash();
  if (done) document.getElementById('main').prepend(Object.assign(notice('ok', done), {id: 'flash'}));
  // keyboard users start in the page, unless the page put the focus somewhere itself
  const main = document.getElementById('main');
  if (!main.contains(document.activeElement)) main.focus({preventScroll: true});
}

session.onChange(drawWho);
// the zone picked in the header (or the log's) applies to every date on the page at once
onZone(() => redrawTimes(document.getElementById('main')));
window.addEventListener('hashchange', show);
api('GET', '/api/v1/server/version', {noLoginRedirect: true})
  .then((v) => (document.getElementById('version').textContent = v.version))
  .catch(() => {});
if (!location.hash) history.replaceState(null, '', '#/processes');
show();
