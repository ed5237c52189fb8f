// #/login?from=<where to go next>: username and password, or an API key.  whoami with
// X-Concord-EnableSession: true turns the credentials into the session cookie; the
// credentials themselves are never stored by the page.
import {api, ApiError} from '../lib/api.js';
import {h, mount, notice, ready} from '../lib/dom.js';
import {session} from '../lib/session.js';

// Basic credentials as UTF-8 (btoa alone takes Latin-1 only).
function basic(user, pass) {
  const bytes = new TextEncoder().encode(user + ':' + pass);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return 'Basic ' + btoa(bin);
}

// Where to go after logging in: a start link (/api/..., a full navigation so that the
// server starts the process), a custom form's page (/forms/...) or a console page;
// anything else is ignored.
export function nextPlace(from) {
  if (typeof from === 'string' && /^\/(api|forms)\/[^/]/.test(from)) return {assign: from};
  if (typeof from === 'string' && from.startsWith('#/') && !from.startsWith('#/login')) return {hash: from};
  return {hash: '#/processes'};
}

export async function render(main, params, query) {
  let mode = 'password';
  const status = h('div', {id: 'login-status', 'aria-live': 'polite'});
  const username = h('input', {id: 'username', name: 'username', autocomplete: 'username', required: true});
  const password = h('input', {id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true});
  const apikey = h('input', {id: 'apikey', name: 'apikey', type: 'password', autocomplete: 'off', spellcheck: 'false'});
  const pwFields = h('div', {id: 'login-password-fields', role: 'tabpanel', 'aria-labelledby': 'login-mode-password'},
    h('label', {for: 'username'}, 'Username'), username,
    h('label', {for: 'password'}, 'Password'), password);
  const keyFields = h('div', {id: 'login-key-fields', role: 'tabpanel', 'aria-labelledby': 'login-mode-apikey', hidden: true},
    h('label', {for: 'apikey'}, 'API key'), apikey,
    h('p', {class: 'hint'}, 'A key made with POST /api/v1/apikey or on the API keys page.'));
  const tabPw = h('button', {type: 'button', role: 'tab', id: 'login-mode-password', 'aria-selected': 'true',
    'aria-controls': 'login-password-fields', onclick: () => setMode('password')}, 'Password');
  const tabKey = h('button', {type: 'button', role: 'tab', id: 'login-mode-apikey', 'aria-selected': 'false',
    'aria-controls': 'login-key-fields', tabindex: '-1', onclick: () => setMode('apikey')}, 'API key');
  const submit = h('button', {type: 'submit', id: 'login'}, 'Log in');

  function setMode(m) {
    mode = m;
    const pw = m === 'password';
    pwFields.hidden = !pw;
    keyFields.hidden = pw;
    username.required = pw;
    password.required = pw;
    apikey.required = !pw;
    tabPw.setAttribute('aria-selected', String(pw));
    tabKey.setAttribute('aria-selected', String(!pw));
    tabPw.tabIndex = pw ? 0 : -1;
    tabKey.tabIndex = pw ? -1 : 0;
    mount(status);
    (pw ? username : apikey).focus();
  }

  // Arrow keys move between the two tabs (the ARIA tabs pattern).
  function onTabKey(ev) {
    if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight') return;
    ev.preventDefault();
    setMode(mode === 'password' ? 'apikey' : 'password');
    (mode === 'password' ? tabPw : tabKey).focus();
  }

  async function onSubmit(ev) {
    ev.preventDefault();
    mount(status);
    let auth;
    if (mode === 'password') {
      if (!username.value || !password.value) {
        mount(status, notice('error', 'Enter a username and a password.'));
        return;
      }
      auth = basic(username.value, password.value);
    } else {
      if (!apikey.value.trim()) {
        mount(status, notice('error', 'Enter an API key.'));
        return;
      }
      auth = apikey.value.trim();
    }
    submit.disabled = true;
    try {
      const who = await api('GET', '/api/service/console/whoami', {
        noLoginRedirect: true,
        headers: {'Authorization': auth, 'X-Concord-EnableSession': 'true'},
      });
      password.value = '';
      apikey.value = '';
      session.set(who);
      const next = nextPlace(query.from);
      if (next.assign) location.assign(next.assign);
      else location.hash = next.hash;
    } catch (e) {
      submit.disabled = false;
      const msg = e instanceof ApiError && e.status === 401
        ? (mode === 'password' ? 'Wrong username or password.' : 'That API key is not valid.')
        : `Cannot log in: ${e.message}`;
      mount(status, h('p', {class: 'notice error', role: 'alert', id: 'login-error'}, msg));
      (mode === 'password' ? password : apikey).select();
    }
  }

  // With an OpenID provider configured, a link to its login (a full navigation: the
  // server redirects to the provider, which comes back to the server's callback).
  const sso = h('div', {id: 'login-sso', hidden: true},
    h('a', {class: 'btn secondary', id: 'login-sso-button', href: '/api/service/oidc/auth'}, 'Log in with SSO'));
  api('GET', '/api/service/oidc/info', {noLoginRedirect: true})
    .then((info) => { if (info && info.enabled) sso.hidden = false; })
    .catch(() => {});

  mount(main,
    h('section', {class: 'login panel'},
      h('h1', {}, 'Log in to Accord'),
      query.from && query.from.startsWith('/api/')
        ? h('p', {class: 'hint', id: 'login-start-hint'}, 'Log in to start the process.') : null,
      h('div', {role: 'tablist', class: 'tabs', 'aria-label': 'Log in with', onkeydown: onTabKey}, tabPw, tabKey),
      h('form', {id: 'login-form', onsubmit: onSubmit, novalidate: true},
        pwFields, keyFields, status, h('div', {class: 'actions'}, submit)),
      sso));
  ready(main, 'login', 'Log in');
  username.focus();
}
