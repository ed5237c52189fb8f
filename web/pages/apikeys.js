// #/apikeys — the user's API keys: list (never with values), create (the value shown
// once, with a copy button), delete with confirmation.
import {api} from '../lib/api.js';
import {h, mount, when} from '../lib/dom.js';
import {busy, confirm, copyable, errorBox, field, loadPage, table, uid} from '../lib/admin.js';
import {session} from '../lib/session.js';

export async function render(main) {
  await loadPage(main, 'apikeys', 'API keys', async () => {
    main.append(h('h1', {}, 'API keys'),
      h('p', {class: 'hint'}, 'A key authenticates scripts and tools as you: send it in the Authorization header.'));
    const result = h('div', {'data-test': 'apikey-result', 'aria-live': 'polite'});
    const listHolder = h('div', {'data-test': 'apikeys-holder'});
    const reload = () => showList(listHolder, result);
    main.append(createForm(result, reload), result, h('h2', {}, 'Your keys'), listHolder);
    await reload();
  });
}

async function showList(holder, result) {
  const keys = await api('GET', '/api/v1/apikey');
  const rows = keys.map((k) => {
    const actions = h('div', {});
    const del = h('button', {type: 'button', class: 'danger', 'data-test': 'apikey-delete', 'aria-label': `Delete the key ${k.name}`}, 'Delete');
    del.addEventListener('click', () => confirm(actions, `Delete the key "${k.name}"? Clients using it are refused from now on.`, 'Delete', async () => {
      await api('DELETE', '/api/v1/apikey/' + encodeURIComponent(k.id));
      mount(result, h('p', {class: 'notice ok', role: 'status', 'data-test': 'apikey-deleted'}, `Key "${k.name}" deleted.`));
      await showList(holder, result);
    }));
    mount(actions, del);
    return [h('span', {'data-test': 'apikey-name'}, k.name), k.expiredAt ? when(k.expiredAt) : 'never', actions];
  });
  mount(holder, table('apikeys', ['Name', 'Expires', ''], rows, 'You have no API key. Create one above to call the API from a script or a tool.'));
}

function createForm(result, reload) {
  const name = h('input', {type: 'text', autocomplete: 'off', 'data-test': 'apikey-name-input'});
  const expires = h('input', {type: 'date', 'data-test': 'apikey-expires'});
  const box = errorBox('apikey-error');
  const submit = h('button', {type: 'submit', 'data-test': 'apikey-create'}, 'Create key');
  const titleId = uid('new-key');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'apikey-form'},
    h('h2', {id: titleId}, 'New key'),
    h('div', {class: 'row'},
      field('Name (optional)', name, 'Empty: key#1, key#2, …'),
      field('Expires on (optional)', expires, 'At midnight UTC of that day.')),
    box.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    mount(result);
    busy(submit, box, async () => {
      const body = {username: session.user && session.user.username};
      if (session.user && session.user.userDomain) body.userDomain = session.user.userDomain;
      if (name.value.trim()) body.name = name.value.trim();
      if (expires.value) body.expiredAt = expires.value + 'T00:00:00Z';
      const res = await api('POST', '/api/v1/apikey', {json: body});
      form.reset();
      mount(result, h('div', {class: 'notice ok', role: 'status', 'data-test': 'apikey-created'},
        h('p', {}, `Key "${res.name || body.name || ''}" created. `,
          h('strong', {}, 'Copy it now: it is shown only this once and cannot be shown again.')),
        copyable('API key', res.key, 'apikey-value')));
      result.querySelector('textarea').focus();
      await reload();
    });
  });
  return h('div', {class: 'panel'}, form);
}
