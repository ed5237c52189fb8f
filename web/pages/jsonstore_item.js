// #/org/{org}/jsonstore/{store}/item?path=… — one item of a JSON store (its path may hold
// slashes, so it travels in the query string): its JSON, laid out to read; writers edit and
// save it (PUT …/item/{path}) or delete it.
import {api} from '../lib/api.js';
import {h} from '../lib/dom.js';
import {flash} from '../lib/flash.js';
import {allows, notAllowed} from '../lib/access_rules.js';
import {busy, crumbs, deletePanel, errorBox, field, loadPage, uid} from '../lib/admin.js';
import {getStore, jsonBox, parseJson, pretty, storeApi, storeCrumbs, storeHash} from './jsonstore_parts.js';

export async function render(main, params, query) {
  const {org, store} = params;
  const itemPath = query.path || '';
  const url = storeApi(org, store, 'item', ...itemPath.split('/'));
  await loadPage(main, 'jsonstore-item', `${itemPath} · ${store}`, async () => {
    main.append(crumbs(...storeCrumbs(org), [store, storeHash(org, store)], [itemPath]),
      h('h1', {}, itemPath));
    if (!itemPath) throw new Error('No item path given.');
    const [s, value] = await Promise.all([getStore(org, store), api('GET', url)]);
    if (value === null) throw Object.assign(new Error(`The JSON store "${store}" has no item at "${itemPath}".`), {status: 404});
    if (!allows(s.yourAccess, 'WRITER')) {
      main.append(h('pre', {class: 'json', 'data-test': 'item-json', tabindex: 0, 'aria-label': 'The item'}, pretty(value)),
        notAllowed('item-not-allowed', 'Changing this item', 'WRITER', s.yourAccess));
      return;
    }
    main.append(editForm(url, value), deletePanel('item-delete', 'Delete item', `Delete the item "${itemPath}"?`, async () => {
      await api('DELETE', url);
      flash(`Item "${itemPath}" deleted.`);
      location.hash = storeHash(org, store);
    }));
  });
}

function editForm(url, value) {
  const box = jsonBox('item-json', pretty(value), {rows: Math.min(30, Math.max(6, pretty(value).split('\n').length + 1))});
  const result = errorBox('item-save-result');
  const submit = h('button', {type: 'submit', 'data-test': 'item-save'}, 'Save');
  const titleId = uid('item');
  const form = h('form', {'aria-labelledby': titleId, 'data-test': 'item-form'},
    h('h2', {id: titleId}, 'Data'),
    field('JSON', box, 'A JSON object; saving replaces the whole item.'),
    result.el, h('p', {}, submit));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    busy(submit, result, async () => {
      const v = parseJson(box.value, 'The item');
      await api('PUT', url, {json: v});
      box.value = pretty(v);
      result.ok('Saved.');
    });
  });
  return h('div', {class: 'panel'}, form);
}
